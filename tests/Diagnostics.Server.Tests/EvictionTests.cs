using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// maxmemory and its eviction policies, end to end over TCP, each test on a server of its own
/// (the limit is server-wide): memory stays at the limit while writes go on, the policy decides
/// which keys go (only keys with a TTL for volatile-*, the nearest expiry for volatile-ttl, cold
/// keys before hot ones for LRU and LFU), writes are refused with Redis's OOM error when nothing
/// may go, a lowered limit is reached without traffic, and evictions reach the AOF.
/// </summary>
public sealed class EvictionTests
{
    private const long Limit = 4 * 1024 * 1024;
    private const int ValueSize = 1000;
    // About one kilobyte per key: the limit holds a little under 4,000 of them.
    private const int KeysOverLimit = 12_000;
    // The last write may land before the next command evicts, and a hash table may be mid-growth.
    private const long Slack = 64 * 1024;
    private const string OomError = "OOM command not allowed when used memory > 'maxmemory'.";
    private static readonly string Value = new('v', ValueSize);

    public static TheoryData<string, string> PoliciesAndModes()
    {
        var data = new TheoryData<string, string>();
        foreach (var policy in new[] { "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl" })
            data.Add(policy, "inline");
        foreach (var policy in new[] { "allkeys-lru", "volatile-random", "volatile-ttl" })
            data.Add(policy, "executor");
        return data;
    }

    [Theory]
    [MemberData(nameof(PoliciesAndModes))]
    public void FillingBeyondMaxmemoryEvictsAndKeepsMemoryAtTheLimit(string policy, string mode)
    {
        using var server = Start(policy, "--execution-mode", mode);
        using var c = server.Connect();
        bool volatileOnly = policy.StartsWith("volatile-", StringComparison.Ordinal);
        long highest = 0;
        for (int from = 0; from < KeysOverLimit; from += 1000)
        {
            foreach (var reply in Fill(c, "fill", from, 1000, volatileOnly ? 100_000 : 0))
                RespAssert.Ok(reply);
            highest = Math.Max(highest, UsedMemory(c));
        }

        Assert.True(highest <= Limit + Slack, $"used_memory reached {highest} bytes with maxmemory {Limit} ({policy}, {mode})");
        Assert.True(InfoFields.GetInt64(c, "stats", "evicted_keys") > 0, $"nothing was evicted ({policy}, {mode})");
        // Every key written is either still there or counted as evicted (the cron may still be
        // evicting the last over-limit bytes between the two reads, hence the wait).
        Poll.Until(() => c.Call("DBSIZE").Integer + InfoFields.GetInt64(c, "stats", "evicted_keys") == KeysOverLimit,
            "keys left plus keys evicted add up to the keys written");
        var memory = InfoFields.Read(c, "memory");
        Assert.Equal(Limit.ToString(), memory["maxmemory"]);
        Assert.Equal(policy, memory["maxmemory_policy"]);
    }

    [Theory]
    [InlineData("inline")]
    [InlineData("executor")]
    public void WritesAcrossShardsEvictInTheShardsTheyHold(string mode)
    {
        using var server = Start("allkeys-lru", "--execution-mode", mode);
        using var c = server.Connect();
        // MSET of ten keys lands on several shards: it holds them all and evicts in each.
        long highest = 0;
        for (int from = 0; from < KeysOverLimit; from += 1000)
        {
            var commands = new List<string[]>();
            for (int i = from; i < from + 1000; i += 10)
            {
                var command = new List<string> { "MSET" };
                for (int k = i; k < i + 10; k++)
                    command.AddRange([$"multi:{k}", Value]);
                commands.Add([.. command]);
            }
            foreach (var reply in Pipeline.Run(c, commands))
                RespAssert.Ok(reply);
            highest = Math.Max(highest, UsedMemory(c));
        }
        Assert.True(highest <= Limit + Slack, $"used_memory reached {highest} bytes with maxmemory {Limit} ({mode})");
        Assert.True(InfoFields.GetInt64(c, "stats", "evicted_keys") > KeysOverLimit / 2);

        RespAssert.Ok(c.Call("CONFIG", "RESETSTAT"));
        Assert.Equal(0, InfoFields.GetInt64(c, "stats", "evicted_keys"));
    }

