using Bunit;
using Diagnostics.Contracts;
using Diagnostics.Studio.Charts;
using Diagnostics.Studio.Pages;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>The Threads page with fixed data: sorting, sparklines from the history, a thread's detail and what it runs.</summary>
public sealed class ThreadsComponentTests
{
    private static FixedStudioSource Source() => new()
    {
        ThreadList =
        [
            new ThreadSnapshot { OsThreadId = 101, Name = "shard executor 0", Role = "shard executor 0", Alive = true, CpuPercent = 12.5, TrackedBytes = 3 << 20, CommandsProcessed = 900,
                Running = new InFlightWork { OsThreadId = 101, ThreadName = "shard executor 0", Activity = "SET", ClientId = 7, StartedUnixMs = 0, ElapsedMicros = 1500 } },
            new ThreadSnapshot { OsThreadId = 102, Name = "aof writer", Role = "AOF writer", Alive = true, CpuPercent = 80, TrackedBytes = 1024, DiskWriteBytes = 5 << 20,
                KernelIo = new KernelIoCounters(0, 5 << 20, 0, 40, 0, 5 << 20, 0) },
            new ThreadSnapshot { OsThreadId = 103, Name = ".NET TP Worker", Role = "thread pool", Alive = false, CpuPercent = 0 },
        ],
        HistoryData = FixedStudioSource.MakeHistory(60,
            [(101, "shard executor 0", "shard executor 0", i => i, i => i * 1000), (102, "aof writer", "AOF writer", _ => 80, _ => 1024)]),
    };

    [Fact]
    public void RowsSortByCpuFirstAndByAnyColumnOnClick()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var page = context.Render<Threads>(source);

        Assert.Equal(["102", "101", "103"], page.RowKeys("table.threads", "data-tid"));
        Assert.Equal("descending", page.Find("th[aria-sort='descending']").GetAttribute("aria-sort"));
        Assert.Contains("3 threads, 2 alive", page.Find("caption").TextContent);
        Assert.Contains("exited", page.Find("tr[data-tid='103']").ClassName);

        page.FindAll("thead th button").Single(b => b.TextContent.StartsWith("Name")).Click();
        Assert.Equal(["103", "102", "101"], page.RowKeys("table.threads", "data-tid"));
        page.FindAll("thead th button").Single(b => b.TextContent.StartsWith("Name")).Click();
        Assert.Equal(["101", "102", "103"], page.RowKeys("table.threads", "data-tid"));
    }

    [Fact]
    public void SparklinesDrawTheThreadsHistory()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var page = context.Render<Threads>(source);

        var cpu = page.Find("tr[data-tid='101'] svg.sparkline");
        Assert.Equal("CPU of shard executor 0, now 12.5%", cpu.GetAttribute("aria-label"));
        // 60 points, rising from 0 at the bottom (y 21) to the largest at the top (y 1).
        var points = cpu.QuerySelector("polyline")!.GetAttribute("points")!.Split(' ');
        Assert.Equal(60, points.Length);
        Assert.Equal("0,21", points[0]);
        Assert.Equal("79,1", points[^1]);
        // An exited thread with no history draws no line.
        Assert.Null(page.Find("tr[data-tid='103'] svg.sparkline").QuerySelector("polyline"));
    }

    [Fact]
    public void ClickingAThreadShowsItsHistoryChartsAndWhatItRuns()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var page = context.Render<Threads>(source);
        Assert.Empty(page.FindAll(".detail"));

        page.Find("tr[data-tid='101'] button.link").Click();
        var detail = page.Find(".detail");
        Assert.Contains("Thread 101 · shard executor 0", detail.QuerySelector("h2")!.TextContent);
        Assert.Equal("SET for 1.5 ms, client 7", detail.QuerySelector(".running-now")!.TextContent);
        var charts = page.FindComponents<TimeChart>();
        Assert.Equal(3, charts.Count);
        var create = context.JSInterop.Invocations.Single(i => i.Identifier == "create" && (string)i.Arguments[0]! == charts[0].Instance.Id);
        var cpu = (double?[][])create.Arguments[4]!;
        Assert.Equal(59, cpu[0][^1]);

        page.Find("tr[data-tid='102'] button.link").Click();
        Assert.Contains("Kernel's count", page.Find(".detail").TextContent);
        page.Find("tr[data-tid='102'] button.link").Click();
        Assert.Empty(page.FindAll(".detail"));
    }
}
