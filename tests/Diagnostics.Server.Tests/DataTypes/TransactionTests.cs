using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// MULTI/EXEC/WATCH beyond what the side-by-side script checks: WATCH invalidated by another
/// client, by the watcher itself, by expiry, by FLUSHALL and SWAPDB, and not by writes that
/// change nothing; transactions atomic across shards under concurrent readers; transactions in
/// the AOF; blocked clients served only after the EXEC that fed them.
/// </summary>
public sealed class TransactionTests
{
    private static RespValue Transaction(RespClient c, params string[][] commands)
    {
        RespAssert.Ok(c.Call("MULTI"));
        foreach (var command in commands)
            RespAssert.Simple("QUEUED", c.Call(command));
        return c.Call("EXEC");
    }

    [Fact]
    public void WatchIsInvalidatedByAnotherClientsWrite()
    {
        using var server = ServerProcess.Start("--shards", "4");
        using var c = server.Connect();
        using var other = server.Connect();
        foreach (string[] change in new[]
        {
            new[] { "SET", "w:k", "theirs" }, ["DEL", "w:k"], ["EXPIRE", "w:k", "100"], ["APPEND", "w:k", "x"],
            ["RENAME", "w:src", "w:k"], ["LPUSH", "w:list", "x"], ["HSET", "w:hash", "f", "v"], ["ZADD", "w:zset", "1", "m"],
        })
        {
            RespAssert.Ok(c.Call("SET", "w:k", "mine"));
            c.Call("SET", "w:src", "renamed");
            RespAssert.Ok(c.Call("WATCH", "w:k", "w:list", "w:hash", "w:zset"));
            Assert.False(other.Call(change).IsError, string.Join(' ', change));
            Assert.True(Transaction(c, ["SET", "w:k", "from-transaction"]).IsNull, $"EXEC ran after another client's {change[0]}");
            Assert.NotEqual("from-transaction", c.Call("GET", "w:k").Text);
        }

        // The watcher's own write counts too, as in Redis.
        RespAssert.Ok(c.Call("WATCH", "w:k"));
        RespAssert.Ok(c.Call("SET", "w:k", "own"));
        Assert.True(Transaction(c, ["SET", "w:k", "tx"]).IsNull);
    }

    [Fact]
    public void WritesThatChangeNothingAndOtherKeysLeaveTheWatchAlone()
    {
        using var server = ServerProcess.Start("--shards", "4");
        using var c = server.Connect();
        using var other = server.Connect();
        RespAssert.Ok(c.Call("SET", "q:k", "v"));
        RespAssert.Ok(c.Call("WATCH", "q:k"));
        RespAssert.Integer(0, other.Call("SETNX", "q:k", "x"));
        RespAssert.Integer(0, other.Call("DEL", "q:missing"));
        RespAssert.Integer(0, other.Call("HDEL", "q:k-hash", "f"));
        RespAssert.Ok(other.Call("SET", "q:other", "x"));
        RespAssert.Integer(0, other.Call("SINTERSTORE", "q:dest", "q:none1", "q:none2"));
        var done = Transaction(c, ["SET", "q:k", "tx"]);
        RespAssert.Ok(done.Array[0]);

        // UNWATCH forgets; so does EXEC itself.
        RespAssert.Ok(c.Call("WATCH", "q:k"));
        RespAssert.Ok(c.Call("UNWATCH"));
        RespAssert.Ok(other.Call("SET", "q:k", "changed"));
        RespAssert.Ok(Transaction(c, ["SET", "q:k", "after-unwatch"]).Array[0]);
        // Reading a key another STORE form used as a source does not touch it.
        c.Call("SADD", "q:set", "a");
        RespAssert.Ok(c.Call("WATCH", "q:set"));
        RespAssert.Integer(1, other.Call("SUNIONSTORE", "q:union", "q:set"));
        RespAssert.Integer(1, Transaction(c, ["SADD", "q:set", "b"]).Array[0]);
    }