    /// <summary>
    /// A write whose own shard has nothing to evict while other shards do: Redis (one keyspace)
    /// evicts elsewhere and accepts it. Each round writes four 300 KB values, a and b and c and d,
    /// which put memory over a limit 1 MB above the empty server's, then a small key of its own:
    /// that key's shard is almost always one holding none of the four (16 shards), and only
    /// evicting from theirs makes room. Side by side with redis-server, neither refuses a write.
    /// </summary>
    [Theory]
    [InlineData("inline")]
    [InlineData("executor")]
    public void AWriteWhoseShardHasNothingToEvictEvictsFromTheOtherShards(string mode)
    {
        using var ours = ServerProcess.Start("--execution-mode", mode, "--shards", "16", "--hz", "1");
        using var redis = RealRedisServer.Start("--hz", "1");
        string big = new('v', 300_000);
        foreach (var (name, c) in new[] { ("ours", ours.Connect()), ("redis", redis.Connect()) })
        {
            using (c)
            {
                RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"));
                long empty = UsedMemory(c);
                RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory", (empty + 1024 * 1024).ToString()));
                var refused = new List<string>();
                for (int round = 0; round < 20; round++)
                {
                    List<string[]> commands = [["SET", "a", big], ["SET", "b", big], ["SET", "c", big], ["SET", "d", big], ["SET", $"small:{round}", "x"]];
                    var replies = Pipeline.Run(c, commands);
                    for (int i = 0; i < replies.Count; i++)
                    {
                        if (replies[i].IsError)
                        {
                            Assert.True(replies[i].Text == OomError, $"{name}: {replies[i]}");
                            refused.Add($"{commands[i][1]} (round {round})");
                        }
                    }
                }
                Assert.True(refused.Count == 0, $"{name} ({mode}) refused {refused.Count} of 100 writes with OOM while other shards held evictable keys: {string.Join(", ", refused)}");
                Assert.True(InfoFields.GetInt64(c, "stats", "evicted_keys") > 0, $"{name} evicted nothing");
            }
        }
    }

    [Theory]
    [InlineData("volatile-lru")]
    [InlineData("volatile-lfu")]
    [InlineData("volatile-random")]
    [InlineData("volatile-ttl")]
    public void VolatilePoliciesEvictOnlyKeysWithATtlThenRefuseWrites(string policy)
    {
        using var server = Start(policy);
        using var c = server.Connect();
        // A third of the room for keys that must stay, then twice the room in keys with a TTL.
        const int persistent = 1200;
        foreach (var reply in Fill(c, "keep", 0, persistent, 0))
            RespAssert.Ok(reply);
        foreach (var reply in Fill(c, "ttl", 0, 8000, 100_000))
            RespAssert.Ok(reply);
        Assert.True(InfoFields.GetInt64(c, "stats", "evicted_keys") > 0, "nothing was evicted");
        Assert.Equal(persistent, CountExisting(c, "keep", persistent));

        // Keys without a TTL can only take the room of the ones with a TTL; once none is left,
        // writes are refused.
        int accepted = 0;
        bool refusedWithNoneLeft = false;
        for (int round = 0; round < 100 && !refusedWithNoneLeft; round++)
        {
            bool noneLeft = ExpiringKeys(c) == 0;
            foreach (var reply in Fill(c, "more", round * 200, 200, 0))
            {
                if (reply.IsError)
                {
                    RespAssert.Error(OomError, reply);
                    refusedWithNoneLeft |= noneLeft;
                }
                else
                {
                    accepted++;
                }
            }
        }
        Assert.True(refusedWithNoneLeft, "writes were still accepted with no key with a TTL left");
        Assert.True(accepted > 0, "keys without a TTL never took the room of evicted ones");
        Assert.Equal(0, ExpiringKeys(c));
        Assert.Equal(persistent, CountExisting(c, "keep", persistent));
        Assert.Equal(persistent + accepted, c.Call("DBSIZE").Integer);
    }

