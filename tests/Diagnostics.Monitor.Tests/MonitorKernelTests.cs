using System.Globalization;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// The monitor as root against the real kernel: a real server, the real monitor process attached
/// by pid, and what the kernel reported checked against what can be measured independently (the
/// AOF file's growth on disk, the server's own per-connection counters).
/// </summary>
[Collection(MonitorCollection.Name)]
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class MonitorKernelTests
{
    [Fact]
    public void AofWritesTheKernelSawAddUpToTheFilesGrowthAndFsyncsAppear()
    {
        using var dir = new TempDirectory();
        using var server = ServerProcess.Start("--appendonly", "yes", "--appendfsync", "always", "--dir", dir.Path);
        using var client = server.Connect();
        RespAssert.Ok(client.Call("SET", "before", "attach"));
        using var monitor = MonitorProcess.Start(["--pid", server.Pid.ToString(CultureInfo.InvariantCulture), "--no-runtime"]);
        using var api = new ApiClient(server.HttpPort);
        MonitorProbe.WaitAttached(api, monitor);
        long before = AofBytes(dir);

        for (int i = 0; i < 300; i++)
            RespAssert.Ok(client.Call("SET", "key:" + i, new string('v', i % 97)));
        long growth = AofBytes(dir) - before;
        Assert.True(growth > 300 * 20, $"the AOF grew by only {growth} bytes");

        MonitorReport report = null!;
        Poll.Until(() => KernelWrites(report = MonitorProbe.Report(api), dir.AppendDirectory) == growth,
            () => $"the kernel's writes on the AOF to add up to its growth of {growth} bytes (last seen {KernelWrites(report, dir.AppendDirectory)}):\n{monitor.Output}\n{MonitorProbe.Describe(report)}", 15_000);
        long fsyncs = 0;
        foreach (var row in report.ByTarget)
            if (row.Operation == "fsync" && row.Target.StartsWith(dir.AppendDirectory, StringComparison.Ordinal))
                fsyncs += row.Count;
        Assert.True(fsyncs >= 1, "no fsync on the AOF was reported under appendfsync always");
        var syscalls = MonitorProbe.Source(report, "tracefs-syscalls");
        Assert.Equal(0, syscalls.DroppedAtSource);
        Assert.True(report.Status!.Elevated);
    }

    [Fact]
    public void NetworkSendsAndReceivesMatchTheServersPerConnectionCounters()
    {
        using var server = ServerProcess.Start();
        using var monitor = MonitorProcess.Start(["--pid", server.Pid.ToString(CultureInfo.InvariantCulture), "--no-runtime", "--no-block"]);
        using var api = new ApiClient(server.HttpPort);
        MonitorProbe.WaitAttached(api, monitor);

        using var traced = server.Connect();
        RespAssert.Ok(traced.Call("CLIENT", "SETNAME", "traced"));
        for (int i = 0; i < 200; i++)
            RespAssert.Ok(traced.Call("SET", "net:" + i, new string('x', 10 + i)));
        for (int i = 0; i < 200; i++)
            Assert.Equal(10 + i, traced.Call("GET", "net:" + i).Text!.Length);

        // Read the traced connection's counters from another one, once it is idle.
        using var observer = server.Connect();
        var fields = ClientFields(observer, "traced");
        long netIn = long.Parse(fields["tot-net-in"], CultureInfo.InvariantCulture);
        long netOut = long.Parse(fields["tot-net-out"], CultureInfo.InvariantCulture);
        string target = $"tcp {fields["laddr"]} <- {fields["addr"]}";

        (long Received, long Sent) seen = default;
        Poll.Until(() => (seen = SocketBytes(MonitorProbe.Report(api), target)) == (netIn, netOut),
            () => $"the kernel's receive and send bytes on {target} to equal the server's tot-net-in {netIn} and tot-net-out {netOut} (last seen {seen}):\n{monitor.Output}\n{MonitorProbe.Describe(MonitorProbe.Report(api))}\nits latest events:\n{string.Join('\n', MonitorProbe.Report(api).RecentEvents.Where(e => e.Target == target))}", 15_000);
    }

    [Fact]
    public void GcPausesAndAllocationsArriveFromTheRuntime()
    {
        using var server = ServerProcess.StartWithEnvironment(new Dictionary<string, string> { ["DOTNET_GCgen0size"] = "0x10000" });
        using var api = new ApiClient(server.HttpPort);
        using var monitor = MonitorProcess.Start(["--pid", server.Pid.ToString(CultureInfo.InvariantCulture), "--no-block"]);
        MonitorProbe.WaitAttached(api, monitor, source: "eventpipe");

        MonitorReport report = null!;
        using (BackgroundLoad.Command(server.Port, 2, "INFO", "all"))
            Poll.Until(() => (report = MonitorProbe.Report(api)).RecentGcPauses.Count >= 5 && report.TopAllocations.Count > 0,
                $"GC pauses and allocation ticks from the server's runtime:\n{monitor.Output}", 30_000);

        Assert.All(report.RecentGcPauses, pause => Assert.InRange(pause.Generation, 0, 2));
        Assert.Contains(report.RecentGcPauses, pause => pause.PauseMicros > 0);
        Assert.Contains(report.RecentGcPauses, pause => pause.Reason.Length > 0 && pause.Number > 0);
        Assert.All(report.TopAllocations, a => Assert.True(a.Bytes > 0 && a.TypeName.Length > 0));
        var eventPipe = MonitorProbe.Source(report, "eventpipe");
        Assert.True(eventPipe.TotalEvents > 0);
        Assert.Equal(0, eventPipe.DroppedAtSource);
    }

    private static Dictionary<string, string> ClientFields(RespClient observer, string name)
    {
        foreach (string line in observer.Call("CLIENT", "LIST").Text!.Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            var fields = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (string pair in line.Trim().Split(' '))
            {
                int equals = pair.IndexOf('=');
                if (equals > 0)
                    fields[pair[..equals]] = pair[(equals + 1)..];
            }
            if (fields.GetValueOrDefault("name") == name)
                return fields;
        }
        throw new InvalidOperationException($"no client named {name} in CLIENT LIST");
    }

    private static (long, long) SocketBytes(MonitorReport report, string target)
    {
        long received = 0, sent = 0;
        foreach (var row in report.ByTarget)
        {
            if (row.Target != target)
                continue;
            if (row.Operation == "receive")
                received += row.Bytes;
            else if (row.Operation == "send")
                sent += row.Bytes;
        }
        return (received, sent);
    }

    private static long KernelWrites(MonitorReport? report, string appendDirectory)
    {
        long bytes = 0;
        if (report is null)
            return -1;
        foreach (var row in report.ByTarget)
            if (row.Operation == "write" && row.Target.StartsWith(appendDirectory + "/", StringComparison.Ordinal))
                bytes += row.Bytes;
        return bytes;
    }

    private static long AofBytes(TempDirectory dir)
    {
        long bytes = 0;
        foreach (string file in Directory.GetFiles(dir.AppendDirectory))
            bytes += new FileInfo(file).Length;
        return bytes;
    }
}
