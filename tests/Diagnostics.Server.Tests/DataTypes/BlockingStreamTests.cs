using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Blocked XREAD and XREADGROUP over real connections, each scenario run on this server and on
/// the real redis-server with every reply compared: "$" fixed when the reader blocked, every
/// reader of a key served by one XADD, a group's reader given new entries (and made their owner),
/// a group destroyed under its reader, timeouts, MULTI, and readers that stay blocked when an
/// XADD brings nothing for them. The AOF then holds the deliveries, not the blocking reads.
/// </summary>
public sealed class BlockingStreamTests
{
    private static void WaitBlocked(RespClient observer, int count)
        => Poll.Until(() => InfoFields.GetInt64(observer, "clients", "blocked_clients") == count, $"{count} blocked clients", 10_000);

    /// <summary>Runs <paramref name="scenario"/> against both servers, returning each one's transcript.</summary>
    private static void SameOnBoth(Func<Func<RespClient>, List<string>> scenario)
    {
        List<string> mine, theirs;
        using (var ours = ServerProcess.Start())
            mine = scenario(ours.Connect);
        using (var redis = RealRedisServer.Start())
            theirs = scenario(redis.Connect);
        Assert.Equal(theirs, mine);
    }

    [Fact]
    public void BlockedReadersAreServedByTheNextEntry()
    {
        SameOnBoth(connect =>
        {
            var log = new List<string>();
            using var writer = connect();
            using var first = connect();
            using var second = connect();
            using var other = connect();
            log.Add(writer.Call("XADD", "s", "1-0", "f", "old").ToString());
            // "$" is the last ID when each blocked: both see only what comes after.
            first.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$");
            second.Send("XREAD", "COUNT", "5", "BLOCK", "0", "STREAMS", "nokey", "s", "0-0", "$");
            other.Send("XREAD", "BLOCK", "0", "STREAMS", "elsewhere", "$");
            WaitBlocked(writer, 3);
            log.Add(writer.Call("XADD", "s", "2-0", "f", "new", "g", "7").ToString());
            log.Add(first.Read().ToString());
            log.Add(second.Read().ToString());
            // A key nobody's ID is below: the third reader stays.
            log.Add(InfoFields.GetInt64(writer, "clients", "blocked_clients").ToString());
            log.Add(writer.Call("XADD", "elsewhere", "5-0", "x", "y").ToString());
            log.Add(other.Read().ToString());
            return log;
        });
    }

    [Fact]
    public void GroupReadersGetNewEntriesAndOwnThem()
    {
        SameOnBoth(connect =>
        {
            var log = new List<string>();
            using var writer = connect();
            using var reader = connect();
            using var noack = connect();
            log.Add(writer.Call("XGROUP", "CREATE", "jobs", "g", "$", "MKSTREAM").ToString());
            log.Add(writer.Call("XGROUP", "CREATE", "jobs", "h", "$").ToString());
            reader.Send("XREADGROUP", "GROUP", "g", "worker", "BLOCK", "0", "STREAMS", "jobs", ">");
            noack.Send("XREADGROUP", "GROUP", "h", "other", "COUNT", "1", "NOACK", "BLOCK", "0", "STREAMS", "jobs", ">");
            WaitBlocked(writer, 2);
            log.Add(writer.Call("XADD", "jobs", "1-0", "task", "a").ToString());
            log.Add(reader.Read().ToString());
            log.Add(noack.Read().ToString());
            var pending = writer.Call("XPENDING", "jobs", "g");
            log.Add(pending.ToString());
            log.Add(writer.Call("XPENDING", "jobs", "h").ToString());
            log.Add(writer.Call("XINFO", "GROUPS", "jobs").ToString());
            // History reads never block, even with BLOCK.
            log.Add(reader.Call("XREADGROUP", "GROUP", "g", "worker", "BLOCK", "0", "STREAMS", "jobs", "0").ToString());
            return log;
        });
    }

    [Fact]
    public void DestroyedGroupAndTimeoutsEndTheWait()
    {
        SameOnBoth(connect =>
        {
            var log = new List<string>();
            using var writer = connect();
            using var reader = connect();
            log.Add(writer.Call("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM").ToString());
            reader.Send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "q", ">");
            WaitBlocked(writer, 1);
            log.Add(writer.Call("XGROUP", "DESTROY", "q", "g").ToString());
            log.Add(reader.Read().ToString());
            log.Add(reader.Call("XREAD", "BLOCK", "50", "STREAMS", "q", "$").ToString());
            log.Add(reader.Call("HELLO", "3").Kind.ToString());
            log.Add(reader.Call("XREAD", "BLOCK", "50", "STREAMS", "q", "$").ToString());
            log.Add(reader.Call("MULTI").ToString());
            log.Add(reader.Call("XREAD", "BLOCK", "0", "STREAMS", "q", "$").ToString());
            log.Add(reader.Call("EXEC").ToString());
            return log;
        });
    }

    [Fact]
    public void TheAofHoldsDeliveriesNotBlockingReads()
    {
        using var dir = new TempDirectory();
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var writer = server.Connect())
        using (var reader = server.Connect())
        {
            RespAssert.Ok(writer.Call("XGROUP", "CREATE", "jobs", "g", "$", "MKSTREAM"));
            reader.Send("XREADGROUP", "GROUP", "g", "worker", "BLOCK", "0", "STREAMS", "jobs", ">");
            WaitBlocked(writer, 1);
            Assert.False(writer.Call("XADD", "jobs", "7-0", "task", "a").IsError);
            Assert.Equal("7-0", reader.Read().Array[0].Array[1].Array[0].Array[0].Text);
            writer.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        string aof = File.ReadAllText(Directory.GetFiles(Path.Combine(dir.Path, "appendonlydir"), "*.incr.aof").Single());
        Assert.DoesNotContain("XREADGROUP", aof);
        Assert.Contains("XCLAIM", aof);
        using var again = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path);
        using var c = again.Connect();
        var pending = c.Call("XPENDING", "jobs", "g", "-", "+", "10").Array;
        Assert.Equal("7-0", pending.Single().Array[0].Text);
        Assert.Equal("worker", pending.Single().Array[1].Text);
    }
}
