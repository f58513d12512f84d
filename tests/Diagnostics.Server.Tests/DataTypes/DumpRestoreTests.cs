using System.Buffers.Binary;
using System.Text;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// DUMP and RESTORE against the real redis-server 7.0.15: the payloads are Redis's bytes where
/// Redis's order is the value's own (strings, integers, lists, intsets, sorted sets, listpack
/// hashes, HyperLogLogs, LZF-compressed values); every type and encoding restores both ways and reads back equal; the
/// error replies are Redis's, in RESP2 and RESP3; RESTORE's options, expiry, propagation and
/// events; and a few hundred corrupted payloads are refused without harm.
/// </summary>
public sealed class DumpRestoreTests
{
    private static readonly Encoding Bytes = Encoding.Latin1;   // one char per byte: payloads survive as strings

    /// <summary>The same encoding limits on both servers (Debian's redis-server raises hash-max-listpack-entries to 512).</summary>
    private static readonly string[][] SameLimits =
    [
        ["CONFIG", "SET", "hash-max-listpack-entries", "128"], ["CONFIG", "SET", "hash-max-listpack-value", "64"],
        ["CONFIG", "SET", "zset-max-listpack-entries", "128"], ["CONFIG", "SET", "zset-max-listpack-value", "64"],
        ["CONFIG", "SET", "set-max-intset-entries", "512"], ["CONFIG", "SET", "list-max-listpack-size", "-2"],
        ["CONFIG", "SET", "rdbcompression", "yes"],
    ];

    [Fact]
    public void PayloadsAreRedisBytesWhereTheOrderIsTheValuesOwn()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        using var a = ours.Connect();
        using var b = redis.Connect();
        var keys = new List<string>();
        foreach (var c in new[] { a, b })
        {
            foreach (var command in SameLimits)
                RespAssert.Ok(c.Call(command));
        }

        void Both(params string[] command)
        {
            var mine = a.Call(command);
            var theirs = b.Call(command);
            Assert.True(mine.ToString() == theirs.ToString(), $"{string.Join(' ', command)}: redis {theirs}, ours {mine}");
        }

        // Strings: every integer encoding and its edges, text that only looks like an integer,
        // short and long text, compressible and not.
        string[] strings =
        [
            "", "hello", "0", "-1", "127", "-128", "128", "32767", "-32768", "32768", "2147483647", "-2147483648",
            "2147483648", "123456789012", "-0", "007", "+1", " 1", "1.5", "12345678901234567890",
            new string('a', 21), new string('a', 100), "abcabcabcabcabcabcabcabcabcab",
            string.Concat(Enumerable.Range(0, 2000).Select(i => (i % 97).ToString() + ",")),
            string.Concat(Enumerable.Range(0, 40).Select(i => (char)('!' + (i * 37 % 90)))),
        ];
        for (int i = 0; i < strings.Length; i++)
        {
            Both("SET", $"string:{i}", strings[i]);
            keys.Add($"string:{i}");
        }
        Both("SET", "12345", "an integer-looking key");
        keys.Add("12345");

        // Lists: one listpack node, integers of every listpack width, several 8 KB nodes, an element
        // larger than a node, and nodes cut by count.
        Both("RPUSH", "list:small", "a", "b", "1", "-1", "127", "128", "-4096", "4095", "40000", "-40000", "9000000", "3000000000", "-0", "01");
        Both(["RPUSH", "list:nodes", .. Enumerable.Range(0, 3000).Select(i => $"element-{i}-{i * 7919 % 1000}")]);
        Both("RPUSH", "list:wide", "x", new string('w', 10_000), "y", "z");
        Both(["RPUSH", "list:hundreds", .. Enumerable.Range(0, 500).Select(i => new string((char)('a' + i % 26), 100 + i % 300))]);
        keys.AddRange(["list:small", "list:nodes", "list:wide", "list:hundreds"]);
        foreach (var c in new[] { a, b })
            RespAssert.Ok(c.Call("CONFIG", "SET", "list-max-listpack-size", "5"));
        Both(["RPUSH", "list:count", .. Enumerable.Range(0, 23).Select(i => i.ToString())]);
        AssertSameDump(a, b, "list:count");
        foreach (var c in new[] { a, b })
            RespAssert.Ok(c.Call("CONFIG", "SET", "list-max-listpack-size", "-1"));
        Both(["RPUSH", "list:4k", .. Enumerate(400, i => $"v{i}")]);
        AssertSameDump(a, b, "list:4k");
        foreach (var c in new[] { a, b })
            RespAssert.Ok(c.Call("CONFIG", "SET", "list-max-listpack-size", "-2"));

