using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>INFO errorstats counts every error reply under its code, as Redis 7; CONFIG RESETSTAT clears it.</summary>
public sealed class ErrorStatsTests
{
    [Fact]
    public void ErrorRepliesAreCountedByCode()
    {
        using var server = ServerProcess.Start("--requirepass", "pw");
        using var c = server.Connect();
        RespAssert.ErrorStartsWith("NOAUTH", c.Call("GET", "k"));
        RespAssert.ErrorStartsWith("WRONGPASS", c.Call("AUTH", "wrong"));
        RespAssert.Ok(c.Call("AUTH", "pw"));
        RespAssert.ErrorStartsWith("ERR unknown command", c.Call("NOSUCH"));
        RespAssert.ErrorStartsWith("ERR syntax error", c.Call("SET", "k", "v", "BOGUS"));
        RespAssert.ErrorStartsWith("ERR value is not an integer", c.Call("INCRBY", "k", "x"));
        // Muted replies still count, as in Redis.
        c.SendRaw(RespClient.EncodeAll(["CLIENT", "REPLY", "SKIP"], ["NOSUCH"]));
        RespAssert.Simple("PONG", c.Call("PING"));

        var stats = InfoFields.Read(c, "errorstats");
        Assert.Equal("count=4", stats["errorstat_ERR"]);
        Assert.Equal("count=1", stats["errorstat_NOAUTH"]);
        Assert.Equal("count=1", stats["errorstat_WRONGPASS"]);
        Assert.Equal(3, stats.Count);
        Assert.Equal("6", InfoFields.Get(c, "stats", "total_error_replies"));

        RespAssert.Ok(c.Call("CONFIG", "RESETSTAT"));
        Assert.Empty(InfoFields.Read(c, "errorstats"));
        Assert.Equal("0", InfoFields.Get(c, "stats", "total_error_replies"));
    }
}
