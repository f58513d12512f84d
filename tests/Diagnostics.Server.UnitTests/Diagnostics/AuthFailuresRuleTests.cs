using Diagnostics.Contracts;
using Diagnostics.Doctor;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The auth-failures rule counts failures as each sample's rate times the time it covered: a
/// loaded machine samples late, and a sum of per-second rates then counted a fraction of them
/// (12 failures over two 2-second samples summed to 6, under the rule's 10).
/// </summary>
public sealed class AuthFailuresRuleTests
{
    [Fact]
    public void FailuresInLateSamplesAreAllCounted()
    {
        var finding = Assert.Single(Examine(intervalSeconds: 2, httpPerSecond: 3).Findings, f => f.Rule == "auth-failures");
        Assert.Equal("12", finding.Evidence["http_auth_failures_last_minute"]);
    }

    [Fact]
    public void FewerThanTenFailuresAreNoSpike()
        => Assert.DoesNotContain(Examine(intervalSeconds: 1, httpPerSecond: 4).Findings, f => f.Rule == "auth-failures");

    /// <summary>Two samples with <paramref name="httpPerSecond"/> HTTP failures a second each, <paramref name="intervalSeconds"/> apart.</summary>
    private static DoctorReport Examine(double intervalSeconds, double httpPerSecond)
    {
        long now = 1_795_000_000_000;
        long step = (long)(intervalSeconds * 1000);
        var history = new MetricHistory
        {
            IntervalMillis = 1000,
            Times = [now - step, now],
            Series = new()
            {
                [MetricNames.HttpAuthFailuresPerSecond] = [httpPerSecond, httpPerSecond],
                [MetricNames.AuthFailuresPerSecond] = [0, 0],
                [MetricNames.SampleIntervalSeconds] = [intervalSeconds, intervalSeconds],
            },
        };
        return DoctorRules.Examine(new DoctorInput { TakenUnixMs = now, History = history });
    }
}
