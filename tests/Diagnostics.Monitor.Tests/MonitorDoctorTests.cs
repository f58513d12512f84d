using System.Globalization;
using System.IO.Compression;
using Diagnostics.Contracts;
using Diagnostics.Doctor;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// The doctor with the kernel's view: a real writer the server does not account for, seen by the
/// real monitor, reported live and again offline from a debug package that carries monitor.json.
/// </summary>
[Collection(MonitorCollection.Name)]
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class MonitorDoctorTests
{
    [Fact]
    public async Task WritesTheServerDidNotAccountForAreReportedLiveAndFromAPackage()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        using var monitor = MonitorProcess.Start(["--pid", server.Pid.ToString(CultureInfo.InvariantCulture), "--no-runtime", "--no-block"]);
        MonitorProbe.WaitAttached(api, monitor);
        DoctorProbe.AssertAbsent(server, "unaccounted-writes");

        // The debug package is built into a temporary file by the server: real disk writes that
        // the server's disk accounting (its AOF and manifest I/O) does not cover.
        byte[] package = [];
        Finding? finding = null;
        for (int i = 0; i < 40 && finding is null; i++)
        {
            package = await api.Http.GetByteArrayAsync("/api/debug/package");
            Thread.Sleep(200);
            finding = DoctorProbe.Examine(server).Findings.FirstOrDefault(f => f.Rule == "unaccounted-writes");
        }
        finding ??= DoctorProbe.Expect(server, "unaccounted-writes");
        Assert.Equal(FindingSeverity.Warning, finding.Severity);
        Assert.True(long.Parse(finding.Evidence["kernel_write_bytes"], CultureInfo.InvariantCulture) >= 1 << 20);
        Assert.Equal("0", finding.Evidence["server_write_bytes"]);

        package = await api.Http.GetByteArrayAsync("/api/debug/package");
        using var zip = new ZipArchive(new MemoryStream(package), ZipArchiveMode.Read);
        var input = PackageReader.ReadInput(zip);
        Assert.True(input.Monitor?.Attached, "the package's monitor.json does not show the monitor attached");
        Assert.Equal(monitor.Pid, input.Monitor!.Status!.MonitorPid);
        Assert.Contains(DoctorRules.Examine(input).Findings, f => f.Rule == "unaccounted-writes");
    }
}
