using System.Net;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>Who may use the HTTP API: loopback by default, a key when exposed, never a foreign site.</summary>
public sealed class HttpSecurityTests
{
    [Fact]
    public void ListenerBoundBeyondLoopbackWithoutAKeyRefusesToStart()
    {
        var (exitCode, output) = ServerProcess.RunUntilExit("--http-bind", "0.0.0.0");
        Assert.Equal(1, exitCode);
        Assert.Contains("exposes the HTTP API beyond loopback with no way to log in: set http-api-key (a machine credential), requirepass or ACL users with passwords", output);
    }

    [Fact]
    public void ListenerBoundBeyondLoopbackWithUsersButNoKeyStartsAndAsksForALogin()
    {
        using var server = ServerProcess.Start("--http-bind", "0.0.0.0", "--user", "ops on >ops-pw-5 +@all ~* &*");
        using var anonymous = new ApiClient(server.HttpPort);
        anonymous.AssertAsksForCredentials("/api/info");
        // The default user has no password here, and nopass is no HTTP login: only the user's password opens it.
        Assert.Equal(System.Net.HttpStatusCode.Unauthorized, anonymous.StatusOf(HttpMethod.Get, "/api/info", ("Authorization", "Basic " + Convert.ToBase64String("default:x"u8.ToArray()))));
        Assert.Equal(System.Net.HttpStatusCode.OK, anonymous.StatusOf(HttpMethod.Get, "/api/info", ("Authorization", "Basic " + Convert.ToBase64String("ops:ops-pw-5"u8.ToArray()))));
    }

    [Fact]
    public async Task ListenerBoundBeyondLoopbackNeedsTheKeyOnEveryEndpoint()
    {
        using var server = ServerProcess.Start("--http-bind", "0.0.0.0", "--http-api-key", "exposed-key");
        using var anonymous = new ApiClient(server.HttpPort);
        foreach (string path in new[] { "/api/info", "/api/threads", "/api/clients", "/api/history", "/api/debug/package", "/metrics", "/api/config", "/api/log" })
            anonymous.AssertAsksForCredentials(path);
        using (var wrong = new ApiClient(server.HttpPort, "not-the-key"))
        using (var response = await wrong.Http.GetAsync("/api/info"))
            Assert.Equal(HttpStatusCode.Unauthorized, response.StatusCode);
        using (var keyed = new ApiClient(server.HttpPort, "exposed-key"))
            Assert.Contains("redis_connected_clients", keyed.GetText("/metrics"));
        Assert.Equal(HttpStatusCode.OK, anonymous.StatusOf(HttpMethod.Get, "/api/info", ("X-Api-Key", "exposed-key")));
    }

    [Fact]
    public void LoopbackListenerRefusesForeignHostNamesAndCrossSiteChanges()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        using (var c = server.Connect())
            Assert.True(c.Call("CLIENT", "ID").Integer > 0);
        // A page that rebinds its own DNS name to 127.0.0.1 still sends its own name as Host.
        Assert.Equal(HttpStatusCode.Forbidden, api.StatusOf(HttpMethod.Get, "/api/info", ("Host", "attacker.example")));

        using var victim = server.Connect();
        long id = victim.Call("CLIENT", "ID").Integer;
        Assert.Equal(HttpStatusCode.Forbidden, api.StatusOf(HttpMethod.Post, $"/api/clients/{id}/kill", ("Origin", "http://attacker.example")));
        Assert.Equal("PONG", victim.Call("PING").Text);

        Assert.Equal(HttpStatusCode.OK, api.StatusOf(HttpMethod.Post, $"/api/clients/{id}/kill", ("Origin", $"http://127.0.0.1:{server.HttpPort}")));
        Assert.True(victim.IsClosedByServer());
    }

    [Fact]
    public async Task MetricsSpeakPrometheusWithExactCommandCounts()
    {
        using var server = ServerProcess.Start();
        using (var c = server.Connect())
        {
            for (int i = 0; i < 37; i++)
                RespAssert.Ok(c.Call("SET", "metrics:" + i, "v"));
            for (int i = 0; i < 11; i++)
                c.Call("GET", "metrics:missing");
        }
        using var api = new ApiClient(server.HttpPort);
        using var response = await api.Http.GetAsync("/metrics");
        Assert.Equal("text/plain", response.Content.Headers.ContentType?.MediaType);
        string text = await response.Content.ReadAsStringAsync();
        Assert.Contains("# TYPE redis_commands_total counter", text);
        Assert.Contains("redis_commands_total{cmd=\"set\"} 37\n", text);
        Assert.Contains("redis_commands_total{cmd=\"get\"} 11\n", text);
        Assert.Contains("redis_keyspace_misses_total 11\n", text);
        Assert.Contains("redis_db_keys{db=\"db0\"} 37\n", text);
        Assert.Contains("# TYPE redis_memory_used_bytes gauge", text);
        Assert.Contains("dotnet_gc_collections_total", text);
        // Every sample line is "name{labels} value" with a number Prometheus can parse.
        foreach (string line in text.Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            if (line.StartsWith('#'))
                continue;
            string value = line[(line.LastIndexOf(' ') + 1)..];
            Assert.True(value is "NaN" or "+Inf" or "-Inf" || double.TryParse(value, System.Globalization.CultureInfo.InvariantCulture, out _), line);
        }
    }
}
