using Bunit;
using Diagnostics.Contracts;
using Diagnostics.Studio.Charts;
using Diagnostics.Studio.Pages;
using DoctorPage = Diagnostics.Studio.Pages.Doctor;
using MemoryPage = Diagnostics.Studio.Pages.Memory;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>The Memory, Disk I/O and Doctor pages with fixed data.</summary>
public sealed class MemoryDiskDoctorComponentTests
{
    [Fact]
    public void MemoryShowsTheFiguresThreadsThatAddUpDatabasesAndTheGc()
    {
        var source = new FixedStudioSource
        {
            MemoryReport = new MemoryReport
            {
                TrackedBytes = 3 << 20, PeakTrackedBytes = 4 << 20, MaxMemoryBytes = 4 << 20, MaxMemoryPolicy = "allkeys-lru", EvictedKeys = 1234,
                Threads = [new ThreadMemory(11, "shard executor 0", true, 2 << 20, 5 << 20, 3 << 20, 100, 50), new ThreadMemory(12, ".NET TP Worker", false, 1 << 20, 1 << 20, 0, 10, 0)],
                Databases = [new DatabaseMemory(0, 1500, 20, 65536), new DatabaseMemory(3, 10, 0, 4096)],
            },
            RuntimeReport = new RuntimeReport { Framework = ".NET 10.0.0", Collections = [40, 5, 1], TotalPauseMillis = 12.5, PauseTimePercent = 0.1, LastPausesMillis = [0.5, 2] },
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<MemoryPage>(source);

        Assert.Contains("4 MB (75% used)", page.Markup);
        Assert.Equal(["11", "12"], page.FindAll("table.memory-threads tbody tr td:first-child").Select(c => c.TextContent));
        Assert.Equal("3 MB", page.Find(".sum-live").TextContent);
        Assert.Equal(["db0", "db3"], page.FindAll("table.databases tbody tr td:first-child").Select(c => c.TextContent));
        Assert.Contains("gen0 40, gen1 5, gen2 1", page.Find(".runtime").TextContent);
        Assert.Contains("500 µs, 2 ms", page.Find(".runtime").TextContent);
        Assert.Contains(page.FindComponents<TimeChart>(), c => c.Instance.Series.Any(s => s.Metric == MetricNames.MaxMemoryBytes));
    }

    [Fact]
    public void DiskIoShowsAccountingByThreadAndPurposeAndTheKernelsCountersBeside()
    {
        var buckets = new long[40];
        buckets[17] = 10;
        var source = new FixedStudioSource
        {
            HistoryData = FixedStudioSource.MakeHistory(5, (MetricNames.DiskBytesPerSecondPurposePrefix + "aof_write", _ => 1000), (MetricNames.DiskBytesPerSecondPurposePrefix + "rewrite_write", _ => 0)),
            DiskIoList =
            [
                new DiskIoFigures(0, "all threads", "aof_fsync", 10, 0, 900_000, 0, buckets),
                new DiskIoFigures(21, "aof writer", "aof_fsync", 10, 0, 900_000, 0, buckets),
                new DiskIoFigures(21, "aof writer", "aof_write", 50, 1 << 20, 500, 2, new long[40]),
                new DiskIoFigures(21, "aof writer", "truncate", 0, 0, 0, 0, new long[40]),
            ],
            ThreadList = [new ThreadSnapshot { OsThreadId = 21, Name = "aof writer", Role = "AOF writer", Alive = true, DiskWriteBytes = 1 << 20, DiskOperations = 60, KernelIo = new KernelIoCounters(0, 3 << 20, 0, 55, 0, 1 << 20, 0) }],
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<DiskIo>(source);

        var rows = page.FindAll("table.diskio tbody tr");
        Assert.Equal(3, rows.Count);
        Assert.Contains("failed", rows.Single(r => r.TextContent.Contains("aof_write")).ClassName);
        var fsync = rows.Single(r => r.TextContent.Contains("aof writer (21)") && r.TextContent.Contains("aof_fsync"));
        Assert.Contains("90 ms", fsync.TextContent);
        Assert.Contains("131.07 ms", fsync.TextContent);
        Assert.Contains("Monitor not attached", page.Find(".status-box").TextContent);
        // The kernel saw 3 MB of writes where the server accounted for 1 MB: highlighted.
        Assert.Equal("3 MB (55)", page.Find("table.kernel-io td.warn").TextContent);
        var charts = page.FindComponents<TimeChart>();
        Assert.Equal(["aof_write", "rewrite_write"], charts.Single(c => c.Instance.Title == "Disk bytes by purpose").Instance.Series.Select(s => s.Label));
        Assert.Equal("thread/21/Disk", charts.Single(c => c.Instance.Title == "Disk bytes by thread").Instance.Series[0].Metric);
    }

    [Fact]
    public void DoctorShowsEachFindingWithEvidenceAdviceItsChartAndALinkToItsPage()
    {
        var source = new FixedStudioSource
        {
            HistoryData = FixedStudioSource.MakeHistory(5, (MetricNames.FsyncMaxMicros, _ => 131072)),
            DoctorReport = new(1_795_000_000_000, 15,
            [
                new Finding
                {
                    Rule = "fsync-latency", Area = "persistence", Severity = FindingSeverity.Warning, Title = "fsync of the append-only file is slow",
                    Seen = "12 fsyncs, average 81 ms", Advice = "Move the AOF to a faster disk.", Evidence = new() { ["p99_us"] = "131072" }, Chart = MetricNames.FsyncMaxMicros,
                },
            ]),
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<DoctorPage>(source, linkPrefix: "package/abc/");

        var finding = page.Find("article#finding-fsync-latency");
        Assert.Contains("severity-warning", finding.ClassName);
        Assert.Equal("12 fsyncs, average 81 ms", finding.QuerySelector(".seen")!.TextContent);
        Assert.Contains("Move the AOF to a faster disk.", finding.QuerySelector(".advice")!.TextContent);
        Assert.Equal("131072", finding.QuerySelector(".evidence dd")!.TextContent);
        Assert.Equal("package/abc/diskio", finding.QuerySelector("a")!.GetAttribute("href"));
        Assert.Contains("15 rules examined the server", page.Markup);
        var chart = page.FindComponent<TimeChart>().Instance;
        Assert.Equal(MetricNames.FsyncMaxMicros, chart.Series[0].Metric);
        Assert.Equal(ChartUnit.Micros, chart.Unit);
    }

    [Fact]
    public void DoctorSaysSoWhenThereIsNothingToReport()
    {
        var source = new FixedStudioSource { DoctorReport = new(1_795_000_000_000, 15, []) };
        using var context = StudioRendering.Context(source);
        var page = context.Render<DoctorPage>(source);
        Assert.Contains("nothing to report", page.Markup);
        Assert.Empty(page.FindAll("article.finding"));
    }
}
