using System.Diagnostics;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// The blocking list and sorted set commands over real connections: served at once when data is
/// there, served by another client's write when it comes (oldest waiter first), timeouts with the
/// right null, keys deleted or replaced while waiting, clients killed, unblocked or hanging up,
/// commands pipelined behind a blocked one, destinations in another shard, and the AOF holding
/// the pops as their non-blocking forms.
/// </summary>
public sealed class BlockingCommandTests
{
    /// <summary>Waits until the server lists <paramref name="count"/> blocked clients.</summary>
    private static void WaitBlocked(RespClient observer, int count)
        => Poll.Until(() => InfoFields.GetInt64(observer, "clients", "blocked_clients") == count, $"{count} blocked clients", 10_000);

    [Fact]
    public void DataAlreadyThereIsServedAtOnce()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        c.Call("RPUSH", "ready:l", "a", "b");
        RespAssert.BulkArray(c.Call("BLPOP", "ready:none", "ready:l", "0"), "ready:l", "a");
        RespAssert.BulkArray(c.Call("BRPOP", "ready:l", "0"), "ready:l", "b");
        c.Call("ZADD", "ready:z", "1", "one", "2", "two");
        RespAssert.BulkArray(c.Call("BZPOPMAX", "ready:z", "0"), "ready:z", "two", "2");
        c.Call("SET", "ready:s", "v");
        RespAssert.Error("WRONGTYPE Operation against a key holding the wrong kind of value", c.Call("BLPOP", "ready:s", "0"));
        RespAssert.Error("ERR timeout is negative", c.Call("BLPOP", "ready:l", "-1"));
        RespAssert.Error("ERR timeout is not a float or out of range", c.Call("BLPOP", "ready:l", "soon"));
        RespAssert.Error("ERR numkeys should be greater than 0", c.Call("BLMPOP", "0", "0", "ready:l", "LEFT"));
    }

    [Fact]
    public void TimeoutsAnswerWithTheRightNull()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        var watch = Stopwatch.StartNew();
        var reply = c.Call("BLPOP", "timeout:l", "0.2");
        Assert.True(watch.ElapsedMilliseconds >= 190, $"BLPOP 0.2 returned after {watch.ElapsedMilliseconds} ms");
        Assert.Equal('*', reply.Kind);
        Assert.True(reply.IsNull);
        var move = c.Call("BLMOVE", "timeout:l", "timeout:d", "LEFT", "LEFT", "0.1");
        Assert.Equal('$', move.Kind);
        Assert.True(move.IsNull);
        Assert.True(c.Call("BZMPOP", "0.1", "1", "timeout:z", "MIN").IsNull);
        c.Call("HELLO", "3");
        Assert.Equal('_', c.Call("BRPOP", "timeout:l", "0.1").Kind);
        RespAssert.Integer(0, c.Call("EXISTS", "timeout:l", "timeout:d"));
    }

    [Fact]
    public void WaitersAreServedOldestFirst()
    {
        using var server = ServerProcess.Start();
        using var observer = server.Connect();
        var waiters = Enumerable.Range(0, 3).Select(_ => server.Connect()).ToList();
        try
        {
            for (int i = 0; i < waiters.Count; i++)
            {
                waiters[i].Send("BLPOP", "fair:q", "0");
                WaitBlocked(observer, i + 1);
            }
            // One push of three elements serves all three, in the order they blocked.
            RespAssert.Integer(3, observer.Call("RPUSH", "fair:q", "first", "second", "third"));
            RespAssert.BulkArray(waiters[0].Read(), "fair:q", "first");
            RespAssert.BulkArray(waiters[1].Read(), "fair:q", "second");
            RespAssert.BulkArray(waiters[2].Read(), "fair:q", "third");
            RespAssert.Integer(0, observer.Call("EXISTS", "fair:q"));

            // One element at a time: still oldest first; the others keep waiting.
            waiters[2].Send("BRPOP", "fair:q", "0");
            WaitBlocked(observer, 1);
            waiters[0].Send("BRPOP", "fair:q", "0");
            WaitBlocked(observer, 2);
            observer.Call("LPUSH", "fair:q", "x");
            RespAssert.BulkArray(waiters[2].Read(), "fair:q", "x");
            WaitBlocked(observer, 1);
            observer.Call("LPUSH", "fair:q", "y");
            RespAssert.BulkArray(waiters[0].Read(), "fair:q", "y");
        }
        finally
        {
            foreach (var w in waiters)
                w.Dispose();
        }
    }

    [Fact]
    public void AWaiterOnSeveralKeysIsServedByTheFirstThatFills()
    {
        using var server = ServerProcess.Start("--shards", "4");
        using var observer = server.Connect();
        using var waiter = server.Connect();
        waiter.Send("BLPOP", "multi:a", "multi:b", "multi:c", "0");
        WaitBlocked(observer, 1);
        observer.Call("RPUSH", "multi:c", "from-c");
        RespAssert.BulkArray(waiter.Read(), "multi:c", "from-c");
        // Served once: a later push to another of its keys stays in the list.
        observer.Call("RPUSH", "multi:a", "kept");
        RespAssert.BulkArray(observer.Call("LRANGE", "multi:a", "0", "-1"), "kept");
        WaitBlocked(observer, 0);
    }

    [Fact]
    public void DeletingOrReplacingTheKeyKeepsTheClientWaiting()
    {
        using var server = ServerProcess.Start();
        using var observer = server.Connect();
        using var waiter = server.Connect();
        waiter.Send("BLPOP", "replace:q", "0");
        WaitBlocked(observer, 1);
        RespAssert.Ok(observer.Call("SET", "replace:q", "a string"));
        RespAssert.Integer(1, observer.Call("DEL", "replace:q"));
        // A sorted set is not what BLPOP waits for.
        observer.Call("ZADD", "replace:q", "1", "m");
        Thread.Sleep(200);
        WaitBlocked(observer, 1);
        observer.Call("DEL", "replace:q");
        observer.Call("RPUSH", "replace:q", "finally");
        RespAssert.BulkArray(waiter.Read(), "replace:q", "finally");
    }

    [Fact]
    public void PipelinedCommandsWaitBehindABlockedOne()
    {
        using var server = ServerProcess.Start();
        using var observer = server.Connect();
        using var waiter = server.Connect();
        waiter.SendRaw(RespClient.EncodeAll(["BLPOP", "pipe:q", "0"], ["SET", "pipe:after", "ran"], ["GET", "pipe:after"]));
        WaitBlocked(observer, 1);
        Thread.Sleep(100);
        RespAssert.Null(observer.Call("GET", "pipe:after"));
        observer.Call("RPUSH", "pipe:q", "go");
        RespAssert.BulkArray(waiter.Read(), "pipe:q", "go");
        RespAssert.Ok(waiter.Read());
        RespAssert.Bulk("ran", waiter.Read());
    }

    [Fact]
    public void KilledUnblockedAndVanishedClientsStopWaiting()
    {
        using var server = ServerProcess.Start();
        using var observer = server.Connect();

        using (var killed = server.Connect())
        {
            long id = killed.Call("CLIENT", "ID").Integer;
            killed.Send("BLPOP", "gone:q", "0");
            WaitBlocked(observer, 1);
            RespAssert.Integer(1, observer.Call("CLIENT", "KILL", "ID", id.ToString()));
            Assert.True(killed.IsClosedByServer(), "a killed blocked client's connection stayed open");
            WaitBlocked(observer, 0);
        }

        using (var unblocked = server.Connect())
        {
            long id = unblocked.Call("CLIENT", "ID").Integer;
            unblocked.Send("BLPOP", "gone:q", "0");
            WaitBlocked(observer, 1);
            Assert.Contains("flags=b", observer.Call("CLIENT", "LIST", "ID", id.ToString()).Text);
            RespAssert.Integer(1, observer.Call("CLIENT", "UNBLOCK", id.ToString()));
            Assert.True(unblocked.Read().IsNull);
            unblocked.Send("BRPOP", "gone:q", "0");
            WaitBlocked(observer, 1);
            RespAssert.Integer(1, observer.Call("CLIENT", "UNBLOCK", id.ToString(), "ERROR"));
            RespAssert.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK", unblocked.Read());
            RespAssert.Integer(0, observer.Call("CLIENT", "UNBLOCK", id.ToString()));
            RespAssert.Ok(unblocked.Call("SET", "gone:still-usable", "yes"));
        }

        var vanished = server.Connect();
        vanished.Send("BLPOP", "gone:q", "0");
        WaitBlocked(observer, 1);
        vanished.Dispose();
        // The server notices the hang-up (it checks a blocked connection once a second).
        WaitBlocked(observer, 0);
        observer.Call("RPUSH", "gone:q", "nobody-took-it");
        RespAssert.BulkArray(observer.Call("LRANGE", "gone:q", "0", "-1"), "nobody-took-it");
    }

    [Fact]
    public void EveryBlockingFormIsServedWithItsReplyShape()
    {
        using var server = ServerProcess.Start("--shards", "4");
        using var observer = server.Connect();
        using var w = server.Connect();

        w.Send("BLMPOP", "0", "2", "forms:a", "forms:b", "RIGHT", "COUNT", "2");
        WaitBlocked(observer, 1);
        observer.Call("RPUSH", "forms:b", "1", "2", "3");
        var lmpop = w.Read().Array;
        RespAssert.Bulk("forms:b", lmpop[0]);
        RespAssert.BulkArray(lmpop[1], "3", "2");

        w.Send("BZPOPMIN", "forms:z", "0");
        WaitBlocked(observer, 1);
        observer.Call("ZADD", "forms:z", "5", "five", "1", "one");
        RespAssert.BulkArray(w.Read(), "forms:z", "one", "1");

        w.Send("BZMPOP", "0", "1", "forms:z2", "MAX", "COUNT", "5");
        WaitBlocked(observer, 1);
        observer.Call("ZADD", "forms:z2", "1", "a", "2", "b");
        var zmpop = w.Read().Array;
        RespAssert.Bulk("forms:z2", zmpop[0]);
        Assert.Equal(2, zmpop[1].Array.Count);
        RespAssert.BulkArray(zmpop[1].Array[0], "b", "2");

        w.Send("BRPOPLPUSH", "forms:src", "forms:dst", "0");
        WaitBlocked(observer, 1);
        observer.Call("RPUSH", "forms:src", "x", "y");
        RespAssert.Bulk("y", w.Read());
        RespAssert.BulkArray(observer.Call("LRANGE", "forms:dst", "0", "-1"), "y");
    }

    [Fact]
    public void BlmoveIntoAnotherShardIsServed()
    {
        using var server = ServerProcess.Start("--shards", "8");
        using var observer = server.Connect();
        using var w = server.Connect();
        // With 8 shards, some of these 16 destinations are surely in another shard than the source.
        for (int i = 0; i < 16; i++)
        {
            w.Send("BLMOVE", "cross:src", $"cross:dst{i}", "LEFT", "RIGHT", "5");
            WaitBlocked(observer, 1);
            observer.Call("RPUSH", "cross:src", "e" + i);
            RespAssert.Bulk("e" + i, w.Read());
            RespAssert.BulkArray(observer.Call("LRANGE", $"cross:dst{i}", "0", "-1"), "e" + i);
        }
        RespAssert.Integer(0, observer.Call("EXISTS", "cross:src"));
    }

    [Fact]
    public void ServedPopsReachTheAofAsTheirNonBlockingForms()
    {
        using var dir = new TempDirectory();
        DatasetSnapshot expected;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var observer = server.Connect())
        using (var w = server.Connect())
        {
            w.Send("BLPOP", "aof:q", "0");
            WaitBlocked(observer, 1);
            observer.Call("RPUSH", "aof:q", "a", "b");
            RespAssert.BulkArray(w.Read(), "aof:q", "a");
            w.Send("BLMOVE", "aof:src", "aof:q", "LEFT", "LEFT", "0");
            WaitBlocked(observer, 1);
            observer.Call("RPUSH", "aof:src", "moved");
            RespAssert.Bulk("moved", w.Read());
            w.Send("BZPOPMAX", "aof:z", "0");
            WaitBlocked(observer, 1);
            observer.Call("ZADD", "aof:z", "1", "low", "9", "high");
            RespAssert.BulkArray(w.Read(), "aof:z", "high", "9");
            expected = DatasetSnapshot.Read(observer);
            observer.Send("SHUTDOWN", "NOSAVE");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        string log = string.Concat(Directory.GetFiles(Path.Combine(dir.Path, "appendonlydir"), "*.incr.aof").Select(File.ReadAllText));
        Assert.Contains("LPOP", log);
        Assert.Contains("LMOVE", log);
        Assert.Contains("ZPOPMAX", log);
        Assert.DoesNotContain("BLPOP", log, StringComparison.OrdinalIgnoreCase);
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
            DatasetSnapshot.Read(c).AssertSameAs(expected, "after replaying the served pops");
    }
}
