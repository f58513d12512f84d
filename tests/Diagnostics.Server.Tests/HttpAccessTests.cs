using System.Net;
using System.Net.Http.Headers;
using System.Text.RegularExpressions;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Access is decided on the routed endpoint, not on how its path is spelled: every route the server
/// serves declares what it needs, and no spelling of a guarded route gets in without it. With
/// requirepass set, the API and the studio need it on loopback too.
/// </summary>
public sealed partial class HttpAccessTests
{
    private const string Password = "access-test-password";

    [Fact]
    public void MonitorIngestRefusesEverySpellingOfItsPathWithoutTheToken()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        string batch = System.Text.Json.JsonSerializer.Serialize(
            new MonitorBatch { Status = new MonitorStatus { ServerPid = server.Pid, MonitorPid = 1, Host = "h", Platform = "linux", Version = "forged" } },
            ContractsJson.Default.MonitorBatch);
        var variants = Spellings(MonitorAnnouncement.IngestPath).ToList();
        foreach (string path in variants)
        {
            using var response = api.Send(HttpMethod.Post, path, batch);
            Assert.True(response.StatusCode == HttpStatusCode.Unauthorized, $"POST {path} without the token answered {(int)response.StatusCode}");
        }
        var report = api.Get("/api/monitor", ContractsJson.Default.MonitorReport);
        Assert.Equal(0, report.Batches);
        Assert.Equal(variants.Count, report.RejectedBatches);
    }

    [Fact]
    public void EveryGuardedRouteRefusesEverySpellingWithoutItsCredential()
    {
        using var server = ServerProcess.Start("--requirepass", Password);
        using var keyed = new ApiClient(server.HttpPort, Password);
        using var anonymous = new ApiClient(server.HttpPort);
        // The server's own list of its routes, so a route added later is covered without editing this test.
        var routes = keyed.GetText("/api/endpoints").Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Contains("GET /api/slowlog Operator watch slowlog", routes);
        Assert.Contains("GET /api/replication Operator watch", routes);
        Assert.Contains($"POST {MonitorAnnouncement.IngestPath} MonitorToken", routes);
        Assert.Contains("GET /metrics Operator watch", routes);
        int tried = 0;
        foreach (string line in routes)
        {
            var (methods, route, credential) = line.Split(' ', 4) is [var m, var r, var k, ..] ? (m, r, k) : throw new InvalidOperationException($"not 'METHODS ROUTE CREDENTIAL [PERMISSIONS]': {line}");
            Assert.True(credential is "Operator" or "MonitorToken" or "None", $"{line}: every endpoint must declare its credential");
            if (credential == "None")
            {
                Assert.True(route == "/login" || route.StartsWith("/_framework/", StringComparison.Ordinal) || route.StartsWith("/_content/", StringComparison.Ordinal)
                    || route == "/{**path:file}" || !route.StartsWith("/api", StringComparison.OrdinalIgnoreCase) && route.Contains('.'),
                    $"{line}: only the login page and static files may be open");
                continue;
            }
            string method = methods == "*" ? "GET" : methods.Split(',')[0];
            foreach (string path in Spellings(Concrete(route)))
            {
                using var response = anonymous.Send(new HttpMethod(method), path, method != "GET" ? "{}" : null);
                Assert.True(response.StatusCode == HttpStatusCode.Unauthorized, $"{method} {path} ({line}) without credentials answered {(int)response.StatusCode}");
                tried++;
            }
        }
        Assert.True(tried > 60, $"only {tried} requests tried");
        // Refusals without any secret are not guesses: nothing was charged to this address.
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", Password));
        Assert.Equal(0, InfoFields.GetInt64(c, "stats", "http_auth_failures"));
    }

    [Fact]
    public async Task RequirepassGuardsTheApiAndTheStudioOnLoopback()
    {
        using var server = ServerProcess.Start("--requirepass", Password, "--slowlog-log-slower-than", "0");
        using (var c = server.Connect())
        {
            RespAssert.Ok(c.Call("AUTH", Password));
            RespAssert.Ok(c.Call("SET", "customer:42", "secret value"));
        }
        using var anonymous = new ApiClient(server.HttpPort);
        foreach (string path in new[] { "/api/slowlog", "/api/clients", "/api/keyspace", "/api/info", "/api/config", "/api/debug/package", "/metrics", "/" })
            anonymous.AssertAsksForCredentials(path);
        // A browser is sent to the login page.
        var page = new HttpRequestMessage(HttpMethod.Get, "/clients");
        page.Headers.Accept.Add(new MediaTypeWithQualityHeaderValue("text/html"));
        using (var noRedirect = new HttpClient(new HttpClientHandler { AllowAutoRedirect = false }) { BaseAddress = anonymous.Http.BaseAddress })
        using (var response = await noRedirect.SendAsync(page))
        {
            Assert.Equal(HttpStatusCode.Redirect, response.StatusCode);
            Assert.Equal("/login?returnUrl=%2Fclients", response.Headers.Location?.OriginalString);
        }
        // The password opens the API as a bearer (a Prometheus scraper's bearer_token) or as X-Api-Key.
        using (var keyed = new ApiClient(server.HttpPort, Password))
        {
            Assert.Contains("customer:42", keyed.GetText("/api/slowlog"));
            Assert.Contains("redis_connected_clients", keyed.GetText("/metrics"));
        }
        Assert.Equal(HttpStatusCode.OK, anonymous.StatusOf(HttpMethod.Get, "/api/clients", ("X-Api-Key", Password)));
    }

    [Fact]
    public void LoopbackServerWithoutPasswordStaysOpen()
    {
        using var server = ServerProcess.Start();
        using var anonymous = new ApiClient(server.HttpPort);
        Assert.StartsWith("[", anonymous.GetText("/api/slowlog"));
        Assert.Contains("redis_connected_clients", anonymous.GetText("/metrics"));
    }

    /// <summary>The path as routed, and as an attacker may spell it: upper case, mixed case, a trailing slash.</summary>
    private static IEnumerable<string> Spellings(string path)
    {
        string mixed = string.Concat(path.Select((ch, i) => i % 2 == 0 ? char.ToUpperInvariant(ch) : char.ToLowerInvariant(ch)));
        foreach (string spelling in new[] { path, path.ToUpperInvariant(), mixed }.Distinct())
        {
            yield return spelling;
            if (!spelling.EndsWith('/'))
                yield return spelling + "/";
        }
    }

    /// <summary>A request path for a route pattern: each parameter becomes 1 ("/api/clients/{id:long}/kill" -> "/api/clients/1/kill").</summary>
    private static string Concrete(string route) => RouteParameter().Replace(route, "1");

    [GeneratedRegex(@"\{[^}]*\}")]
    private static partial Regex RouteParameter();
}
