using Diagnostics.Contracts;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>Asks a real server's doctor (GET /api/doctor), as the studio and an operator's script do.</summary>
public static class DoctorProbe
{
    /// <summary>The doctor's report; <paramref name="secret"/> is the password or API key when the server has one.</summary>
    public static DoctorReport Examine(ServerProcess server, string? secret = null)
    {
        using var api = new ApiClient(server.HttpPort, secret);
        return api.Get("/api/doctor", ContractsJson.Default.DoctorReport);
    }

    /// <summary>
    /// Waits until the doctor reports <paramref name="rule"/> (with a finding that satisfies
    /// <paramref name="until"/>, when given); the finding says what was seen and what to do.
    /// </summary>
    public static Finding Expect(ServerProcess server, string rule, int timeoutMs = 10_000, Func<Finding, bool>? until = null, string? what = null, string? secret = null)
    {
        Finding? found = null;
        DoctorReport? last = null;
        Poll.Until(() => (found = Find(last = Examine(server, secret), rule, until)) is not null,
            () => (what ?? $"the doctor to report {rule}") + "; it last reported: "
                + (last is null ? "nothing" : string.Join("; ", last.Findings.Select(f => $"{f.Rule}: {f.Seen}")) is { Length: > 0 } seen ? seen : "no findings"),
            timeoutMs);
        Assert.False(string.IsNullOrWhiteSpace(found!.Seen));
        Assert.False(string.IsNullOrWhiteSpace(found.Advice));
        Assert.False(string.IsNullOrWhiteSpace(found.Title));
        return found;
    }

    /// <summary>Waits until the doctor no longer reports <paramref name="rule"/>, once its condition has passed.</summary>
    public static void ExpectGone(ServerProcess server, string rule, string what, int timeoutMs = 10_000)
        => Poll.Until(() => Find(Examine(server), rule) is null, what, timeoutMs);

    public static void AssertAbsent(ServerProcess server, string rule)
        => Assert.True(Find(Examine(server), rule) is null, $"the doctor reported {rule} before the condition was induced");

    /// <summary>The first finding of <paramref name="rule"/> (one rule can report several, one per latency event say) that satisfies <paramref name="until"/>.</summary>
    private static Finding? Find(DoctorReport report, string rule, Func<Finding, bool>? until = null)
    {
        foreach (var finding in report.Findings)
            if (finding.Rule == rule && (until is null || until(finding)))
                return finding;
        return null;
    }
}
