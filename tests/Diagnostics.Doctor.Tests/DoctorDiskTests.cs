using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The doctor's persistence rules fired by real disks misbehaving under a real server: a device
/// whose fsync is slow (a FUSE pass-through that delays fsync), and a device that fills up (a
/// small tmpfs).
/// </summary>
public sealed class DoctorDiskTests
{
    [Fact]
    public void SlowFsyncUnderAppendfsyncAlwaysIsAWarning()
    {
        using var disk = new SlowFsyncMount(delayMs: 80);
        using var server = ServerProcess.Start("--dir", disk.Path, "--appendonly", "yes", "--appendfsync", "always");
        using var c = server.Connect();
        for (int i = 0; i < 12; i++)
            RespAssert.Ok(c.Call("SET", "durable:" + i, "v"));

        var (finding, offline) = LiveAndOffline.Expect(server, "fsync-latency");
        Assert.Equal(FindingSeverity.Warning, finding.Severity);
        Assert.Equal("persistence", finding.Area);
        Assert.Contains("appendfsync always", finding.Seen);
        // Every acknowledged write waited for one fsync of at least 80 ms: the 99th percentile's
        // power-of-two bucket is 2^17 µs (131 ms); the base file's fsync at start adds one or two.
        // 80 ms and more falls in the (65, 131] ms bucket; on a loaded machine an fsync can also
        // wait its turn past 131 ms, into the next one.
        Assert.Contains(finding.Evidence["p99_us"], (string[])["131072", "262144"]);
        Assert.True(long.Parse(finding.Evidence["fsyncs"]) >= 12, $"fsyncs: {finding.Evidence["fsyncs"]}");
        Assert.Equal(MetricNames.FsyncMaxMicros, finding.Chart);
        // The worst is the measured one, not the bucket's bound: at least the mount's 80 ms, and
        // not rounded up to 131 ms (a slower one on a loaded machine is still what was measured).
        long worst = long.Parse(finding.Evidence["max_us"]);
        Assert.True(worst >= 80_000 && worst != 131_072 && worst != 262_144, $"slowest fsync {worst} µs");
        Assert.InRange(long.Parse(finding.Evidence["recent_max_us"]), 80_000, worst);
        // It names the file (one of the AOF's files in the slow mount) and the thread.
        Assert.StartsWith(disk.Path, finding.Evidence["file"]);
        Assert.Contains(".aof", finding.Evidence["file"]);
        Assert.Contains(finding.Evidence["file"], finding.Seen);
        Assert.Matches(@"^.+ \(\d+\)$", finding.Evidence["thread"]);
        // The package carries the same figures.
        Assert.Equal(finding.Evidence["max_us"], offline.Evidence["max_us"]);
        Assert.Equal(finding.Evidence["file"], offline.Evidence["file"]);
        Assert.Equal(finding.Evidence["thread"], offline.Evidence["thread"]);
    }

    [Fact]
    public void FastFsyncIsNotReported()
    {
        using var dir = new TempDirectory();
        using var server = ServerProcess.Start("--dir", dir.Path, "--appendonly", "yes", "--appendfsync", "always");
        using var c = server.Connect();
        for (int i = 0; i < 12; i++)
            RespAssert.Ok(c.Call("SET", "durable:" + i, "v"));
        Assert.True(InfoFields.GetInt64(c, "persistence", "aof_enabled") == 1);
        DoctorProbe.AssertAbsent(server, "fsync-latency");
    }

    [Fact]
    public void FullDiskUnderTheAofIsCriticalUntilSpaceIsFreed()
    {
        using var disk = new TmpfsMount("2m", "doctor-disk-full-");
        string filler = Path.Combine(disk.Path, "filler");
        File.WriteAllBytes(filler, new byte[512 * 1024]);
        using var server = ServerProcess.Start("--dir", disk.Path, "--appendonly", "yes", "--appendfsync", "always");
        using var c = server.Connect();
        DoctorProbe.AssertAbsent(server, "aof-write-error");

        // The write whose bytes hit the full disk waits for its reply until they are durable,
        // so the filling client runs on a thread of its own while the test looks at the doctor.
        bool full = false;
        var filling = new Thread(() =>
        {
            using var writer = server.Connect();
            string value = new('f', 8 * 1024);
            for (int i = 0; i < 400 && !Volatile.Read(ref full) && writer.Call("SET", "fill:" + i, value).Text == "OK"; i++)
            {
            }
        }) { IsBackground = true };
        filling.Start();

        var finding = DoctorProbe.Expect(server, "aof-write-error");
        Volatile.Write(ref full, true);
        Assert.Equal(FindingSeverity.Critical, finding.Severity);
        Assert.Equal("err", finding.Evidence["aof_last_write_status"]);
        Assert.Contains("No space left on device", finding.Evidence["aof_last_write_error"]);
        RespAssert.ErrorStartsWith("MISCONF Errors writing to the AOF file: No space left on device", c.Call("SET", "refused", "x"));

        // The server retries every second; with room again the writes resume and the finding goes.
        File.Delete(filler);
        DoctorProbe.ExpectGone(server, "aof-write-error", "the finding to go once the disk has room", timeoutMs: 15_000);
        RespAssert.Ok(c.Call("SET", "after", "room"));
        Assert.True(filling.Join(15_000), "the write waiting on the full disk was not answered once there was room");
    }
}
