using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Scripting;

/// <summary>
/// Where a script runs (ours only: redis-server has one thread). A script starts on the socket
/// engine thread that read it when its last run was quick, and one that runs long there before
/// writing moves itself to a pool thread and starts again: it answers once, is counted once and
/// shown to MONITOR once, a write is never made twice, and a runaway that was quick before leaves
/// every socket thread free to answer BUSY and take SCRIPT KILL.
/// </summary>
public sealed class ScriptThreadTests
{
    // Quick unless ARGV[1] says otherwise; "spin" loops until killed.
    private const string Runaway = "if ARGV[1] == 'spin' then local i = 0 while true do i = i + 1 end end return 'quick'";
    // A few hundred milliseconds of Lua: far past the socket thread's budget.
    private const string LongLoop = "local i = 0 while i < 10000000 do i = i + 1 end";

    /// <summary>
    /// Waits until the server is surely waiting for this connection's next command, so that a
    /// socket engine thread reads it: a connection whose next command is already there when it
    /// asks goes on reading on whatever thread ran the last one.
    /// </summary>
    private static void LetTheServerWait() => Thread.Sleep(100);

    private static long Moved(RespClient c) => InfoFields.GetInt64(c, "scripts", "moved_scripts_total");

    /// <summary>
    /// Runs the script until a run starts where it was read, on a socket engine thread (it did not
    /// move first): its run before was quick, so the next one starts there too. The first runs may
    /// not be quick (a fresh process compiles as it goes).
    /// </summary>
    private static void RunUntilQuick(RespClient c, params string[] command)
    {
        for (int attempt = 0; attempt < 20; attempt++)
        {
            long moved = Moved(c);
            LetTheServerWait();
            Assert.False(c.Call(command).IsError);
            if (Moved(c) == moved)
                return;
        }
        Assert.Fail("the script never started on the thread that read it");
    }

    [Fact]
    public void ARunawayThatWasQuickBeforeLeavesEverySocketThreadToAnswerBusyAndTakeScriptKill()
    {
        using var server = ServerProcess.Start("--busy-reply-threshold", "200", "--io-threads", "2");
        using var runner = server.Connect();
        using var monitor = server.Connect();
        RespAssert.Ok(monitor.Call("MONITOR"));
        // Sockets go to the engine threads in turn: six connections reach both.
        var others = Enumerable.Range(0, 6).Select(_ => server.Connect()).ToList();
        try
        {
            RunUntilQuick(runner, "EVAL", Runaway, "0", "calm");
            long moved = Moved(runner);
            long calls = InfoFields.Parts(InfoFields.Get(runner, "commandstats", "cmdstat_eval"))["calls"] is var n ? long.Parse(n) : 0;
            LetTheServerWait();
            runner.Send("EVAL", Runaway, "0", "spin");
            foreach (var other in others)
            {
                RespValue reply = default!;
                Poll.Until(() => (reply = other.Call("PING")).IsError, "PING to answer BUSY on every connection");
                Assert.Equal("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", reply.Text);
            }
            RespAssert.Ok(others[^1].Call("SCRIPT", "KILL"));
            Assert.StartsWith("ERR Script killed by user with SCRIPT KILL...", runner.Read().Text);

            // It started where it was read, moved once it ran long, and counts as one call.
            using var c = others[0];
            Assert.Equal(moved + 1, Moved(c));
            Assert.Equal(calls + 1, long.Parse(InfoFields.Parts(InfoFields.Get(c, "commandstats", "cmdstat_eval"))["calls"]));
            long shown = 0;
            while (true)
            {
                string line = monitor.Read().Text!;
                if (line.Contains("\"SCRIPT\"", StringComparison.Ordinal))
                    break;
                if (line.Contains("\"EVAL\"", StringComparison.Ordinal))
                    shown++;
            }
            Assert.Equal(calls + 1, shown);
        }
        finally
        {
            foreach (var other in others)
                other.Dispose();
        }
    }

    [Fact]
    public void AScriptThatReadThenRanLongStartsAgainAndAnswersOnce()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "k", "v"));
        string script = "local v = redis.call('get', KEYS[1]) if ARGV[1] == 'long' then " + LongLoop + " end return v";
        RunUntilQuick(c, "EVAL", script, "1", "k", "short");
        long moved = Moved(c);
        long calls = long.Parse(InfoFields.Parts(InfoFields.Get(c, "commandstats", "cmdstat_eval"))["calls"]);
        LetTheServerWait();
        RespAssert.Bulk("v", c.Call("EVAL", script, "1", "k", "long"));
        Assert.Equal(moved + 1, Moved(c));
        Assert.Equal(calls + 1, long.Parse(InfoFields.Parts(InfoFields.Get(c, "commandstats", "cmdstat_eval"))["calls"]));
        // Having run long, its next run starts on a pool thread.
        LetTheServerWait();
        RespAssert.Bulk("v", c.Call("EVAL", script, "1", "k", "short"));
        Assert.Equal(moved + 2, Moved(c));
    }

    [Fact]
    public void AScriptThatWroteThenRanLongFinishesWhereItIsAndWritesOnce()
    {
        using var dir = new TempDirectory();
        string expected;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            string script = "redis.call('incr', KEYS[1]) if ARGV[1] == 'long' then " + LongLoop + " end return redis.call('get', KEYS[1])";
            RunUntilQuick(c, "EVAL", script, "1", "n", "short");
            expected = (long.Parse(c.Call("GET", "n").Text!) + 1).ToString();
            long moved = Moved(c);
            LetTheServerWait();
            RespAssert.Bulk(expected, c.Call("EVAL", script, "1", "n", "long"));
            Assert.Equal(moved, Moved(c));
            RespAssert.Bulk(expected, c.Call("GET", "n"));
        }
        AofRestart.AssertLoads(dir.Path, 1, ("n", expected));
    }

    [Fact]
    public void PipelinedScriptsThatMoveKeepTheirOrder()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        string script = "if ARGV[2] == 'long' then " + LongLoop + " end redis.call('rpush', KEYS[1], ARGV[1]) return redis.call('llen', KEYS[1])";
        // Quick, so the pipeline's scripts start on the socket thread; the second moves mid-run,
        // and the rest of the run moves with it.
        RunUntilQuick(c, "EVAL", script, "1", "warm", "0", "short");
        var commands = new List<string[]>();
        for (int i = 1; i <= 6; i++)
            commands.Add(["EVAL", script, "1", "list", i.ToString(), i == 2 ? "long" : "short"]);
        commands.Add(["LRANGE", "list", "0", "-1"]);
        long moved = Moved(c);
        LetTheServerWait();
        var replies = Pipeline.Run(c, commands);
        for (int i = 0; i < 6; i++)
            RespAssert.Integer(i + 1, replies[i]);
        Assert.Equal(["1", "2", "3", "4", "5", "6"], replies[6].Array.Select(v => v.Text!).ToArray());
        Assert.Equal(moved + 1, Moved(c));
    }
}
