using System.Diagnostics;
using System.Text.RegularExpressions;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>TIME, LASTSAVE, SHUTDOWN and DEBUG.</summary>
public sealed class ServerCommandTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public void TimeReturnsSecondsAndMicroseconds()
    {
        using var c = shared.Connect();
        var reply = c.Call("TIME");
        Assert.Equal(2, reply.Array.Count);
        Assert.All(reply.Array, part => Assert.Equal('$', part.Kind));
        long seconds = long.Parse(reply.Array[0].Text!);
        long micros = long.Parse(reply.Array[1].Text!);
        long now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        Assert.InRange(seconds, now - 60, now + 60);
        Assert.InRange(micros, 0, 999_999);
        RespAssert.Error("ERR wrong number of arguments for 'time' command", c.Call("TIME", "x"));
    }

    [Fact]
    public void LastSaveIsAUnixTimestampNotInTheFuture()
    {
        using var c = shared.Connect();
        var reply = c.Call("LASTSAVE");
        Assert.Equal(':', reply.Kind);
        Assert.InRange(reply.Integer, DateTimeOffset.UtcNow.ToUnixTimeSeconds() - 3600, DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 1);
    }

    [Fact]
    public void ShutdownClosesEveryClientWithoutReplyAndExitsZero()
    {
        using var server = ServerProcess.Start();
        using var bystander = server.Connect();
        RespAssert.Simple("PONG", bystander.Call("PING"));
        using var c = server.Connect();
        c.Send("SHUTDOWN");
        Assert.True(c.IsClosedByServer(30_000), "the connection that sent SHUTDOWN got a reply instead of being closed");
        Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), $"server did not exit after SHUTDOWN:\n{server.Output}");
        Assert.Equal(0, server.ExitCode);
        Assert.True(bystander.IsClosedByServer(), "another client stayed connected after SHUTDOWN");
    }

    [Fact]
    public void ShutdownNoSaveNowForceAlsoExits()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        c.Send("SHUTDOWN", "NOSAVE", "NOW", "FORCE");
        Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), $"server did not exit after SHUTDOWN NOSAVE NOW FORCE:\n{server.Output}");
        Assert.Equal(0, server.ExitCode);
    }

    [Fact]
    public void ShutdownRejectsBadOptionsAndHasNothingToAbort()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR syntax error", c.Call("SHUTDOWN", "LATER"));
        RespAssert.Error("ERR syntax error", c.Call("SHUTDOWN", "SAVE", "NOSAVE"));
        RespAssert.Error("ERR syntax error", c.Call("SHUTDOWN", "NOW", "ABORT"));
        RespAssert.Error("ERR No shutdown in progress.", c.Call("SHUTDOWN", "ABORT"));
        RespAssert.Simple("PONG", c.Call("PING"));
        Assert.False(shared.Server.HasExited);
    }

    [Fact]
    public void DebugSleepKeepsTheWholeServerBusy()
    {
        using var sleeper = shared.Connect();
        using var other = shared.Connect();
        RespAssert.Ok(other.Call("SET", "debug:sleep:key", "v"));
        sleeper.Send("DEBUG", "SLEEP", "1.5");
        Thread.Sleep(300);
        var watch = Stopwatch.StartNew();
        RespAssert.Bulk("v", other.Call("GET", "debug:sleep:key"));
        watch.Stop();
        RespAssert.Ok(sleeper.Read());
        // The GET was sent while the server slept, so it could not be answered before the sleep ended.
        Assert.True(watch.ElapsedMilliseconds >= 700, $"GET answered after {watch.ElapsedMilliseconds} ms during DEBUG SLEEP 1.5");
    }

    [Fact]
    public void DebugSleepAcceptsFractionsAndIgnoresGarbage()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.01"));
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0"));
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "soon"));
    }

    [Fact]
    public void DebugObjectDescribesTheValue()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "debug:object:short", "hello"));
        RespAssert.Ok(c.Call("SET", "debug:object:int", "12"));
        RespAssert.Ok(c.Call("SET", "debug:object:long", new string('x', 100)));

        var shortValue = c.Call("DEBUG", "OBJECT", "debug:object:short");
        Assert.Equal('+', shortValue.Kind);
        Assert.Matches(new Regex(@"^Value at:0x[0-9a-f]+ refcount:1 encoding:embstr serializedlength:6 lru:\d+ lru_seconds_idle:\d+$"), shortValue.Text!);
        Assert.Matches(new Regex(@" encoding:int serializedlength:2 "), c.Call("DEBUG", "OBJECT", "debug:object:int").Text!);
        Assert.Matches(new Regex(@" encoding:raw serializedlength:102 "), c.Call("DEBUG", "OBJECT", "debug:object:long").Text!);
        RespAssert.Error("ERR no such key", c.Call("DEBUG", "OBJECT", "debug:object:missing"));
    }

    [Fact]
    public void DebugSetActiveExpireControlsBackgroundExpiry()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("DEBUG", "SET-ACTIVE-EXPIRE", "0"));
        RespAssert.Ok(c.Call("SET", "debug:expire:key", "v", "PX", "50"));
        Thread.Sleep(500);
        // Nothing touched the key and the cron may not expire it: it is still counted.
        Assert.Contains("db0:keys=1,expires=1", c.Call("INFO", "keyspace").Text);

        RespAssert.Ok(c.Call("DEBUG", "SET-ACTIVE-EXPIRE", "1"));
        var deadline = DateTime.UtcNow.AddSeconds(20);
        while (c.Call("INFO", "keyspace").Text!.Contains("db0:") && DateTime.UtcNow < deadline)
            Thread.Sleep(50);
        Assert.DoesNotContain("db0:", c.Call("INFO", "keyspace").Text);
        Assert.Contains("expired_keys:1\r\n", c.Call("INFO", "stats").Text);
    }

    [Fact]
    public void DebugHelpAndErrors()
    {
        using var c = shared.Connect();
        var help = c.Call("DEBUG", "HELP");
        RespAssert.Simple("DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", help.Array[0]);
        Assert.Contains(help.Array, line => line.Text == "OBJECT <key>");
        RespAssert.Error("ERR unknown subcommand or wrong number of arguments for 'NOPE'. Try DEBUG HELP.", c.Call("DEBUG", "NOPE"));
        RespAssert.Error("ERR unknown subcommand or wrong number of arguments for 'OBJECT'. Try DEBUG HELP.", c.Call("DEBUG", "OBJECT"));
        RespAssert.Error("ERR wrong number of arguments for 'debug' command", c.Call("DEBUG"));
        Assert.Contains(help.Array, line => line.Text == "RELOAD [option ...]");
        Assert.Contains(help.Array, line => line.Text == "LOADAOF");
        RespAssert.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.", c.Call("DEBUG", "RELOAD", "extra"));
        RespAssert.Error("ERR unknown subcommand or wrong number of arguments for 'LOADAOF'. Try DEBUG HELP.", c.Call("DEBUG", "LOADAOF", "extra"));
    }

    [Fact]
    public void DebugIsRefusedWhenDisabled()
    {
        using var server = ServerProcess.Start("--enable-debug-command", "no");
        using var c = server.Connect();
        RespAssert.Error("ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.",
            c.Call("DEBUG", "SLEEP", "0"));
    }
}
