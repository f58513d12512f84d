using System.Diagnostics;
using System.Net;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Guessing the password or the API key over HTTP is slowed per source address: ten failures, then
/// one more every six seconds; an address over its budget gets 429 with Retry-After for any
/// secret, right or wrong, until then. Failures are counted (INFO, /metrics, the doctor), failed
/// AUTH over RESP too.
/// </summary>
public sealed class HttpAuthRateLimitTests
{
    private const string Password = "rate-limit-test-password";
    private const int FailuresAllowed = 10;
    private const double RefillSeconds = 6;

    [Fact]
    public async Task WrongSecretsAreRateLimitedPerAddressCountedAndReported()
    {
        using var server = ServerProcess.Start("--requirepass", Password);
        using var wrong = new ApiClient(server.HttpPort, "not-the-password");
        var clock = Stopwatch.StartNew();
        var answers = await Task.WhenAll(Enumerable.Range(0, 200).Select(async _ =>
        {
            using var response = await wrong.Http.GetAsync("/api/info");
            return (response.StatusCode, RetryAfter: response.Headers.RetryAfter?.Delta);
        }));
        double seconds = clock.Elapsed.TotalSeconds;
        int refused = answers.Count(a => a.StatusCode == HttpStatusCode.Unauthorized);
        int limited = answers.Count(a => a.StatusCode == (HttpStatusCode)429);
        Assert.Equal(200, refused + limited);
        // Ten in the burst, and one more for every refill period the burst itself took on a slow machine.
        Assert.InRange(refused, FailuresAllowed, FailuresAllowed + (int)(seconds / RefillSeconds) + 1);
        Assert.All(answers.Where(a => a.StatusCode == (HttpStatusCode)429), a => Assert.InRange(a.RetryAfter!.Value.TotalSeconds, 1, RefillSeconds));

        // Over budget, the right password is refused unseen too: otherwise guessing would go on with only the misses refused.
        using var right = new ApiClient(server.HttpPort, Password);
        using (var response = await right.Http.GetAsync("/api/info"))
            Assert.Equal((HttpStatusCode)429, response.StatusCode);
        // So is the studio's login form, before its antiforgery token or secret is looked at.
        using (var response = await right.Http.PostAsync("/login", new FormUrlEncodedContent(new Dictionary<string, string> { ["Secret"] = Password })))
            Assert.Equal((HttpStatusCode)429, response.StatusCode);

        using (var c = server.Connect())
        {
            for (int i = 0; i < 3; i++)
                RespAssert.ErrorStartsWith("WRONGPASS", c.Call("AUTH", "guess-" + i));
            RespAssert.Ok(c.Call("AUTH", Password));
            Assert.Equal(refused, InfoFields.GetInt64(c, "stats", "http_auth_failures"));
            Assert.Equal(limited + 2, InfoFields.GetInt64(c, "stats", "http_auth_rate_limited"));
            Assert.Equal(3, InfoFields.GetInt64(c, "stats", "acl_access_denied_auth"));
        }

        // The budget refills: the right password works again once Retry-After has passed.
        Poll.Until(() =>
        {
            using var response = right.Http.GetAsync("/api/info").GetAwaiter().GetResult();
            return response.StatusCode == HttpStatusCode.OK;
        }, "the password to be accepted after the refill", 15_000);
        string metrics = right.GetText("/metrics");
        Assert.Contains($"diagnostics_auth_failures_total{{listener=\"http\"}} {refused}\n", metrics);
        Assert.Contains("diagnostics_auth_failures_total{listener=\"resp\"} 3\n", metrics);
        // 30 s: the doctor reads the 1 Hz history, which a loaded machine samples late.
        var finding = DoctorProbe.Expect(server, "auth-failures", timeoutMs: 30_000, secret: Password);
        Assert.Contains("failed authentications in the last 60 s", finding.Seen);
    }
}