        // Intsets of each width, and one of 512 members (the limit).
        Both("SADD", "intset:16", "3", "1", "2", "-5", "32767");
        Both("SADD", "intset:32", "1", "70000", "-70000");
        Both("SADD", "intset:64", "1", "-9223372036854775808", "9223372036854775807");
        Both(["SADD", "intset:512", .. Enumerate(512, i => (i * 1000003L - 250_000_000L).ToString())]);
        keys.AddRange(["intset:16", "intset:32", "intset:64", "intset:512"]);

        // Sorted sets as listpacks (scores integral, fractional, huge, infinite) and as skip lists.
        Both("ZADD", "zset:small", "1", "a", "2.5", "b", "0.1", "c", "-3", "d", "1e20", "e", "123456789012345678", "f",
            "inf", "g", "-inf", "h", "0.30000000000000004", "i", "1.7976931348623157e308", "j", "-0", "k", "1", "aa");
        Both(["ZADD", "zset:large", .. Enumerable.Range(0, 200).SelectMany(i => new[] { (i % 17 + i / 1000.0).ToString("R", System.Globalization.CultureInfo.InvariantCulture), $"member:{i}" })]);
        Both("ZADD", "zset:long-member", "1", "m", "2", new string('m', 65));
        keys.AddRange(["zset:small", "zset:large", "zset:long-member"]);

        // Listpack hashes (insertion order, kept through updates and deletes), HyperLogLogs sparse and dense.
        Both("HSET", "hash:one", "field", "value");
        Both("HSET", "hash:small", "f1", "v1", "f2", "2", "f3", "", "-7", "40000");
        Both("HSET", "hash:small", "f1", "a longer value", "f4", "4");
        Both("HDEL", "hash:small", "f2");
        Both(["HSET", "hash:128", .. Enumerate(128, i => $"field:{i}").SelectMany(f => new[] { f, f + "-value" })]);
        Both(["PFADD", "hll:sparse", .. Enumerate(50, i => $"e{i}")]);
        Both(["PFADD", "hll:dense", .. Enumerate(5000, i => $"e{i}")]);
        keys.AddRange(["hash:one", "hash:small", "hash:128", "hll:sparse", "hll:dense"]);

        foreach (var key in keys)
            AssertSameDump(a, b, key);

