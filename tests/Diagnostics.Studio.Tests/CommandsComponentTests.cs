using Bunit;
using Diagnostics.Contracts;
using Diagnostics.Studio.Pages;
using CommandsPage = Diagnostics.Studio.Pages.Commands;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>The Commands page with fixed data: commandstats sorted, a command's latency histogram, the scripts, the slow log.</summary>
public sealed class CommandsComponentTests
{
    private static FixedStudioSource Source() => new()
    {
        CommandList =
        [
            new CommandStatistics { Name = "get", Group = "string", Calls = 1000, Microseconds = 2000, MicrosecondsPerCall = 2, P50Micros = 1.5, P99Micros = 4, P999Micros = 8 },
            new CommandStatistics { Name = "keys", Group = "generic", Calls = 10, Microseconds = 300_000, MicrosecondsPerCall = 30_000, FailedCalls = 1 },
        ],
        LatencyReport = new LatencyReport(
            [new LatencyDistribution("get", 1000, [new LatencyBucket(1, 0), new LatencyBucket(2, 600), new LatencyBucket(4, 990), new LatencyBucket(8, 1000)])], [], 0),
        SlowLogList = [new SlowLogRecord(4, 1_795_000_000, 31_000, ["KEYS", "*x*"], "127.0.0.1:50001", "reports")],
    };

