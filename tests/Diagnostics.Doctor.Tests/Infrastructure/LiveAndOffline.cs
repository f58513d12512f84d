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
    public static (Finding Live, Finding Offline) Expect(ServerProcess server, string rule, Func<Finding, bool>? until = null, string? what = null, int timeoutMs = 10_000)
    {
        var live = DoctorProbe.Expect(server, rule, timeoutMs, until, what);
        using var api = new ApiClient(server.HttpPort);
        byte[] package = api.Http.GetByteArrayAsync("/api/debug/package").GetAwaiter().GetResult();
        using var zip = new ZipArchive(new MemoryStream(package), ZipArchiveMode.Read);
        var report = DoctorRules.Examine(PackageReader.ReadInput(zip));
        var offline = report.Findings.FirstOrDefault(f => f.Rule == rule && (until is null || until(f)));
        Assert.True(offline is not null, $"the debug package's doctor did not report {rule} ({what}); offline it reported: "
            + string.Join("; ", report.Findings.Select(f => $"{f.Rule}: {f.Seen}")));
        return (live, offline);
    }
}
