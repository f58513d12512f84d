using System.IO.Compression;
using Diagnostics.Contracts;
using Diagnostics.Doctor;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A finding as the live server's doctor reports it, and as the same rules report it offline from
/// a debug package taken right after: what an operator reads live must be in the package too.
/// </summary>
public static class LiveAndOffline
{
    /// <summary>Packages taken before giving up: a package is one instant, and a condition that comes
    /// and goes (threads waiting between two DEBUG SLEEPs) may be absent from the first one.</summary>
    private const int PackageAttempts = 5;

    public static (Finding Live, Finding Offline) Expect(ServerProcess server, string rule, Func<Finding, bool>? until = null, string? what = null, int timeoutMs = 10_000)
    {
        var live = DoctorProbe.Expect(server, rule, timeoutMs, until, what);
        using var api = new ApiClient(server.HttpPort);
        DoctorReport? report = null;
        for (int attempt = 0; attempt < PackageAttempts; attempt++)
        {
            byte[] package = api.Http.GetByteArrayAsync("/api/debug/package").GetAwaiter().GetResult();
            using var zip = new ZipArchive(new MemoryStream(package), ZipArchiveMode.Read);
            report = DoctorRules.Examine(PackageReader.ReadInput(zip));
            var offline = report.Findings.FirstOrDefault(f => f.Rule == rule && (until is null || until(f)));
            if (offline is not null)
                return (live, offline);
            if (until is null)
                break; // the finding itself is missing: another instant would not excuse that
        }
        Assert.Fail($"the debug package's doctor did not report {rule} ({what}) in {PackageAttempts} packages; offline the last reported: "
            + string.Join("; ", report!.Findings.Select(f => $"{f.Rule}: {f.Seen}")));
        throw new InvalidOperationException("unreachable");
    }
}
