using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// Failed authentications spiked: someone may be guessing the password or the API key (over RESP
/// with AUTH, over HTTP with keys, bearers or the login form). A person mistyping fails a few times;
/// a guesser fails many times a minute.
/// </summary>
public sealed class AuthFailuresRule : IDoctorRule
{
    private const int WindowSeconds = 60;
    private const double SpikeFailures = 10;

    public string Id => "auth-failures";
    public string Area => "security";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        // Counted as each sample's rate times the time it covered: on a loaded machine samples come
        // late, and a sum of rates then counted a fraction of the failures.
        double http = input.RecentCount(MetricNames.HttpAuthFailuresPerSecond, WindowSeconds);
        double resp = input.RecentCount(MetricNames.AuthFailuresPerSecond, WindowSeconds);
        if (http + resp < SpikeFailures)
            yield break;
        long rateLimited = input.InfoInt64("stats", "http_auth_rate_limited");
        // INFO acl's worst sources, RESP and HTTP: "addr=10.0.0.5,user=admin,count=212,first=...,last=...".
        var sources = new List<string>();
        for (int i = 0; i < 3 && input.InfoField("acl", $"auth_failure_source_{i}") is { } line; i++)
        {
            var parts = line.Split(',').Select(p => p.Split('=', 2)).Where(p => p.Length == 2).ToDictionary(p => p[0], p => p[1]);
            sources.Add($"{parts.GetValueOrDefault("addr", "?")} as '{parts.GetValueOrDefault("user", "?")}' ({parts.GetValueOrDefault("count", "?")} failures)");
        }
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = "Authentication failures spiked",
            Seen = $"{Human.Count(http + resp)} failed authentications in the last {WindowSeconds} s ({Human.Count(resp)} AUTH over RESP, {Human.Count(http)} API keys, bearers or logins over HTTP); "
                + $"{Human.Count(rateLimited)} HTTP requests were refused since start for failing too often."
                + (sources.Count > 0 ? $" Most failures since start came from {string.Join(", ", sources)}." : ""),
            Advice = "Someone may be guessing a password or the API key. INFO acl and ACL LOG name the addresses failures came from and the users they tried (the log names HTTP ones too): "
                + "block them, fix a client configured with an old password, and use a long random requirepass and http-api-key.",
            Evidence = new()
            {
                ["http_auth_failures_last_minute"] = http.ToString("0", CultureInfo.InvariantCulture),
                ["acl_access_denied_auth_last_minute"] = resp.ToString("0", CultureInfo.InvariantCulture),
                ["http_auth_failures"] = input.InfoInt64("stats", "http_auth_failures").ToString(CultureInfo.InvariantCulture),
                ["acl_access_denied_auth"] = input.InfoInt64("stats", "acl_access_denied_auth").ToString(CultureInfo.InvariantCulture),
                ["http_auth_rate_limited"] = rateLimited.ToString(CultureInfo.InvariantCulture),
                ["auth_failure_source_0"] = input.InfoField("acl", "auth_failure_source_0") ?? "",
            },
            Chart = http >= resp ? MetricNames.HttpAuthFailuresPerSecond : MetricNames.AuthFailuresPerSecond,
        };
    }
}