    [Fact]
    public void StatisticsSortByCallsThenByTimePerCall()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var page = context.Render<CommandsPage>(source);
        Assert.Equal(["get", "keys"], page.RowKeys("table.commands", "data-command"));
        page.FindAll("thead th button").Single(b => b.TextContent.StartsWith("Per call")).Click();
        Assert.Equal(["keys", "get"], page.RowKeys("table.commands", "data-command"));
        Assert.Equal("30 ms", page.Find("tr[data-command='keys'] td:nth-child(5)").TextContent);
        Assert.Contains("warn", page.Find("tr[data-command='keys'] td:last-child").ClassName);
    }

    [Fact]
    public void ClickingACommandShowsItsLatencyHistogram()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var page = context.Render<CommandsPage>(source);
        Assert.Empty(page.FindAll(".histogram"));

        page.Find("tr[data-command='get'] button.link").Click();
        var rows = page.FindAll(".histogram tbody tr");
        // Cumulative 0, 600, 990, 1000 become 600, 390, 10 per bucket; the empty first bucket is left out.
        Assert.Equal(["2 µs|600|60%", "4 µs|390|39%", "8 µs|10|1%"], rows.Select(r => string.Join('|', r.Children.Select(c => c.TextContent.Trim()))));

        page.Find("tr[data-command='keys'] button.link").Click();
        Assert.Contains("No latency histogram for keys", page.Markup);
    }

    [Fact]
    public void SlowLogShowsEachEntryWithItsArgumentsAndClient()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var page = context.Render<CommandsPage>(source);
        var cells = page.FindAll("table.slowlog tbody td").Select(c => c.TextContent.Trim()).ToArray();
        Assert.Equal(["4", "2026-11-18 11:06:40 UTC", "31 ms", "KEYS *x*", "127.0.0.1:50001 reports"], cells);
    }

    [Fact]
    public void ScriptsListEachScriptAndFunctionWithItsStatsAndTheBusyOne()
    {
        var source = new FixedStudioSource
        {
            ScriptsReport = new ScriptReport
            {
                Scripts =
                [
                    new ScriptStatistics { Kind = "script", Name = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", Calls = 4, Microseconds = 200, MaxMicroseconds = 120, Flags = ["no-writes"] },
                    new ScriptStatistics { Kind = "function", Name = "hello", Library = "lib", Description = "greets", Calls = 2, Microseconds = 30, MaxMicroseconds = 20, FailedCalls = 1 },
                ],
                Running = new RunningScript { Name = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", ElapsedMs = 6200, Busy = true, ClientId = 9 },
                EvalVmBytes = 70_000,
                FunctionsVmBytes = 40_000,
                BusyTotal = 1,
            },
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<CommandsPage>(source);
        Assert.Equal(["e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "hello"], page.RowKeys("table.scripts", "data-script"));
        var function = page.FindAll("tr[data-script='hello'] td").Select(c => c.TextContent.Trim()).ToArray();
        Assert.Equal(["function", "hello", "lib", "", "2", "30 µs", "15 µs", "20 µs", "1"], function);
        Assert.Equal("no-writes", page.Find("tr[data-script='e0e1f9fabfc9d4800c877a703b823ac0578ff8db'] td:nth-child(4)").TextContent);
        var busy = page.Find("[data-running-script]");
        Assert.Contains("Keeping the server busy", busy.TextContent);
        Assert.Contains("6,200 ms", busy.TextContent);
        Assert.Contains("warn", busy.ClassName);
    }

    [Fact]
    public void WithoutScriptsThePageSaysSo()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var page = context.Render<CommandsPage>(source);
        Assert.Contains("No script has been loaded or run.", page.Markup);
    }

    [Fact]
    public void HotKeysAreListedWithShareRateCommandAndClients()
    {
        var source = new FixedStudioSource
        {
            HotKeysData = new HotKeysReport
            {
                SamplePeriod = 64,
                Samples = 1000,
                Keys = [new HotKey(0, "counter:global", 7, 0.62, 41_000, "incr", [5, 6, 9]), new HotKey(2, "user:1", 3, 0.01, 660, "get", [12])],
            },
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<CommandsPage>(source);
        var rows = page.FindAll("table.hotkeys tbody tr");
        Assert.Equal(2, rows.Count);
        Assert.Contains("counter:global", rows[0].TextContent);
        Assert.Equal("62%", rows[0].QuerySelector("td.num.warn")!.TextContent);
        Assert.Contains("41,000", rows[0].TextContent);
        Assert.Contains("incr", rows[0].TextContent);
        Assert.Contains("5, 6, 9", rows[0].TextContent);
        Assert.Null(rows[1].QuerySelector("td.warn"));
        Assert.Contains("one command in 64", page.Markup);
    }

    [Fact]
    public void HotKeysOffSaysSo()
    {
        var source = Source();
        using var context = StudioRendering.Context(source);
        var page = context.Render<CommandsPage>(source);
        Assert.Empty(page.FindAll("table.hotkeys"));
        Assert.Contains("Hot-key sampling is off", page.Markup);
    }

    [Fact]
    public void SlowCallsAreCountedByCommandAndByClientPastTheLogsCap()
    {
        var source = new FixedStudioSource
        {
            SlowSummaryData = new SlowLogSummary(1795680000, 193,
                [new SlowCommandTotal("debug", 190, 114_000_000, 610_000), new SlowCommandTotal("keys", 3, 90_000, 31_000)],
                [new SlowClientTotal(7, "127.0.0.1:50100", "sleeper", 190, 610_000, "debug", 1795680300), new SlowClientTotal(9, "127.0.0.1:50102", "", 3, 31_000, "keys", 1795680200)]),
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<CommandsPage>(source);
        Assert.Contains("193 slow calls since 2026-11-26 08:00:00 UTC (start or SLOWLOG RESET); the log below keeps the newest only.", page.Markup);
        var commands = page.FindAll("table.slow-commands tbody tr");
        Assert.Equal(["debug", "keys"], commands.Select(r => r.GetAttribute("data-command")));
        Assert.Contains("190", commands[0].TextContent);
        var clients = page.FindAll("table.slow-clients tbody tr");
        Assert.Equal(["7", "9"], clients.Select(r => r.GetAttribute("data-client-id")));
        Assert.Contains("127.0.0.1:50100 sleeper", clients[0].TextContent);
        Assert.Contains("debug, 2026-11-26 08:05:00 UTC", clients[0].TextContent);

        // A login that may not see the clients sees the commands, and a line instead of who made the calls.
        var watcher = new FixedStudioAccess { Current = new("user 'watcher'", "watcher", global::Diagnostics.Studio.Security.StudioPermissions.Watch) };
        using var watching = StudioRendering.Context(source, watcher);
        var refused = watching.Render<CommandsPage>(source);
        Assert.Equal(2, refused.FindAll("table.slow-commands tbody tr").Count);
        Assert.Empty(refused.FindAll("table.slow-clients"));
        Assert.DoesNotContain("127.0.0.1:50100", refused.Markup);
        Assert.Contains("ACL SETUSER watcher +client|list", refused.Find("p.refused[data-needs=clients]").TextContent);
    }

    [Fact]
    public void NoSlowCallsShowNoTotals()
    {
        var source = new FixedStudioSource { SlowSummaryData = new SlowLogSummary(1795680000, 0, [], []) };
        using var context = StudioRendering.Context(source);
        var page = context.Render<CommandsPage>(source);
        Assert.Empty(page.FindAll("table.slow-commands"));
        Assert.Contains("The slow log is empty.", page.Markup);
    }
}
