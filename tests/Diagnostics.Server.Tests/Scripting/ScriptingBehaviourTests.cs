using System.Diagnostics;
using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Scripting;

/// <summary>
/// What scripts do beyond their replies: a runaway script makes other clients' commands answer
/// BUSY and SCRIPT KILL stops it (side by side with redis-server), one that wrote cannot be
/// killed and SHUTDOWN NOSAVE still ends the server; a script's writes reach the AOF as MULTI/EXEC
/// of its commands and replay without the script; a script is atomic over keys it never declared;
/// MONITOR shows its commands as "[db lua]"; its VM's memory is counted.
/// </summary>
public sealed class ScriptingBehaviourTests
{
    private const string Loop = "local i = 0 while true do i = i + 1 end";

    [Theory]
    [InlineData("diagnostics-server")]
    [InlineData("redis-server")]
    public void ARunawayScriptMakesOthersBusyUntilKilled(string target)
    {
        var (server, connect) = ServerTarget.Start(target);
        using var _ = server;
        using var runner = connect();
        using var other = connect();
        using var transaction = connect();
        RespAssert.Ok(other.Call("CONFIG", "SET", "busy-reply-threshold", "200"));
        RespAssert.Ok(transaction.Call("MULTI"));
        Assert.Equal("QUEUED", transaction.Call("SET", "t", "1").Text);
        Assert.Equal("NOTBUSY No scripts in execution right now.", other.Call("SCRIPT", "KILL").Text);
        runner.Send("EVAL", Loop, "0");
        RespValue busy = default!;
        Poll.Until(() => (busy = other.Call("GET", "k")).IsError, "GET to answer BUSY while the script runs");
        Assert.Equal("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", busy.Text);
        Assert.Equal("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", other.Call("SET", "k", "v").Text);
        Assert.Equal("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", other.Call("SCRIPT", "LOAD", "return 1").Text);
        Assert.Equal("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", other.Call("MSET", "a", "1", "b", "2", "c", "3").Text);
        // WATCH may run beside a busy script (allow-busy); EXEC may not, and the transaction is gone.
        RespAssert.Ok(other.Call("WATCH", "k"));
        Assert.Equal("EXECABORT Transaction discarded because of: BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", transaction.Call("EXEC").Text);
        RespAssert.Ok(other.Call("SCRIPT", "KILL"));
        var killed = runner.Read();
        Assert.StartsWith("ERR Script killed by user with SCRIPT KILL... script: ", killed.Text);
        Assert.EndsWith(", on @user_script:1.", killed.Text);
        // pcall cannot swallow the kill: the script is stopped all the same.
        runner.Send("EVAL", "while true do pcall(function() " + Loop + " end) end", "0");
        Poll.Until(() => other.Call("GET", "k").IsError, "GET to answer BUSY again");
        RespAssert.Ok(other.Call("SCRIPT", "KILL"));
        Assert.StartsWith("ERR Script killed by user with SCRIPT KILL...", runner.Read().Text);
        // Afterwards everything runs again, scripts included; nothing of the transaction ran.
        RespAssert.Ok(other.Call("SET", "k", "v"));
        RespAssert.Null(other.Call("GET", "t"));
        RespAssert.Integer(3, runner.Call("EVAL", "return 3", "0"));
    }

    [Fact]
    public void AScriptThatWroteCannotBeKilledButShutdownNosaveEndsTheServer()
    {
        using var server = ServerProcess.Start("--busy-reply-threshold", "200");
        using var runner = server.Connect();
        using var other = server.Connect();
        runner.Send("EVAL", "redis.call('set', 'w', '1') " + Loop, "0");
        Poll.Until(() => other.Call("PING").IsError, "PING to answer BUSY");
        Assert.Equal("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.",
            other.Call("SCRIPT", "KILL").Text);
        other.Send("SHUTDOWN", "NOSAVE");
        Poll.Until(() => server.HasExited, "the server to exit on SHUTDOWN NOSAVE", 15_000);
    }

