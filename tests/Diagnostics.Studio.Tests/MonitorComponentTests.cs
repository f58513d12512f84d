using Bunit;
using Diagnostics.Contracts;
using Diagnostics.Studio.Charts;
using Diagnostics.Studio.Pages;
using MemoryPage = Diagnostics.Studio.Pages.Memory;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>The monitor's data on the Disk I/O and Memory pages, with a fixed report.</summary>
public sealed class MonitorComponentTests
{
    private static readonly long[] FastBuckets = Buckets(5, 100);

    [Fact]
    public void DiskIoShowsTheKernelsViewBesideTheServersWithDifferencesHighlighted()
    {
        var source = new FixedStudioSource { MonitorReport = Report() };
        using var context = StudioRendering.Context(source);
        var page = context.Render<DiskIo>(source);

        var status = page.Find(".monitor-status").TextContent;
        Assert.Contains("Monitor attached", status);
        Assert.Contains("tracefs-syscalls", status);
        Assert.Equal("7", page.Find("table.monitor-sources td.warn").TextContent);

        var writer = page.FindAll("table.kernel-compare tbody tr").Single(r => r.TextContent.Contains("aof writer (21)"));
        Assert.Equal("", writer.ClassName ?? "");
        var logger = page.FindAll("table.kernel-compare tbody tr").Single(r => r.TextContent.Contains("console (30)"));
        Assert.Contains("differs", logger.ClassName);
        Assert.Equal(["2 MB"], logger.QuerySelectorAll("td.warn").Select(c => c.TextContent));

        var targets = page.FindAll("table.kernel-targets tbody tr");
        Assert.Equal(3, targets.Count);
        Assert.Contains("/data/appendonlydir/appendonly.aof.1.incr.aof", targets[0].TextContent);
        Assert.Contains("pwrite64", targets[0].TextContent);
        Assert.Equal(["pwrite64", "fdatasync"], page.FindAll("table.kernel-events tbody tr td:nth-child(3)").Select(c => c.TextContent));
        Assert.Contains(page.FindComponents<TimeChart>(), c => c.Instance.Series.Any(s => s.Metric == MetricNames.KernelFsyncMaxMicros));
    }

    [Fact]
    public void DiskIoSaysWhyThereIsNoKernelViewWithoutAMonitor()
    {
        var source = new FixedStudioSource { MonitorReport = new MonitorReport { State = "never attached: no monitor has pushed" } };
        using var context = StudioRendering.Context(source);
        var page = context.Render<DiskIo>(source);

        Assert.Contains("Monitor not attached", page.Find(".monitor-status").TextContent);
        Assert.Contains("never attached", page.Find(".monitor-status").TextContent);
        Assert.Empty(page.FindAll("table.kernel-compare"));
        Assert.DoesNotContain(page.FindComponents<TimeChart>(), c => c.Instance.Series.Any(s => s.Metric == MetricNames.KernelFsyncMaxMicros));
    }

    [Fact]
    public void MemoryShowsTheTopAllocatingTypesAndGcPauses()
    {
        var source = new FixedStudioSource { MonitorReport = Report() };
        using var context = StudioRendering.Context(source);
        var page = context.Render<MemoryPage>(source);

        Assert.Equal(["System.Byte[]", "System.String"], page.FindAll("table.allocations tbody tr td:first-child").Select(c => c.TextContent));
        Assert.Equal("5 MB", page.Find("table.allocations tbody tr td:nth-child(2)").TextContent);
        var pauses = page.FindAll("table.gc-pauses tbody tr");
        Assert.Equal(2, pauses.Count);
        Assert.Contains("AllocSmall", pauses[0].TextContent); // newest first
        Assert.Contains("2.5 ms", pauses[0].TextContent);
    }

    private static MonitorReport Report() => new()
    {
        Attached = true,
        State = "attached",
        AttachedSinceUnixMs = 1_795_000_000_000,
        LastBatchUnixMs = 1_795_000_060_000,
        Batches = 60,
        Status = new MonitorStatus
        {
            MonitorPid = 4242, ServerPid = 4000, Host = "db1", Platform = "Linux", Version = "1.0", Elevated = true,
            Sources =
            [
                new MonitorSourceStatus { Name = "tracefs-syscalls", State = "running", EventsPerSecond = 1200, TotalEvents = 72_000, DroppedAtSource = 7 },
                new MonitorSourceStatus { Name = "eventpipe", State = "running", EventsPerSecond = 30, TotalEvents = 1800 },
            ],
        },
        ByTarget =
        [
            new KernelIoAggregate(0, "/data/appendonlydir/appendonly.aof.1.incr.aof", "file", "write", "pwrite64", 500, 4 << 20, 0, 5000, FastBuckets),
            new KernelIoAggregate(0, "/var/log/server.log", "file", "write", "write", 300, 2 << 20, 0, 900, FastBuckets),
            new KernelIoAggregate(0, "/data/appendonlydir/appendonly.aof.1.incr.aof", "file", "fsync", "fdatasync", 500, 0, 0, 400_000, Buckets(10, 500)),
        ],
        Comparison =
        [
            new IoComparison(21, "aof writer", 4 << 20, 4 << 20, 0, 0, 500, 500, 0, 0, 0, 0),
            new IoComparison(30, "console", 0, 2 << 20, 0, 0, 0, 0, 0, 0, 0, 0),
        ],
        RecentEvents =
        [
            new KernelIoEvent(1_795_000_059_000_000, 21, "fdatasync", "/data/appendonlydir/appendonly.aof.1.incr.aof", 0, 800_000),
            new KernelIoEvent(1_795_000_059_500_000, 21, "pwrite64", "/data/appendonlydir/appendonly.aof.1.incr.aof", 8192, 9_000),
        ],
        RecentGcPauses =
        [
            new GcPause(1_795_000_010_000_000, 7, 1, "Induced", "NonConcurrentGC", 800),
            new GcPause(1_795_000_020_000_000, 8, 0, "AllocSmall", "NonConcurrentGC", 2500),
        ],
        TopAllocations = [new TypeAllocation("System.Byte[]", 5 << 20, 50), new TypeAllocation("System.String", 1 << 20, 10)],
    };

    private static long[] Buckets(int index, long count)
    {
        var buckets = new long[MicrosecondBuckets.Count];
        buckets[index] = count;
        return buckets;
    }
}
