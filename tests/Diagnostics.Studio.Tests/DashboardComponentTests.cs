using Bunit;
using Diagnostics.Contracts;
using Diagnostics.Studio.Charts;
using Diagnostics.Studio.Pages;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>The dashboard with fixed data: its figures, its charts' series, its findings, and what a tick changes.</summary>
public sealed class DashboardComponentTests
{
    private static FixedStudioSource Source(bool live = true) => new()
    {
        Live = live,
        InfoReport = new(new()
        {
            ["clients"] = new() { ["connected_clients"] = "12" },
            ["memory"] = new() { ["used_memory_human"] = "1.50M" },
            ["server"] = new() { ["uptime_in_seconds"] = "93784" },
        }),
        HistoryData = FixedStudioSource.MakeHistory(30,
            (MetricNames.OpsPerSecond, i => 1000 + i),
            (MetricNames.OpsPerSecondGroupPrefix + "string", i => 900 + i),
            (MetricNames.OpsPerSecondGroupPrefix + "generic", _ => 100),
            (MetricNames.KeyspaceHitsPerSecond, _ => 300),
            (MetricNames.KeyspaceMissesPerSecond, _ => 100)),
        DoctorReport = new(0, 15,
        [
            new Finding { Rule = "aof-write-error", Area = "persistence", Severity = FindingSeverity.Critical, Title = "The append-only file cannot be written", Seen = "s", Advice = "a" },
            new Finding { Rule = "no-persistence", Area = "persistence", Severity = FindingSeverity.Info, Title = "Data is not persisted", Seen = "s", Advice = "a" },
        ]),
    };

    [Fact]
    public void ShowsTheLatestFiguresFindingsAndOneLinePerCommandFamily()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var board = context.Render<Dashboard>(source);

        Assert.Equal("1,029/s", Tile(board, "Operations"));
        Assert.Equal("75%", Tile(board, "Hit ratio"));
        Assert.Equal("12", Tile(board, "Clients"));
        Assert.Equal("1.50M", Tile(board, "Used memory"));
        Assert.Equal("1d 2h", Tile(board, "Uptime"));

        var findings = board.FindAll(".findings-glance li");
        Assert.Equal(2, findings.Count);
        Assert.Contains("severity-critical", findings[0].ClassName);
        Assert.Equal("doctor#finding-aof-write-error", findings[0].QuerySelector("a")!.GetAttribute("href"));

        var charts = board.FindComponents<TimeChart>();
        Assert.Equal(10, charts.Count);
        Assert.Equal(["generic", "string"], charts[0].Instance.Series.Select(s => s.Label));
        // The ops chart was created in the browser with the window's history: 30 points.
        var create = context.JSInterop.Invocations.Single(i => i.Identifier == "create" && (string)i.Arguments[0]! == charts[0].Instance.Id);
        Assert.Equal(30, ((double[])create.Arguments[3]!).Length);
        Assert.Equal(4, board.FindAll(".window-controls button").Count);
    }

    [Fact]
    public void ATickAppendsOnlyTheNewPointsAndRefreshesTheFigures()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var board = context.Render<Dashboard>(source);
        var appendsBefore = context.JSInterop.Invocations.Count(i => i.Identifier == "append");

        source.Tick(FixedStudioSource.MakeHistory(1, (MetricNames.OpsPerSecond, _ => 5000), (MetricNames.OpsPerSecondGroupPrefix + "string", _ => 5000),
            (MetricNames.KeyspaceHitsPerSecond, _ => 10), (MetricNames.KeyspaceMissesPerSecond, _ => 30)));

        board.WaitForAssertion(() => Assert.Equal("5,000/s", Tile(board, "Operations")));
        Assert.Equal("25%", Tile(board, "Hit ratio"));
        var append = context.JSInterop.Invocations.Where(i => i.Identifier == "append").Skip(appendsBefore).Single();
        var batch = (ChartColumns[])append.Arguments[0]!;
        Assert.Equal(10, batch.Length);
        Assert.All(batch, chart => Assert.Single(chart.Times));
    }

    [Fact]
    public void APackageHasNoPauseButton()
    {
        var source = Source(live: false);
        using var context = StudioRendering.Context(source);
        var board = context.Render<Dashboard>(source);
        Assert.Equal(3, board.FindAll(".window-controls button").Count);
        Assert.Empty(board.FindAll(".window-controls .pause"));
    }

    private static string Tile(IRenderedComponent<Microsoft.AspNetCore.Components.IComponent> board, string label) =>
        board.FindAll(".tile").Single(t => t.QuerySelector(".tile-label")!.TextContent == label).QuerySelector(".tile-value")!.TextContent;
}