    [Fact]
    public void VolatileTtlEvictsTheNearestExpiryFirst()
    {
        using var server = Start("volatile-ttl");
        using var c = server.Connect();
        // Enough keys that about a third must go, whatever a key costs under the allocator in use
        // (MEMORY USAGE of a 1,000-byte value with a TTL: 1,078 bytes under glibc, 1,313 in mimalloc's size classes):
        // past half, the hour-long keys would run out and month-long ones would have to go too.
        RespAssert.Ok(c.Call("SET", "probe", Value, "EX", "3600"));
        long perKey = c.Call("MEMORY", "USAGE", "probe").Integer;
        RespAssert.Integer(1, c.Call("DEL", "probe"));
        int count = (int)(Limit / perKey * 3 / 2) & ~1;
        // Interleaved: even keys expire in about an hour, odd ones in about a month.
        var commands = new List<string[]>(count);
        for (int i = 0; i < count; i++)
            commands.Add(["SET", $"ttl:{i}", Value, "EX", (i % 2 == 0 ? 3600 + i : 2_600_000 + i).ToString()]);
        foreach (var reply in Pipeline.Run(c, commands))
            RespAssert.Ok(reply);

        int soonLeft = 0, lateLeft = 0;
        for (int i = 0; i < count; i++)
        {
            if (c.Call("EXISTS", $"ttl:{i}").Integer == 1)
            {
                if (i % 2 == 0) soonLeft++;
                else lateLeft++;
            }
        }
        int evicted = count - soonLeft - lateLeft;
        Assert.True(evicted > 1000, $"only {evicted} keys were evicted");
        // Sampling is approximate, as in Redis: nearly all of them must be early expiries.
        Assert.True(lateLeft >= count / 2 * 95 / 100, $"{count / 2 - lateLeft} of the month-long keys were evicted, {count / 2 - soonLeft} of the hour-long ones");
    }

    [Fact]
    public void AllKeysLruKeepsTheKeysThatAreReadWhileColdOnesGo()
    {
        using var server = Start("allkeys-lru");
        using var c = server.Connect();
        const int hot = 200;
        foreach (var reply in Fill(c, "hot", 0, hot, 0))
            RespAssert.Ok(reply);
        var readHot = Enumerable.Range(0, hot).Select(i => new[] { "GET", $"hot:{i}" }).ToList();
        const int cold = 12_000;
        for (int from = 0; from < cold; from += 200)
        {
            foreach (var reply in Fill(c, "cold", from, 200, 0))
                RespAssert.Ok(reply);
            Pipeline.Run(c, readHot);
        }

        int hotLeft = CountExisting(c, "hot", hot);
        int coldLeft = CountExisting(c, "cold", cold);
        Assert.True(hotLeft >= hot * 90 / 100, $"only {hotLeft} of {hot} hot keys survived ({coldLeft} of {cold} cold ones)");
        Assert.True(coldLeft < cold / 2, $"{coldLeft} of {cold} cold keys survived");
    }

    [Fact]
    public void AllKeysLfuKeepsFrequentlyUsedKeys()
    {
        using var server = Start("allkeys-lfu");
        using var c = server.Connect();
        const int frequent = 200;
        foreach (var reply in Fill(c, "frequent", 0, frequent, 0))
            RespAssert.Ok(reply);
        var readFrequent = Enumerable.Range(0, frequent).Select(i => new[] { "GET", $"frequent:{i}" }).ToList();
        for (int round = 0; round < 60; round++)
            Pipeline.Run(c, readFrequent);
        long counter = c.Call("OBJECT", "FREQ", "frequent:0").Integer;
        Assert.True(counter > 5, $"60 reads left the LFU counter at {counter}");

        // Written once and never read again, as a scan or a bulk import would.
        const int once = 12_000;
        foreach (var reply in Fill(c, "once", 0, once, 0))
            RespAssert.Ok(reply);

        int frequentLeft = CountExisting(c, "frequent", frequent);
        int onceLeft = CountExisting(c, "once", once);
        Assert.True(frequentLeft >= frequent * 90 / 100, $"only {frequentLeft} of {frequent} frequently read keys survived ({onceLeft} of {once} others)");
        Assert.True(InfoFields.GetInt64(c, "stats", "evicted_keys") > 0, "nothing was evicted");
    }