    [Fact]
    public void WatchIsInvalidatedByExpiryButNotByAKeyAlreadyExpired()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        WatchWhileAlive(c, "e:k");
        Thread.Sleep(450); // past its 300 ms, without touching it: EXEC must notice on its own
        Assert.True(Transaction(c, ["SET", "e:other", "x"]).IsNull, "EXEC ran though a watched key expired meanwhile");

        // Active expiry deleting it in the background aborts as well (DBSIZE counts without touching keys).
        RespAssert.Ok(c.Call("FLUSHALL"));
        WatchWhileAlive(c, "e:k2");
        Poll.Until(() => c.Call("DBSIZE").Integer == 0, "active expiry to delete e:k2");
        Assert.True(Transaction(c, ["SET", "e:other", "x"]).IsNull, "EXEC ran though a watched key was expired by the cron");

        // A key that had already expired when watched cannot expire again.
        RespAssert.Ok(c.Call("DEBUG", "SET-ACTIVE-EXPIRE", "0"));
        RespAssert.Ok(c.Call("SET", "e:k3", "v", "PX", "50"));
        Thread.Sleep(150);
        RespAssert.Ok(c.Call("WATCH", "e:k3"));
        RespAssert.Ok(Transaction(c, ["SET", "e:other", "y"]).Array[0]);
    }

    /// <summary>
    /// Sets <paramref name="key"/> to expire soon and watches it while it still lives: on a loaded
    /// machine a short TTL can run out before WATCH arrives, and a key already expired when watched
    /// rightly does not abort EXEC, so the watch is retried until PTTL shows it was taken in time.
    /// </summary>
    private static void WatchWhileAlive(RespClient c, string key)
    {
        for (int attempt = 0; attempt < 10; attempt++)
        {
            RespAssert.Ok(c.Call("SET", key, "v", "PX", "300"));
            RespAssert.Ok(c.Call("WATCH", key));
            if (c.Call("PTTL", key).Integer > 0)
                return;
            RespAssert.Ok(c.Call("UNWATCH"));
        }
        Assert.Fail($"{key} expired before WATCH reached the server in 10 tries");
    }

    [Fact]
    public void FlushallAndSwapdbInvalidateWatches()
    {
        using var server = ServerProcess.Start("--shards", "4");
        using var c = server.Connect();
        using var other = server.Connect();
        c.Call("SET", "f:k", "v");
        RespAssert.Ok(c.Call("WATCH", "f:k"));
        RespAssert.Ok(other.Call("FLUSHALL"));
        Assert.True(Transaction(c, ["SET", "f:k", "x"]).IsNull);

        c.Call("SET", "f:k", "v");
        RespAssert.Ok(c.Call("WATCH", "f:k"));
        RespAssert.Ok(other.Call("SWAPDB", "0", "1"));
        Assert.True(Transaction(c, ["GET", "f:k"]).IsNull);
    }

    [Fact]
    public void MoveInvalidatesWatchesInBothDatabases()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        using var other = server.Connect();
        // Watched in the target database, where the key arrives.
        RespAssert.Ok(c.Call("SELECT", "1"));
        RespAssert.Ok(c.Call("WATCH", "m:k"));
        RespAssert.Ok(other.Call("SET", "m:k", "v"));
        RespAssert.Integer(1, other.Call("MOVE", "m:k", "1"));
        Assert.True(Transaction(c, ["GET", "m:k"]).IsNull);

        // Watched in the source database, where it leaves.
        RespAssert.Ok(c.Call("SELECT", "0"));
        RespAssert.Ok(other.Call("SET", "m:k2", "v"));
        RespAssert.Ok(c.Call("WATCH", "m:k2"));
        RespAssert.Integer(1, other.Call("MOVE", "m:k2", "1"));
        Assert.True(Transaction(c, ["GET", "m:k2"]).IsNull);

        // A MOVE that moves nothing leaves the watch alone.
        RespAssert.Ok(c.Call("WATCH", "m:absent"));
        RespAssert.Integer(0, other.Call("MOVE", "m:absent", "1"));
        Assert.Single(Transaction(c, ["GET", "m:absent"]).Array);
    }

    /// <summary>
    /// What Redis's processCommand refuses around a transaction, side by side with redis-server in
    /// RESP2 and RESP3: an EXEC with the wrong arity discards the transaction (EXECABORT and the
    /// reason); over maxmemory with nothing to evict no command is queued, and an EXEC whose queue
    /// holds a write that may grow memory is refused whole, never run halfway, while an EXEC of
    /// reads and a DISCARD still pass. Memory is pushed over the limit by a second client between
    /// the queueing and the EXEC, as an application meets it.
    /// </summary>
    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    public void RefusedExecAndQueueingMatchRedis(int protocol)
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        var transcripts = new List<List<string>>();
        foreach (var (c, admin) in new[] { (ours.Connect(), ours.Connect()), (redis.Connect(), redis.Connect()) })
        {
            using (c)
            using (admin)
            {
                if (protocol == 3)
                    Assert.False(c.Call("HELLO", "3").IsError);
                var transcript = new List<string>();
                void Say(params string[] command) => transcript.Add($"{string.Join(' ', command)} -> {c.Call(command)}");
                void Admin(params string[] command) => RespAssert.Ok(admin.Call(command));

                Admin("SET", "tx:k", "before");
                Say("MULTI"); Say("SET", "tx:k", "x"); Say("EXEC", "extra"); Say("EXEC"); Say("GET", "tx:k");

                Say("MULTI"); Say("SET", "tx:k", "during"); Say("INCR", "tx:n"); Say("GET", "tx:k");
                Admin("CONFIG", "SET", "maxmemory", "1");
                Say("EXEC");
                Say("GET", "tx:k"); Say("GET", "tx:n");

                Say("MULTI"); Say("GET", "tx:k"); Say("PING"); Say("DEL", "tx:k"); Say("EXEC");
                Say("MULTI"); Say("DISCARD");

                Admin("CONFIG", "SET", "maxmemory", "0");
                Say("MULTI"); Say("GET", "tx:k"); Say("EXISTS", "tx:k");
                Admin("CONFIG", "SET", "maxmemory", "1");
                Say("EXEC");
                Admin("CONFIG", "SET", "maxmemory", "0");
                transcripts.Add(transcript);
            }
        }
        Assert.Equal(transcripts[1].Count, transcripts[0].Count);
        for (int i = 0; i < transcripts[0].Count; i++)
            Assert.True(transcripts[0][i] == transcripts[1][i], $"RESP{protocol} step {i}\n  redis: {transcripts[1][i]}\n  ours:  {transcripts[0][i]}");
        Assert.Contains(transcripts[0], line => line.StartsWith("EXEC -> -EXECABORT Transaction discarded because of: OOM", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("inline")]
    [InlineData("executor")]
    public async Task TransactionsAreAtomicAcrossShards(string mode)
    {
        using var server = ServerProcess.Start("--shards", "4", "--execution-mode", mode);
        string[] keys = Enumerable.Range(0, 8).Select(i => "atomic:" + i).ToArray();
        using (var setup = server.Connect())
        {
            RespAssert.Ok(setup.Call(["MSET", .. keys.SelectMany(k => new[] { k, "0" })]));
            RespAssert.Ok(setup.Call("SET", "atomic:a", "1000"));
            RespAssert.Ok(setup.Call("SET", "atomic:b", "0"));
        }
        using var stop = new CancellationTokenSource();
        var writer = Task.Run(() =>
        {
            using var w = server.Connect();
            int rounds = 0;
            while (!stop.IsCancellationRequested)
            {
                var replies = Transaction(w, [.. keys.Select(k => new[] { "INCR", k }), ["DECRBY", "atomic:a", "1"], ["INCRBY", "atomic:b", "1"]]);
                Assert.Equal(keys.Length + 2, replies.Array.Count);
                rounds++;
            }
            return rounds;
        });
        int reads = 0;
        using (var reader = server.Connect())
        {
            var deadline = DateTime.UtcNow.AddSeconds(2);
            while (DateTime.UtcNow < deadline)
            {
                var values = reader.Call(["MGET", .. keys, "atomic:a", "atomic:b"]).Array.Select(v => long.Parse(v.Text!, CultureInfo.InvariantCulture)).ToList();
                Assert.True(values.Take(keys.Length).Distinct().Count() == 1, $"a reader saw a transaction half done: {string.Join(",", values)}");
                Assert.Equal(1000, values[^2] + values[^1]);
                reads++;
            }
        }
        stop.Cancel();
        int transactions = await writer;
        Assert.True(transactions > 10 && reads > 10, $"only {transactions} transactions and {reads} reads overlapped");
    }

    [Fact]
    public void TransactionsReachTheAofWholeAndEmptyOnesNotAtAll()
    {
        using var dir = new TempDirectory();
        DatasetSnapshot expected;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            Transaction(c, ["SET", "aof:a", "1"], ["RPUSH", "aof:l", "x", "y"], ["SELECT", "3"], ["HSET", "aof:h", "f", "v"]);
            RespAssert.Ok(c.Call("SELECT", "0"));
            Transaction(c, ["GET", "aof:a"], ["LRANGE", "aof:l", "0", "-1"]);
            Transaction(c, ["INCR", "aof:a"], ["LPUSH", "aof:a", "wrongtype"], ["RPOP", "aof:l"]);
            expected = DatasetSnapshot.Read(c);
            c.Send("SHUTDOWN", "NOSAVE");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        string log = string.Concat(Directory.GetFiles(Path.Combine(dir.Path, "appendonlydir"), "*.incr.aof").Select(File.ReadAllText));
        int multis = log.Split("MULTI").Length - 1;
        Assert.Equal(2, multis);
        Assert.Equal(2, log.Split("EXEC").Length - 1);
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
            DatasetSnapshot.Read(c).AssertSameAs(expected, "after replaying the transactions");
    }

    [Fact]
    public void BlockedClientsAreServedAfterTheExecThatFedThem()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        using var waiter = server.Connect();
        waiter.Send("BLPOP", "fed:q", "0");
        Poll.Until(() => InfoFields.GetInt64(c, "clients", "blocked_clients") == 1, "the client to block");
        var replies = Transaction(c, ["RPUSH", "fed:q", "a"], ["LLEN", "fed:q"], ["LRANGE", "fed:q", "0", "-1"]);
        // Inside the transaction the element was still there; the waiter took it after EXEC.
        RespAssert.Integer(1, replies.Array[0]);
        RespAssert.Integer(1, replies.Array[1]);
        RespAssert.BulkArray(replies.Array[2], "a");
        RespAssert.BulkArray(waiter.Read(), "fed:q", "a");
        RespAssert.Integer(0, c.Call("EXISTS", "fed:q"));
    }

    [Fact]
    public void ClientListShowsTheQueue()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        using var observer = server.Connect();
        long id = c.Call("CLIENT", "ID").Integer;
        RespAssert.Ok(c.Call("MULTI"));
        c.Call("SET", "a", "1");
        c.Call("SET", "b", "2");
        string line = observer.Call("CLIENT", "LIST", "ID", id.ToString(CultureInfo.InvariantCulture)).Text!;
        Assert.Contains("flags=x", line);
        Assert.Contains("multi=2", line);
        Assert.DoesNotContain("multi-mem=0 ", line);
        RespAssert.Ok(c.Call("DISCARD"));
        Assert.Contains("multi=-1", observer.Call("CLIENT", "LIST", "ID", id.ToString(CultureInfo.InvariantCulture)).Text);
    }
}