    [Fact]
    public void WritesReachTheAofAsMultiExecAndReplayWithoutTheScript()
    {
        using var dir = new TempDirectory();
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Integer(2, c.Call("EVAL", "redis.call('set', KEYS[1], ARGV[1]) redis.call('set', 'undeclared', 'u') return redis.call('incr', 'n') + 1", "1", "k", "v"));
            RespAssert.Ok(c.Call("EVAL", "return redis.call('set', 'single', 's')", "0"));
            RespAssert.Bulk("v", c.Call("EVAL", "return redis.call('get', 'k')", "0"));
            string aof = ReadAof(dir.Path);
            Assert.DoesNotContain("EVAL", aof, StringComparison.OrdinalIgnoreCase);
            Assert.Contains("*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n*3\r\n$3\r\nset\r\n$10\r\nundeclared\r\n$1\r\nu\r\n*2\r\n$4\r\nincr\r\n$1\r\nn\r\n*1\r\n$4\r\nEXEC\r\n", aof);
            // One write is atomic alone: not wrapped, as Redis 7 propagates it.
            Assert.Contains("EXEC\r\n*3\r\n$3\r\nset\r\n$6\r\nsingle\r\n$1\r\ns\r\n", aof);
        }
        AofRestart.AssertLoads(dir.Path, 4, ("k", "v"), ("undeclared", "u"), ("n", "1"), ("single", "s"));
    }

    [Fact]
    public async Task AScriptIsAtomicOverKeysItNeverDeclared()
    {
        using var server = ServerProcess.Start();
        using var setup = server.Connect();
        // Keys spread over the shards; the script moves one unit between two of them, declaring neither.
        for (int i = 0; i < 32; i++)
            RespAssert.Ok(setup.Call("SET", "acct" + i, "100"));
        const string transfer = "local a = 'acct' .. math.random(0, 31) local b = 'acct' .. math.random(0, 31) " +
            "redis.call('decr', a) for i = 1, 2000 do end redis.call('incr', b) return 1";
        const string total = "local s = 0 for i = 0, 31 do s = s + tonumber(redis.call('get', 'acct' .. i)) end return s";
        using var stop = new CancellationTokenSource();
        var writers = Enumerable.Range(0, 3).Select(_ => Task.Run(() =>
        {
            using var c = server.Connect();
            while (!stop.IsCancellationRequested)
                RespAssert.Integer(1, c.Call("EVAL", transfer, "0"));
        })).ToArray();
        using var reader = server.Connect();
        var watch = Stopwatch.StartNew();
        int reads = 0;
        while (watch.ElapsedMilliseconds < 2000)
        {
            RespAssert.Integer(3200, reader.Call("EVAL", total, "0"));
            var values = reader.Call(["MGET", .. Enumerable.Range(0, 32).Select(i => "acct" + i)]).Array;
            Assert.Equal(3200, values.Sum(v => long.Parse(v.Text!)));
            reads++;
        }
        stop.Cancel();
        await Task.WhenAll(writers);
        Assert.True(reads > 10, $"only {reads} reads ran");
    }

    [Fact]
    public void MonitorShowsTheScriptAndItsCommandsAsRedisDoes()
    {
        List<string> Lines(string target)
        {
            var (server, connect) = ServerTarget.Start(target);
            using var _ = server;
            using var monitor = connect();
            using var c = connect();
            RespAssert.Ok(monitor.Call("MONITOR"));
            c.Call("EVAL", "redis.call('set', KEYS[1], 'v') redis.call('select', 3) return redis.call('get', KEYS[1])", "1", "k");
            c.Call("ECHO", "end");
            var lines = new List<string>();
            while (true)
            {
                string line = monitor.Read().Text!;
                string shown = line[(line.IndexOf(' ') + 1)..];
                shown = System.Text.RegularExpressions.Regex.Replace(shown, @"127\.0\.0\.1:\d+", "client");
                lines.Add(shown);
                if (shown.Contains("\"ECHO\"", StringComparison.OrdinalIgnoreCase))
                    return lines;
            }
        }
        var ours = Lines("diagnostics-server");
        var redis = Lines("redis-server");
        Assert.Equal(redis, ours);
        Assert.Contains("[0 lua] \"set\" \"k\" \"v\"", ours);
        Assert.Contains("[3 lua] \"get\" \"k\"", ours);
    }

    [Fact]
    public void TheVmsMemoryIsCountedAndFreedWithTheScripts()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        long Field(string name) => long.Parse(InfoFields.Get(c, "memory", name));
        long vm = Field("used_memory_vm_eval");
        Assert.True(vm > 0, "the VM's own memory is counted");
        Assert.Equal(vm, Field("used_memory_lua"));
        Assert.Equal(0, Field("number_of_cached_scripts"));
        long before = Field("used_memory");
        // About 8 MB of strings, garbage once the script returns.
        RespAssert.Integer(20000, c.Call("EVAL", "local t = {} for i = 1, 20000 do t[i] = string.rep('x', 400) .. i end return #t", "0"));
        Assert.Equal(1, Field("number_of_cached_scripts"));
        Assert.True(Field("used_memory_scripts_eval") > 0);
        RespAssert.Ok(c.Call("SCRIPT", "FLUSH"));
        Assert.Equal(0, Field("used_memory_scripts_eval"));
        Assert.Equal(0, Field("number_of_cached_scripts"));
        Assert.True(Field("used_memory") < before + 4_000_000, "the VM's garbage is collected, not kept");
    }

    /// <summary>
    /// Client-side caching counts a script's reads for its caller, as Redis 7.2 does (script_caller);
    /// EVAL_RO's declared keys are not remembered by themselves. Not side by side: Debian's Redis
    /// 7.0.15 remembers the EVAL's declared keys instead of the keys its script read, which 7.2 fixed.
    /// </summary>
    [Fact]
    public void AScriptsReadsAreTrackedForItsCaller()
    {
        using var server = ServerProcess.Start();
        using var tracked = server.Connect();
        using var writer = server.Connect();
        Assert.Equal('%', tracked.Call("HELLO", "3").Kind);
        RespAssert.Ok(tracked.Call("CLIENT", "TRACKING", "ON"));
        RespAssert.Ok(writer.Call("MSET", "read", "1", "declared", "2"));
        RespAssert.Bulk("1", tracked.Call("EVAL", "return redis.call('get', 'read')", "0"));
        RespAssert.Integer(5, tracked.Call("EVAL_RO", "return 5", "1", "declared"));
        RespAssert.Ok(writer.Call("SET", "declared", "changed"));
        RespAssert.Ok(writer.Call("SET", "read", "changed"));
        var push = tracked.Read();
        Assert.Equal('>', push.Kind);
        Assert.Equal("invalidate", push.Array[0].Text);
        Assert.Equal("read", push.Array[1].Array[0].Text);
        Assert.Equal("PONG", tracked.Call("PING").Text); // nothing for "declared" came before it
    }

    private static string ReadAof(string dir)
    {
        var text = new StringBuilder();
        foreach (string file in Directory.GetFiles(Path.Combine(dir, "appendonlydir"), "*.incr.aof"))
            text.Append(File.ReadAllText(file));
        return text.ToString();
    }
}
