using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The latency monitor (latency-monitor-threshold) and LATENCY LATEST / HISTORY / RESET / GRAPH /
/// HELP, with reply shapes and error texts as redis-server 7.0.15 gives them. Each test that
/// records events runs its own server, since events are server-wide.
/// </summary>
public sealed class LatencyMonitorTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public void ASlowCommandOverTheThresholdIsACommandEvent()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.02"));
        Assert.Empty(c.Call("LATENCY", "LATEST").Array); // the monitor is off by default

        RespAssert.Ok(c.Call("CONFIG", "SET", "latency-monitor-threshold", "10"));
        long before = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.05"));
        long after = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        // Fast commands are their own event ("fast-command"), as in Redis: even one that a loaded
        // machine stalls past 10 ms leaves the "command" series with the one sample above. (A
        // SET is not flagged fast, and such a stall once gave the series a second, later sample.)
        for (int i = 0; i < 50; i++)
            Assert.True(c.Call("GET", "monitor:k").IsNull);

        // Only the command event: on a loaded machine the expiry cycle can pass 10 ms too.
        var latest = Assert.Single(c.Call("LATENCY", "LATEST").Array, e => e.Array[0].Text == "command").Array;
        Assert.Equal(4, latest.Count);
        Assert.Equal("command", latest[0].Text);
        Assert.InRange(latest[1].Integer, before, after);
        Assert.True(latest[2].Integer >= 50, $"latest sample {latest[2].Integer} ms");
        Assert.Equal(latest[2].Integer, latest[3].Integer);

        var history = c.Call("LATENCY", "HISTORY", "command").Array;
        var sample = Assert.Single(history).Array;
        Assert.Equal(latest[1].Integer, sample[0].Integer);
        Assert.Equal(latest[2].Integer, sample[1].Integer);
        // Event names are looked up exactly, as Redis's dictionary does.
        Assert.Empty(c.Call("LATENCY", "HISTORY", "COMMAND").Array);
        // DEBUG SLEEP is not a fast command; a GET the loaded machine stalled past 10 ms may be one.
        Assert.All(c.Call("LATENCY", "HISTORY", "fast-command").Array, s => Assert.True(s.Array[1].Integer < 50, $"a fast-command sample of {s.Array[1].Integer} ms"));
    }

    [Fact]
    public void SamplesOfOneSecondKeepTheirMaximumAndTheAllTimeHighSurvives()
    {
        using var server = ServerProcess.Start("--latency-monitor-threshold", "10");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.06"));
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.02"));

        var history = c.Call("LATENCY", "HISTORY", "command").Array;
        // Only the command event: on a loaded machine the expiry cycle can pass 10 ms too.
        var latest = Assert.Single(c.Call("LATENCY", "LATEST").Array, e => e.Array[0].Text == "command").Array;
        Assert.True(latest[3].Integer >= 60, $"all-time high {latest[3].Integer} ms");
        if (history.Count == 1)
        {
            // Both in one second: one sample, the larger of the two.
            Assert.Equal(latest[3].Integer, history[0].Array[1].Integer);
        }
        else
        {
            Assert.Equal(2, history.Count);
            Assert.True(history[0].Array[0].Integer < history[1].Array[0].Integer, "samples are oldest first");
            Assert.InRange(history[1].Array[1].Integer, 20, latest[3].Integer - 1);
        }
    }

    private static void AssertOnlyFreshCommandEvents(RespValue latest)
    {
        foreach (var e in latest.Array)
        {
            Assert.Equal("command", e.Array[0].Text);
            Assert.True(e.Array[3].Integer < 10, $"the reset 'command' event is back with a {e.Array[3].Integer} ms maximum");
        }
    }

    [Fact]
    public void ResetReturnsHowManyEventsItDropped()
    {
        using var dir = new TempDirectory();
        // A 1 ms threshold and a 40 MB value: the value's AOF write alone takes longer than that.
        using var server = ServerProcess.Start("--latency-monitor-threshold", "1", "--appendonly", "yes", "--dir", dir.Path);
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "reset:big", new string('x', 40 << 20)));
        Poll.Until(() => c.Call("LATENCY", "LATEST").Array.Any(e => e.Array[0].Text == "aof-write"), "the AOF write is an event");
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.01"));

        var names = c.Call("LATENCY", "LATEST").Array.Select(e => e.Array[0].Text).ToList();
        Assert.Contains("aof-write", names);
        Assert.Contains("command", names);
        // Every AOF write is also filed under what else used the disk meanwhile, as in Redis.
        Assert.Contains(names, n => n is "aof-write-alone" or "aof-write-pending-fsync" or "aof-write-active-child");

        RespAssert.Integer(0, c.Call("LATENCY", "RESET", "nosuch"));
        RespAssert.Integer(1, c.Call("LATENCY", "RESET", "COMMAND", "command", "nosuch")); // names ignore case
        // With a 1 ms threshold, a loaded machine can make LATENCY RESET itself a 'command' event
        // after it ran: what must be gone is the 10 ms DEBUG SLEEP, not every trace of a command.
        Assert.DoesNotContain(c.Call("LATENCY", "LATEST").Array, e => e.Array[0].Text == "command" && e.Array[3].Integer >= 10);
        long dropped = c.Call("LATENCY", "RESET").Integer;
        Assert.InRange(dropped, names.Count - 1, names.Count);
        AssertOnlyFreshCommandEvents(c.Call("LATENCY", "LATEST"));
        Assert.InRange(c.Call("LATENCY", "RESET").Integer, 0, 1);
    }

    [Fact]
    public void ActiveExpiryPassesOverTheThresholdAreExpireCycleEvents()
    {
        // One shard holding many keys that expire at once: its expiry pass deletes keys until its
        // time budget (a quarter of the cron period, 25 ms) runs out, far over 1 ms.
        using var server = ServerProcess.Start("--latency-monitor-threshold", "1", "--shards", "1");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("DEBUG", "SET-ACTIVE-EXPIRE", "0"));
        Pipeline.RunAll(c, Enumerable.Range(0, 200_000).Select(i => new[] { "SET", $"expire:{i}", "v", "PX", "1" }));
        RespAssert.Ok(c.Call("DEBUG", "SET-ACTIVE-EXPIRE", "1"));
        Poll.Until(() => c.Call("LATENCY", "LATEST").Array.Any(e => e.Array[0].Text == "expire-cycle"), "an expiry pass is an event", 30_000);
        Assert.NotEmpty(c.Call("LATENCY", "HISTORY", "expire-cycle").Array);
    }

    [Fact]
    public void GraphIsRedisAsciiArtAsBulkOrVerbatim()
    {
        // 100 ms: under the whole suite a plain command (this test's HELLO, say) can pass 10 ms and
        // add a second sample between the two graphs.
        using var server = ServerProcess.Start("--latency-monitor-threshold", "100");
        using var c = server.Connect();
        RespAssert.Error("ERR No samples available for event 'command'", c.Call("LATENCY", "GRAPH", "command"));
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.3"));
        // Only the command event: on a loaded machine the expiry cycle can pass the threshold too.
        var latest = Assert.Single(c.Call("LATENCY", "LATEST").Array, e => e.Array[0].Text == "command").Array;
        long ms = latest[2].Integer;

        var graph = c.Call("LATENCY", "GRAPH", "command");
        Assert.Equal('$', graph.Kind);
        // One sample: a bottom bar, the blank row, then how long ago it was ("0s" or "1s"), vertically.
        string expected = $"command - high {ms} ms, low {ms} ms (all time high {ms} ms)\n" + new string('-', 80) + "\n \n \n \n_\n \n";
        Assert.StartsWith(expected, graph.Text);
        Assert.Matches(@"^\d\ns\n$", graph.Text![expected.Length..]);

        Assert.False(c.Call("HELLO", "3").IsError);
        var verbatim = c.Call("LATENCY", "GRAPH", "command");
        Assert.Equal('=', verbatim.Kind);
        Assert.StartsWith("txt:" + expected, verbatim.Text);
    }

    [Fact]
    public void ThresholdIsValidatedAsRedisDoes()
    {
        using var c = shared.Connect();
        const string prefix = "ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - ";
        RespAssert.Error(prefix + "argument must be between 0 and 9223372036854775807 inclusive", c.Call("CONFIG", "SET", "latency-monitor-threshold", "-1"));
        RespAssert.Error(prefix + "argument couldn't be parsed into an integer", c.Call("CONFIG", "SET", "latency-monitor-threshold", "abc"));
        RespAssert.Bulk("0", c.Call("CONFIG", "GET", "latency-monitor-threshold").Array[1]);
    }

    [Fact]
    public void ArgumentErrorsAndHelpAreRedisTexts()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR wrong number of arguments for 'latency' command", c.Call("LATENCY"));
        RespAssert.Error("ERR unknown subcommand 'FOO'. Try LATENCY HELP.", c.Call("LATENCY", "FOO"));
        RespAssert.Error("ERR wrong number of arguments for 'latency|history' command", c.Call("LATENCY", "HISTORY"));
        RespAssert.Error("ERR wrong number of arguments for 'latency|history' command", c.Call("LATENCY", "HISTORY", "a", "b"));
        RespAssert.Error("ERR wrong number of arguments for 'latency|latest' command", c.Call("LATENCY", "LATEST", "x"));
        RespAssert.Error("ERR wrong number of arguments for 'latency|graph' command", c.Call("LATENCY", "GRAPH"));
        RespAssert.Error("ERR wrong number of arguments for 'latency|help' command", c.Call("LATENCY", "HELP", "x"));
        RespAssert.Error("ERR No samples available for event 'argerr-nosuch'", c.Call("LATENCY", "GRAPH", "argerr-nosuch"));
        Assert.Empty(c.Call("LATENCY", "HISTORY", "argerr-nosuch").Array);

        var help = c.Call("LATENCY", "HELP").Array.Select(l => l.Text).ToList();
        Assert.Equal("LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", help[0]);
        Assert.Contains("HISTOGRAM [COMMAND ...]", help);
        Assert.Contains("    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.", help);
        Assert.Contains("RESET [<event> ...]", help);
        Assert.Equal("    Prints this help.", help[^1]);
    }

    [Fact]
    public void CommandDocsDescribeTheSubcommandsAsRedis()
    {
        using var c = shared.Connect();
        var docs = c.Call("COMMAND", "DOCS", "latency").ToMap()["latency"].ToMap();
        Assert.Equal("server", docs["group"].Text);
        Assert.Equal("2.8.13", docs["since"].Text);
        var subcommands = docs["subcommands"].ToMap();
        var histogram = subcommands["latency|histogram"].ToMap();
        Assert.Equal("7.0.0", histogram["since"].Text);
        Assert.Equal("O(N) where N is the number of commands with latency information being retrieved.", histogram["complexity"].Text);
        var argument = histogram["arguments"].Array[0].ToMap();
        Assert.Equal("command", argument["name"].Text);
        Assert.Equal(new[] { "optional", "multiple" }, argument["flags"].Array.Select(f => f.Text));
        Assert.Contains("latency|graph", subcommands.Keys);
        Assert.Contains("latency|reset", subcommands.Keys);
    }
}
