using Diagnostics.Contracts;
using Diagnostics.Doctor;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// The two rules over the kernel's view, on monitor reports as a package would carry them: where
/// each fires and where it stays quiet. (The unaccounted-writes rule is also fired by a real writer
/// on a real server in <see cref="MonitorDoctorTests"/>; a file system slow to fsync on a fast
/// disk, which fsync-slower-than-disk looks for, cannot be made on demand here: FUSE has no disk.)
/// </summary>
public sealed class KernelRuleTests
{
    [Fact]
    public void FsyncSlowInTheFileSystemButNotOnTheDiskIsReported()
    {
        var report = Examine(Monitor(fsyncBucket: 15, fsyncCalls: 100, deviceBucket: 9));
        var finding = Assert.Single(report.Findings, f => f.Rule == "fsync-slower-than-disk");
        Assert.Equal(FindingSeverity.Warning, finding.Severity);
        Assert.Equal("32768", finding.Evidence["fsync_p99_usec"]);
        Assert.Equal("512", finding.Evidence["device_p99_usec"]);
    }

    [Theory]
    [InlineData(15, 100, 14)] // the disk itself is slow: nothing to blame on the file system
    [InlineData(12, 100, 5)]  // fsync p99 4 ms: not slow
    [InlineData(15, 10, 5)]   // too few calls to say
    public void FsyncThatTheDiskExplainsOrThatIsFastOrRareIsNot(int fsyncBucket, int fsyncCalls, int deviceBucket)
        => Assert.DoesNotContain(Examine(Monitor(fsyncBucket, fsyncCalls, deviceBucket)).Findings, f => f.Rule == "fsync-slower-than-disk");

    [Fact]
    public void KernelRulesSayNothingWithoutAnAttachedMonitor()
    {
        var detached = Monitor(15, 100, 5) with { Attached = false, Comparison = [new IoComparison(30, "console", 0, 50 << 20, 0, 0, 0, 0, 0, 0, 0, 0)] };
        var findings = Examine(detached).Findings;
        Assert.DoesNotContain(findings, f => f.Rule is "fsync-slower-than-disk" or "unaccounted-writes");
        Assert.DoesNotContain(Examine(null).Findings, f => f.Rule is "fsync-slower-than-disk" or "unaccounted-writes");
    }

    [Fact]
    public void UnaccountedWritesNeedAMegabyteAndATenthOfWhatTheKernelSaw()
    {
        var monitor = Monitor(5, 0, 5) with
        {
            Comparison =
            [
                new IoComparison(21, "aof writer", 100 << 20, (100 << 20) + (5 << 20), 0, 0, 0, 0, 0, 0, 0, 0), // 5 MB over 105: under a tenth
                new IoComparison(22, "shard executor 0", 0, 512 << 10, 0, 0, 0, 0, 0, 0, 0, 0),                  // half a megabyte
                new IoComparison(30, "console", 1 << 20, 20 << 20, 0, 0, 0, 0, 0, 0, 0, 0),                        // 19 MB unaccounted
            ],
            RecentEvents = [new KernelIoEvent(0, 30, "write", "/var/log/server.log", 4096, 1000)],
        };
        var finding = Assert.Single(Examine(monitor).Findings, f => f.Rule == "unaccounted-writes");
        Assert.Equal("30", finding.Evidence["thread"]);
        Assert.Contains("/var/log/server.log", finding.Seen);
    }

    private static DoctorReport Examine(MonitorReport? monitor) =>
        DoctorRules.Examine(new DoctorInput { TakenUnixMs = 1_795_000_000_000, Monitor = monitor });

    private static MonitorReport Monitor(int fsyncBucket, int fsyncCalls, int deviceBucket) => new()
    {
        Attached = true,
        State = "attached",
        ByTarget =
        [
            new KernelIoAggregate(0, "/data/appendonlydir/appendonly.aof.1.incr.aof", "file", "fsync", "fdatasync", fsyncCalls, 0, 0, 0, Bucket(fsyncBucket, fsyncCalls)),
            new KernelIoAggregate(0, "vda", "device", "disk_write", "block_rq", 500, 8 << 20, 0, 0, Bucket(deviceBucket, 500)),
        ],
    };

    private static long[] Bucket(int index, long count)
    {
        var buckets = new long[MicrosecondBuckets.Count];
        buckets[index] = count;
        return buckets;
    }
}