        // With rdbcompression off nothing is compressed, lists' listpacks included.
        foreach (var c in new[] { a, b })
            RespAssert.Ok(c.Call("CONFIG", "SET", "rdbcompression", "no"));
        foreach (var key in new[] { "string:21", "string:23", "list:nodes", "zset:small" })
            AssertSameDump(a, b, key);
    }

    [Fact]
    public void EveryTypeAndEncodingRestoresBothWays()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        using var a = ours.Connect();
        using var b = redis.Connect();
        var commands = new List<string[]>
        {
            new[] { "SET", "string", "hello" }, new[] { "SET", "integer", "-30000" }, new[] { "SET", "long", new string('z', 5000) },
            new[] { "RPUSH", "list", "a", "1", "b" },
            Enumerate(3000, i => $"node element {i}").Prepend("list:big").Prepend("RPUSH").ToArray(),
            new[] { "SADD", "intset", "1", "2", "3" },
            new[] { "SADD", "set", "a", "b", "1" },
            Enumerate(700, i => i.ToString()).Prepend("set:ints-over-limit").Prepend("SADD").ToArray(),
            Enumerate(300, i => $"m{i}").Prepend("set:big").Prepend("SADD").ToArray(),
            new[] { "HSET", "hash", "f1", "v1", "f2", "2", "f3", "" },
            Enumerate(200, i => $"f{i}").SelectMany(f => new[] { f, f + "-value" }).Prepend("hash:many").Prepend("HSET").ToArray(),
            new[] { "HSET", "hash:long-value", "f", new string('v', 100) },
            new[] { "ZADD", "zset", "1", "a", "2", "b", "2.5", "c" },
            Enumerate(200, i => i.ToString()).SelectMany(i => new[] { i, "member" + i }).Prepend("zset:big").Prepend("ZADD").ToArray(),
            Enumerate(100, i => $"x{i}").Prepend("hll").Prepend("PFADD").ToArray(),
        };
        commands.AddRange(StreamCommands("stream"));
        commands.Add(["XADD", "stream:empty", "MAXLEN", "0", "1-1", "f", "v"]);
        foreach (var c in new[] { a, b })
        {
            foreach (var command in SameLimits)
                RespAssert.Ok(c.Call(command));
            foreach (var command in commands)
                Assert.False(c.Call(command).IsError, string.Join(' ', command));
        }

        var keys = a.Call("KEYS", "*").Array.Select(k => k.Text!).Order(StringComparer.Ordinal).ToList();
        Assert.Equal(keys, b.Call("KEYS", "*").Array.Select(k => k.Text!).Order(StringComparer.Ordinal));
        // Each server's keys restored into database 1 of the other.
        foreach (var key in keys)
        {
            byte[] fromOurs = a.CallForBytes("DUMP", key);
            byte[] fromRedis = b.CallForBytes("DUMP", key);
            RespAssert.Ok(b.Call(Args("SELECT", "1")));
            RespAssert.Ok(b.Call(Args("RESTORE", key, "0", fromOurs)));
            RespAssert.Ok(b.Call(Args("SELECT", "0")));
            RespAssert.Ok(a.Call(Args("SELECT", "1")));
            RespAssert.Ok(a.Call(Args("RESTORE", key, "0", fromRedis)));
            RespAssert.Ok(a.Call(Args("SELECT", "0")));
        }
        // A restored value is charged like the one it copies: no more, and at least half (values
        // grown by writes keep spare room, an emptied stream its node array; a copy is exact).
        foreach (var key in keys)
        {
            long original = a.Call("MEMORY", "USAGE", key).Integer;
            RespAssert.Ok(a.Call("SELECT", "1"));
            long restored = a.Call("MEMORY", "USAGE", key).Integer;
            RespAssert.Ok(a.Call("SELECT", "0"));
            Assert.True(restored >= original / 2 && restored <= original * 6 / 5, $"{key}: MEMORY USAGE {original}, restored {restored}");
        }
        foreach (var (name, c) in new[] { ("ours", a), ("redis", b) })
        {
            var snapshot = DatasetSnapshot.Read(c);
            foreach (var key in keys)
                Assert.True(snapshot.Value(0, key) == snapshot.Value(1, key),
                    $"{name}: {key} restored from the other server differs:\n  own:      {snapshot.Value(0, key)}\n  restored: {snapshot.Value(1, key)}");
        }
    }

    [Fact]
    public void ErrorsAndEdgeCasesMatchRedis()
    {
        byte[] hello = Payload([0, 5, .. "hello"u8]);
        byte[] badChecksum = [.. hello];
        badChecksum[^1] ^= 1;
        byte[] version13 = Payload([0, 5, .. "hello"u8], version: 13);
        byte[] version65535 = Payload([0, 5, .. "hello"u8], version: 65535);
        var cases = new List<byte[][]>
        {
            Args("SET", "taken", "v"),
            Args("RESTORE", "k", "0", hello),
            Args("GET", "k"),
            Args("RESTORE", "k", "0", hello),                       // BUSYKEY
            Args("RESTORE", "k", "-1", hello),                      // BUSYKEY comes before the TTL
            Args("RESTORE", "k", "0", hello, "BOGUS"),              // options come first of all
            Args("RESTORE", "fresh", "-1", hello),
            Args("RESTORE", "fresh", "abc", hello),
            Args("RESTORE", "fresh", "0", badChecksum),
            Args("RESTORE", "fresh", "0", version13),
            Args("RESTORE", "fresh", "0", version65535),
            Args("RESTORE", "fresh", "0", "short"),
            Args("RESTORE", "fresh", "0", ""),
            Args("RESTORE", "fresh", "0", hello, "IDLETIME", "-1"),
            Args("RESTORE", "fresh", "0", hello, "IDLETIME", "abc"),
            Args("RESTORE", "fresh", "0", hello, "IDLETIME"),
            Args("RESTORE", "fresh", "0", hello, "FREQ", "256"),
            Args("RESTORE", "fresh", "0", hello, "FREQ", "-1"),
            Args("RESTORE", "fresh", "0", hello, "FREQ", "x"),
            Args("RESTORE", "fresh", "0", hello, "IDLETIME", "10", "FREQ", "5"),
            Args("RESTORE", "fresh", "0", hello, "FREQ", "5", "IDLETIME", "10"),
            Args("RESTORE", "fresh", "0"),
            Args("RESTORE", "fresh"),
            Args("EXISTS", "fresh"),
            // Bad values behind a good trailer.
            Args("RESTORE", "fresh", "0", Payload([0, 50, .. "hello"u8])),               // truncated string
            Args("RESTORE", "fresh", "0", Payload([200, 1, 2, 3])),                      // no such type
            Args("RESTORE", "fresh", "0", Payload([6, 1, 2, 3])),                        // a module value
            Args("RESTORE", "fresh", "0", Payload([18, 0])),                              // a list of no node
            Args("RESTORE", "fresh", "0", Payload([2, 0])),                               // an empty set
            Args("RESTORE", "fresh", "0", Payload([2, 2, 1, (byte)'a', 1, (byte)'a'])),   // a member twice
            Args("RESTORE", "fresh", "0", Payload([4, 1, 1, (byte)'f'])),                 // a field without value
            Args("RESTORE", "fresh", "0", Payload([0xFE, 0])),                           // an opcode, not a type
            Args("RESTORE", "fresh", "0", Payload([])),
            Args("EXISTS", "fresh"),
            // REPLACE, over another type too; ABSTTL; TTLs already past.
            Args("RESTORE", "taken", "0", hello, "REPLACE"),
            Args("GET", "taken"),
            Args("RPUSH", "other", "x"),
            Args("RESTORE", "other", "0", hello, "REPLACE", "REPLACE"),
            Args("TYPE", "other"),
            Args("RESTORE", "abs", "4102444800000", hello, "ABSTTL"),
            Args("PEXPIRETIME", "abs"),
            Args("RESTORE", "past", "1000", hello, "ABSTTL"),
            Args("EXISTS", "past"),
            Args("RESTORE", "abs", "1000", hello, "ABSTTL", "REPLACE"),
            Args("EXISTS", "abs"),
            Args("RESTORE", "overflow", "9223372036854775807", hello),
            Args("EXISTS", "overflow"),
            Args("RESTORE", "relative", "100000", hello, "IDLETIME", "0", "absttl"),
            Args("PEXPIRETIME", "relative"),
            Args("RESTORE", "idle", "0", hello, "IDLETIME", "1000"),
            Args("RESTORE", "freq", "0", hello, "FREQ", "100"),
            Args("DUMP", "missing"),
            Args("DUMP"),
            Args("DUMP", "a", "b"),
        };

        SideBySideReplies.AssertSame(cases, c => RespAssert.Ok(c.Call("FLUSHALL")));
    }

    [Fact]
    public void RestoreSetsIdleTimeFrequencyAndTtlAndIsLoggedAsRedisPropagatesIt()
    {
        using var dir = new TempDirectory("restore-aof-");
        byte[] hello = Payload([0, 5, .. "hello"u8]);
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        using (var events = server.Connect())
        {
            RespAssert.Ok(c.Call("CONFIG", "SET", "notify-keyspace-events", "KEA"));
            events.Call("PSUBSCRIBE", "__keyevent@0__:*");

            RespAssert.Ok(c.Call(Args("RESTORE", "idle", "0", hello, "IDLETIME", "1000")));
            Assert.InRange(c.Call("OBJECT", "IDLETIME", "idle").Integer, 1000, 1002);
            // FREQ applies under an LFU policy only, IDLETIME under the others.
            RespAssert.Ok(c.Call(Args("RESTORE", "ignored", "0", hello, "FREQ", "100")));
            RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"));
            RespAssert.Integer(5, c.Call("OBJECT", "FREQ", "ignored"));
            RespAssert.Ok(c.Call(Args("RESTORE", "freq", "0", hello, "FREQ", "100")));
            RespAssert.Integer(100, c.Call("OBJECT", "FREQ", "freq"));
            RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory-policy", "noeviction"));

            long before = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            RespAssert.Ok(c.Call(Args("RESTORE", "ttl", "600000", hello)));
            long deadline = c.Call("PEXPIRETIME", "ttl").Integer;
            Assert.InRange(deadline, before + 600_000, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() + 600_000);
            RespAssert.Ok(c.Call(Args("RESTORE", "ttl", "1000", hello, "ABSTTL", "REPLACE")));
            RespAssert.Integer(0, c.Call("EXISTS", "ttl"));
            RespAssert.Ok(c.Call(Args("RESTORE", "never", "1000", hello, "ABSTTL")));

            // A watched key restored aborts the transaction.
            using (var watcher = server.Connect())
            {
                RespAssert.Ok(watcher.Call("WATCH", "watched"));
                RespAssert.Ok(watcher.Call("MULTI"));
                RespAssert.Simple("QUEUED", watcher.Call("GET", "watched"));
                RespAssert.Ok(c.Call(Args("RESTORE", "watched", "0", hello)));
                Assert.True(watcher.Call("EXEC").IsNull);
            }

            // "new" is not in class A, as in Redis: only the commands' own events arrive.
            var seen = Enumerable.Range(0, 6).Select(_ => NextEvent(events)).ToList();
            Assert.Equal(["restore idle", "restore ignored", "restore freq", "restore ttl", "del ttl", "restore watched"], seen);

            // Redis's propagation: a relative TTL as the absolute time with ABSTTL appended; the
            // replaced key whose time had passed as DEL; nothing for the key never created.
            string log = ReadIncrementalFiles(dir);
            int at = log.IndexOf("*5\r\n$7\r\nRESTORE\r\n$3\r\nttl\r\n", StringComparison.Ordinal);
            Assert.True(at >= 0, log);
            Assert.Equal(deadline, long.Parse(log[at..].Split("\r\n")[6]));
            string payloadHeader = $"${hello.Length}\r\n";
            int payloadAt = log.IndexOf(payloadHeader, at, StringComparison.Ordinal);
            Assert.StartsWith("\r\n$6\r\nABSTTL\r\n", log[(payloadAt + payloadHeader.Length + hello.Length)..]);
            Assert.Contains("*2\r\n$3\r\nDEL\r\n$3\r\nttl\r\n", log);
            Assert.DoesNotContain("never", log);
            Assert.Contains("$7\r\nRESTORE\r\n$4\r\nidle\r\n$1\r\n0\r\n", log);
        }
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            foreach (var key in new[] { "idle", "ignored", "freq", "watched" })
                RespAssert.Bulk("hello", c.Call("GET", key));
            RespAssert.Integer(0, c.Call("EXISTS", "ttl"));
            RespAssert.Integer(4, c.Call("DBSIZE"));
        }
    }

    /// <summary>
    /// Payloads of every type with bytes changed, dropped or added, most with their checksum made
    /// right again so the value itself is read: each is restored or refused with Redis's error,
    /// and whatever is restored can be read, dumped and restored again.
    /// </summary>
    [Fact]
    public void CorruptedPayloadsAreRefusedWithoutHarm()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        foreach (var command in StreamCommands("stream"))
            Assert.False(c.Call(command).IsError);
        c.Call("RPUSH", "list", "a", "12", "-400", new string('b', 70), "c");
        c.Call("SADD", "intset", "1", "70000", "-3");
        c.Call("SADD", "set", "a", "b", "c");
        c.Call("HSET", "hash", "f", "v", "g", "12");
        c.Call(["HSET", "hash:big", .. Enumerate(200, i => $"f{i}").SelectMany(f => new[] { f, "v" })]);
        c.Call("ZADD", "zset", "1", "a", "2.5", "b", "-inf", "c");
        c.Call(["ZADD", "zset:big", .. Enumerable.Range(0, 150).SelectMany(i => new[] { i.ToString(), "m" + i })]);
        c.Call("SET", "string", string.Concat(Enumerable.Repeat("compressible ", 20)));
        var payloads = new[] { "stream", "list", "intset", "set", "hash", "hash:big", "zset", "zset:big", "string" }
            .Select(k => c.CallForBytes("DUMP", k)).ToArray();

        var random = new Random(20240607);
        int restored = 0, refused = 0;
        for (int round = 0; round < 400; round++)
        {
            byte[] original = payloads[round % payloads.Length];
            byte[] body = original[..^10];
            body = random.Next(10) switch
            {
                0 => body[..random.Next(body.Length)],                                                // truncated
                1 => [.. body, .. Enumerable.Range(0, random.Next(1, 20)).Select(_ => (byte)random.Next(256))],   // trailing bytes
                _ => Mutate(body, random),
            };
            byte[] payload = random.Next(10) == 0 ? [.. body, .. original[^10..]] : Payload(body);
            var reply = c.Call(Args("RESTORE", "fuzz", "0", payload, "REPLACE"));
            if (reply.Kind == '+')
            {
                restored++;
                ExerciseValue(c, "fuzz");
                continue;
            }
            refused++;
            Assert.True(reply.Text is "ERR Bad data format" or "ERR DUMP payload version or checksum are wrong",
                $"round {round}: {reply}");
            if (round % 50 == 0)
                RespAssert.Simple("PONG", c.Call("PING"));
        }
        RespAssert.Simple("PONG", c.Call("PING"));
        Assert.False(server.HasExited);
        Assert.True(restored > 10 && refused > 100, $"restored {restored}, refused {refused}");
    }

    // ------------------------------------------------------------------------------- helpers

    /// <summary>A stream with nodes, a deleted entry, two groups, pending entries, acknowledged ones and a consumer without any.</summary>
    private static IEnumerable<string[]> StreamCommands(string key)
    {
        yield return ["XADD", key, "1-1", "a", "1", "b", "2"];
        yield return ["XADD", key, "1-2", "a", "3", "b", "4"];
        yield return ["XADD", key, "2-0", "c", "5"];
        for (int i = 3; i < 250; i++)
            yield return ["XADD", key, $"{i}-0", "field", $"value {i}"];
        yield return ["XDEL", key, "2-0"];
        yield return ["XGROUP", "CREATE", key, "readers", "0"];
        yield return ["XGROUP", "CREATE", key, "late", "$"];
        yield return ["XREADGROUP", "GROUP", "readers", "alice", "COUNT", "3", "STREAMS", key, ">"];
        yield return ["XREADGROUP", "GROUP", "readers", "bob", "COUNT", "2", "STREAMS", key, ">"];
        yield return ["XACK", key, "readers", "1-1"];
        yield return ["XGROUP", "CREATECONSUMER", key, "late", "carol"];
    }

    /// <summary>Reads the restored value every way its type allows, then dumps and restores it again.</summary>
    private static void ExerciseValue(RespClient c, string key)
    {
        string type = c.Call("TYPE", key).Text!;
        RespValue read = type switch
        {
            "string" => c.Call("GET", key),
            "list" => c.Call("LRANGE", key, "0", "-1"),
            "set" => c.Call("SMEMBERS", key),
            "hash" => c.Call("HGETALL", key),
            "zset" => c.Call("ZRANGE", key, "0", "-1", "WITHSCORES"),
            "stream" => c.Call("XINFO", "STREAM", key, "FULL"),
            _ => throw new InvalidOperationException($"restored a {type}"),
        };
        Assert.False(read.IsError, $"reading the restored {type}: {read}");
        if (type == "stream")
        {
            Assert.False(c.Call("XRANGE", key, "-", "+").IsError);
            Assert.False(c.Call("XREVRANGE", key, "+", "-").IsError);
        }
        if (type == "zset")
            Assert.False(c.Call("ZREVRANGEBYSCORE", key, "+inf", "-inf").IsError);
        byte[] again = c.CallForBytes("DUMP", key);
        RespAssert.Ok(c.Call(Args("RESTORE", key + ":again", "0", again, "REPLACE")));
    }

    private static byte[] Mutate(byte[] body, Random random)
    {
        byte[] mutated = [.. body];
        for (int n = random.Next(1, 4); n > 0 && mutated.Length > 0; n--)
        {
            int at = random.Next(mutated.Length);
            mutated[at] = random.Next(3) switch
            {
                0 => (byte)random.Next(256),
                1 => (byte)(mutated[at] ^ (1 << random.Next(8))),
                _ => (byte)(mutated[at] + (random.Next(2) == 0 ? 1 : -1)),
            };
        }
        return mutated;
    }

    /// <summary>Both servers' DUMP of <paramref name="key"/>, which must be the same bytes.</summary>
    private static void AssertSameDump(RespClient ours, RespClient redis, string key)
    {
        byte[] mine = ours.CallForBytes("DUMP", key);
        byte[] theirs = redis.CallForBytes("DUMP", key);
        Assert.True(mine.AsSpan().SequenceEqual(theirs),
            $"DUMP {key} differs\n  redis: {Convert.ToHexString(theirs)}\n  ours:  {Convert.ToHexString(mine)}");
    }

    /// <summary>A DUMP payload around <paramref name="body"/>: the RDB version and the CRC-64, little-endian.</summary>
    private static byte[] Payload(byte[] body, ushort version = 10)
    {
        byte[] withVersion = [.. body, (byte)version, (byte)(version >> 8)];
        byte[] crc = new byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(crc, Crc64.Compute(withVersion));
        return [.. withVersion, .. crc];
    }

    /// <summary>Arguments given as strings or raw bytes.</summary>
    private static byte[][] Args(params object[] args)
        => args.Select(a => a as byte[] ?? Bytes.GetBytes((string)a)).ToArray();

    private static string[] Enumerate(int count, Func<int, string> element) => Enumerable.Range(0, count).Select(element).ToArray();

    private static string NextEvent(RespClient events)
    {
        while (true)
        {
            var message = events.Read().Array;
            if (message[0].Text == "pmessage")
                return $"{message[2].Text![15..]} {message[3].Text}";
        }
    }

    private static string ReadIncrementalFiles(TempDirectory dir)
    {
        var text = new StringBuilder();
        foreach (var file in Directory.GetFiles(dir.AppendDirectory, "*.incr.aof").Order())
        {
            using var stream = new FileStream(file, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            using var reader = new StreamReader(stream, Bytes);
            text.Append(reader.ReadToEnd());
        }
        return text.ToString();
    }
}