    [Fact]
    public void LfuLogFactorZeroCountsEveryAccess()
    {
        // No decay: the counter's minute clock is coarse, as in Redis, so a SET at hh:mm:59.9 read at
        // hh:mm+1:00.0 would otherwise have lost a point to one "elapsed minute".
        using var server = Start("allkeys-lfu", "--lfu-log-factor", "0", "--lfu-decay-time", "0");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "counted", "v"));
        RespAssert.Integer(5, c.Call("OBJECT", "FREQ", "counted"));
        for (int i = 0; i < 10; i++)
            RespAssert.Bulk("v", c.Call("GET", "counted"));
        RespAssert.Integer(15, c.Call("OBJECT", "FREQ", "counted"));
    }

    [Fact]
    public void NoEvictionRefusesWritesWhileReadsAndDeletesGoOn()
    {
        using var server = Start("noeviction");
        using var c = server.Connect();
        int accepted = 0;
        RespValue? refusal = null;
        for (int i = 0; i < KeysOverLimit && refusal is null; i += 500)
        {
            foreach (var reply in Fill(c, "full", i, 500, 0))
            {
                if (reply.IsError)
                    refusal ??= reply;
                else
                    accepted++;
            }
        }
        Assert.NotNull(refusal);
        RespAssert.Error(OomError, refusal);
        // The pipelined refusal was decided while the pipeline's own buffers were counted; once
        // they drained memory may sit just under the limit, where Redis too accepts a write. And
        // at the limit, something freed between two writes (the cron finishing the key table's
        // incremental rehash lets its old bucket array go, as Redis's does) lets one more in. So
        // single writes top it up until a new key and an APPEND to an old one are refused in a row.
        for (int topUp = 0; ; topUp++)
        {
            Assert.True(topUp < 100, "100 more single writes were accepted after the refusal");
            var reply = c.Call("SET", $"full:top-up:{topUp}", Value);
            if (!reply.IsError)
            {
                accepted++;
                continue;
            }
            RespAssert.Error(OomError, reply);
            var another = c.Call("SET", $"another:{topUp}", "value");
            var append = c.Call("APPEND", $"full:{1 + topUp}", "more");
            if (another.IsError && append.IsError)
            {
                RespAssert.Error(OomError, another);
                RespAssert.Error(OomError, append);
                break;
            }
            if (!another.IsError)
                accepted++;
        }
        Assert.True(UsedMemory(c) <= Limit + Slack, "used_memory grew past the limit");

        RespAssert.Bulk(Value, c.Call("GET", "full:0"));
        RespAssert.Integer(1, c.Call("EXISTS", "full:1"));
        RespAssert.Integer(1, c.Call("DEL", "full:0"));
        Assert.Equal(accepted - 1, c.Call("DBSIZE").Integer);
        Assert.Equal(0, InfoFields.GetInt64(c, "stats", "evicted_keys"));
        long refusals = long.Parse(InfoFields.Parts(InfoFields.Get(c, "errorstats", "errorstat_OOM"))["count"]);
        Assert.True(refusals >= 3, $"errorstat_OOM counted {refusals} refusals");

        // Room made by deletes is usable again.
        for (int i = 0; i < 200; i++)
            c.Call("DEL", $"full:{i}");
        RespAssert.Ok(c.Call("SET", "another", "value"));
    }

    [Theory]
    [InlineData("inline")]
    [InlineData("executor")]
    public void LoweringMaxmemoryBelowUsedMemoryEvictsWithoutFurtherTraffic(string mode)
    {
        using var server = ServerProcess.Start("--maxmemory-policy", "allkeys-random", "--execution-mode", mode);
        using var c = server.Connect();
        foreach (var reply in Fill(c, "shrink", 0, 10_000, 0))
            RespAssert.Ok(reply);
        Assert.True(UsedMemory(c) > 2 * Limit, "the data set is too small for the test");

        RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory", "4mb"));
        // Redis starts evicting at once; here background passes do, without any command.
        Poll.Until(() => UsedMemory(c) <= Limit, $"used_memory is back under {Limit} ({mode})", 10_000);
        Assert.True(InfoFields.GetInt64(c, "stats", "evicted_keys") > 5000, "too few keys were evicted");
        Assert.True(InfoFields.GetInt64(c, "stats", "total_eviction_exceeded_time") >= 0);
        Poll.Until(() => InfoFields.GetInt64(c, "stats", "current_eviction_exceeded_time") == 0, "the over-limit stretch is closed");
    }

    [Fact]
    public void EvictedKeysStayDeletedAfterARestartWithAppendOnly()
    {
        using var dir = new TempDirectory();
        DatasetSnapshot kept;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path,
            "--maxmemory", Limit.ToString(), "--maxmemory-policy", "allkeys-lru"))
        using (var c = server.Connect())
        {
            foreach (var reply in Fill(c, "durable", 0, 8000, 0))
                RespAssert.Ok(reply);
            Assert.True(InfoFields.GetInt64(c, "stats", "evicted_keys") > 1000, "too few keys were evicted");
            // Any command may evict while memory is over the limit (as in Redis), and the
            // snapshot's own replies take memory: lift the limit so what is read is what stays.
            RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory", "0"));
            kept = DatasetSnapshot.Read(c);
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), "SHUTDOWN did not stop the server");
        }
        Assert.True(kept.Count < 8000);

        // Without a limit, so nothing the replay loads could be evicted again: the AOF alone decides.
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
            DatasetSnapshot.Read(c).AssertSameAs(kept, "after restart");
    }

    [Fact]
    public void MaxmemorySettingsParseAndReportAsRedis()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory", "1gb"));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "maxmemory"), "maxmemory", "1073741824");
        RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory", "100k"));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "maxmemory"), "maxmemory", "100000");
        RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory", "0"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value",
            c.Call("CONFIG", "SET", "maxmemory", "-1"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value",
            c.Call("CONFIG", "SET", "maxmemory", "lots"));

        RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LFU"));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "maxmemory-policy"), "maxmemory-policy", "allkeys-lfu");
        Assert.Equal("allkeys-lfu", InfoFields.Get(c, "memory", "maxmemory_policy"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: "
            + "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction",
            c.Call("CONFIG", "SET", "maxmemory-policy", "lru"));

        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument must be between 1 and 2147483647 inclusive",
            c.Call("CONFIG", "SET", "maxmemory-samples", "0"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'maxmemory-eviction-tenacity') - argument must be between 0 and 100 inclusive",
            c.Call("CONFIG", "SET", "maxmemory-eviction-tenacity", "101"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'lfu-log-factor') - argument must be between 0 and 2147483647 inclusive",
            c.Call("CONFIG", "SET", "lfu-log-factor", "-1"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'lfu-decay-time') - argument couldn't be parsed into an integer",
            c.Call("CONFIG", "SET", "lfu-decay-time", "soon"));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "maxmemory-samples"), "maxmemory-samples", "5");
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "maxmemory-eviction-tenacity"), "maxmemory-eviction-tenacity", "10");
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "lfu-log-factor"), "lfu-log-factor", "10");
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "lfu-decay-time"), "lfu-decay-time", "1");

        var memory = InfoFields.Read(c, "memory");
        Assert.Equal("0", memory["mem_not_counted_for_evict"]);
        var stats = InfoFields.Read(c, "stats");
        Assert.Equal("0", stats["evicted_keys"]);
        Assert.Equal("0", stats["evicted_clients"]);
    }

    private static ServerProcess Start(string policy, params string[] more)
        => ServerProcess.Start(["--maxmemory", Limit.ToString(), "--maxmemory-policy", policy, .. more]);

    private static List<RespValue> Fill(RespClient c, string prefix, int from, int count, int ttlSeconds)
    {
        var commands = new List<string[]>(count);
        for (int i = from; i < from + count; i++)
            commands.Add(ttlSeconds > 0 ? ["SET", $"{prefix}:{i}", Value, "EX", (ttlSeconds + i).ToString()] : ["SET", $"{prefix}:{i}", Value]);
        return Pipeline.Run(c, commands);
    }

    private static int CountExisting(RespClient c, string prefix, int count)
    {
        int found = 0;
        foreach (var reply in Pipeline.Run(c, Enumerable.Range(0, count).Select(i => new[] { "EXISTS", $"{prefix}:{i}" })))
            found += (int)reply.Integer;
        return found;
    }

    private static long UsedMemory(RespClient c) => InfoFields.GetInt64(c, "memory", "used_memory");

    private static long ExpiringKeys(RespClient c)
    {
        var keyspace = InfoFields.Read(c, "keyspace");
        return keyspace.TryGetValue("db0", out var db0) ? long.Parse(InfoFields.Parts(db0)["expires"]) : 0;
    }
}
