using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// DEBUG DIGEST and DEBUG DIGEST-VALUE against the real redis-server 7.0: the same commands build
/// the same dataset on both, then the digests must be the same bytes (in RESP2 and RESP3), so a
/// replica's dataset can be checked against its master whichever server each one is. The dataset
/// has every type in the sizes Redis holds compactly (listpack, intset) and in the sizes it does
/// not, integer strings, scores that print differently under %.17g, streams over several nodes
/// with deleted entries and consumer groups with pending entries, TTLs and several databases.
/// Redis 7.0 digests a stream's entries only, not its groups, so delivery times play no part.
/// </summary>
public sealed class DebugDigestTests
{
    private static readonly int[] Databases = [0, 1, 2, 5, 15];

    [Fact]
    public void EveryTypeDigestsAsRedisDoes()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start("--enable-debug-command", "yes");
        using (var a = ours.Connect())
        using (var b = redis.Connect())
            Build(a, b, Dataset());
        AssertSameDigests(ours, redis, expectEmpty: false);
    }

    [Fact]
    public void AnEmptyDatasetDigestsToZeros()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start("--enable-debug-command", "yes");
        using var a = ours.Connect();
        using var b = redis.Connect();
        foreach (var client in new[] { a, b })
        {
            RespAssert.Simple(new string('0', 40), client.Call("DEBUG", "DIGEST"));
            Assert.Equal("*[+" + new string('0', 40) + "]", client.Call("DEBUG", "DIGEST-VALUE", "nokey").ToString());
        }
        AssertSameDigests(ours, redis, expectEmpty: true);
        // A database emptied again counts as empty: it adds nothing, not even its number.
        Build(a, b, [["SELECT", "3"], ["SET", "k", "v"], ["DEL", "k"]]);
        AssertSameDigests(ours, redis, expectEmpty: true);
    }

    /// <summary>
    /// Each kind of change moves the digest, identically on both servers; the order of set members
    /// and hash fields does not, the order of list elements does.
    /// </summary>
    [Fact]
    public void ChangingAValueChangesTheDigest()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start("--enable-debug-command", "yes");
        using var a = ours.Connect();
        using var b = redis.Connect();
        Build(a, b,
        [
            ["SET", "s", "value"], ["RPUSH", "l", "a", "b", "c"], ["SADD", "set", "x", "y", "z"], ["SADD", "set2", "z", "y", "x"],
            ["HSET", "h", "f1", "1", "f2", "2"], ["HSET", "h2", "f2", "2", "f1", "1"], ["ZADD", "z", "1.5", "m", "2", "n"],
            ["RPUSH", "l2", "c", "b", "a"], ["XADD", "x", "1-1", "f", "v"],
        ]);
        Assert.Equal(a.Call("DEBUG", "DIGEST-VALUE", "set").ToString(), a.Call("DEBUG", "DIGEST-VALUE", "set2").ToString());
        Assert.Equal(a.Call("DEBUG", "DIGEST-VALUE", "h").ToString(), a.Call("DEBUG", "DIGEST-VALUE", "h2").ToString());
        Assert.NotEqual(a.Call("DEBUG", "DIGEST-VALUE", "l").ToString(), a.Call("DEBUG", "DIGEST-VALUE", "l2").ToString());

        string[][] changes =
        [
            ["SETRANGE", "s", "0", "V"], ["LSET", "l", "1", "B"], ["SADD", "set", "w"], ["HSET", "h", "f1", "one"],
            ["ZADD", "z", "1.5000000000000002", "m"], ["ZADD", "z", "inf", "n"], ["XADD", "x", "1-2", "f", "v"], ["XDEL", "x", "1-2"],
            ["EXPIRE", "s", "1000"], ["PERSIST", "s"], ["RENAME", "l2", "l3"], ["MOVE", "l3", "4"], ["SWAPDB", "0", "4"],
        ];
        var seen = new HashSet<string> { Digest(a) };
        foreach (var change in changes)
        {
            Assert.Equal(b.Call(change).ToString(), a.Call(change).ToString());
            string digest = Digest(a);
            Assert.Equal(Digest(b), digest);
            // XDEL of the entry just added and PERSIST undo the step before them.
            if (change[0] is not ("XDEL" or "PERSIST"))
                Assert.True(seen.Add(digest), $"{string.Join(' ', change)} left the digest as an earlier state had it");
        }
    }

    /// <summary>
    /// A key whose TTL passed but that is not yet removed still counts in both forms, as in Redis,
    /// which reads the keyspace directly: digesting never expires anything.
    /// </summary>
    [Fact]
    public void KeysPastTheirTtlStillCount()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start("--enable-debug-command", "yes");
        using var a = ours.Connect();
        using var b = redis.Connect();
        Build(a, b, [["DEBUG", "SET-ACTIVE-EXPIRE", "0"], ["SET", "gone", "v", "PX", "1"], ["SET", "kept", "v"], ["HSET", "h", "f", "v"], ["PEXPIRE", "h", "1"]]);
        Thread.Sleep(50);
        Assert.Equal(Digest(b), Digest(a));
        Assert.Equal(b.Call("DEBUG", "DIGEST-VALUE", "gone", "h").ToString(), a.Call("DEBUG", "DIGEST-VALUE", "gone", "h").ToString());
        Assert.DoesNotContain(new string('0', 40), a.Call("DEBUG", "DIGEST-VALUE", "gone", "h").ToString());
        RespAssert.Integer(3, a.Call("DBSIZE"));
        RespAssert.Integer(3, b.Call("DBSIZE"));
    }

    [Fact]
    public void ArgumentsAndHelpAsRedis()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start("--enable-debug-command", "yes");
        using var a = ours.Connect();
        using var b = redis.Connect();
        foreach (var command in (string[][])[["DEBUG", "DIGEST", "extra"], ["DEBUG", "DIGEST-VALUE"], ["DEBUG", "digest-VALUE", "a", "a"], ["DEBUG", "digest"]])
            Assert.Equal(b.Call(command).ToString(), a.Call(command).ToString());
        string ourHelp = a.Call("DEBUG", "HELP").ToString(), redisHelp = b.Call("DEBUG", "HELP").ToString();
        foreach (string line in (string[])["+DIGEST, ", "+    Output a hex signature representing the current DB content., ",
                     "+DIGEST-VALUE <key> [<key> ...], ", "+    Output a hex signature of the values of all the specified keys., "])
        {
            Assert.Contains(line, redisHelp);
            Assert.Contains(line, ourHelp);
        }
    }

    /// <summary>Runs the commands on both servers (RESP2), requiring the same reply from each, so the datasets are the same.</summary>
    private static void Build(RespClient ours, RespClient redis, IReadOnlyList<string[]> commands)
    {
        var mine = Pipeline.Run(ours, commands);
        var theirs = Pipeline.Run(redis, commands);
        for (int i = 0; i < commands.Count; i++)
            Assert.True(mine[i].ToString() == theirs[i].ToString(), $"{Shorten(commands[i])}\n  redis: {theirs[i]}\n  ours:  {mine[i]}");
    }

    /// <summary>DEBUG DIGEST, and DEBUG DIGEST-VALUE of every key of every database plus a missing one, equal on both in RESP2 and RESP3.</summary>
    private static void AssertSameDigests(ServerProcess ours, RealRedisServer redis, bool expectEmpty)
    {
        foreach (int protocol in (int[])[2, 3])
        {
            using var a = ours.Connect();
            using var b = redis.Connect();
            if (protocol == 3)
            {
                Assert.Equal('%', a.Call("HELLO", "3").Kind);
                Assert.Equal('%', b.Call("HELLO", "3").Kind);
            }
            var digest = b.Call("DEBUG", "DIGEST");
            Assert.Equal('+', digest.Kind);
            Assert.Equal(digest.ToString(), a.Call("DEBUG", "DIGEST").ToString());
            Assert.Equal(expectEmpty, digest.Text == new string('0', 40));
            foreach (int db in Databases)
            {
                RespAssert.Ok(a.Call("SELECT", db.ToString(CultureInfo.InvariantCulture)));
                RespAssert.Ok(b.Call("SELECT", db.ToString(CultureInfo.InvariantCulture)));
                string[] keys = [.. b.Call("KEYS", "*").Array.Select(k => k.Text!).Order(StringComparer.Ordinal)];
                Assert.Equal(keys, a.Call("KEYS", "*").Array.Select(k => k.Text!).Order(StringComparer.Ordinal));
                string[] command = ["DEBUG", "DIGEST-VALUE", .. keys, "no-such-key"];
                var values = b.Call(command);
                Assert.Equal(keys.Length + 1, values.Array.Count);
                for (int i = 0; i < keys.Length; i++)
                    Assert.True(values.Array[i].Text != new string('0', 40), $"db {db} key {keys[i]}: zero digest");
                var mine = a.Call(command);
                for (int i = 0; i <= keys.Length; i++)
                    Assert.True(values.Array[i].ToString() == mine.Array[i].ToString(),
                        $"RESP{protocol} db {db} key {(i < keys.Length ? keys[i] : "no-such-key")}\n  redis: {values.Array[i]}\n  ours:  {mine.Array[i]}");
            }
        }
    }

    private static string Digest(RespClient client) => client.Call("DEBUG", "DIGEST").Text!;

    private static string Shorten(string[] command)
    {
        string text = string.Join(' ', command);
        return text.Length <= 200 ? text : text[..200] + "...";
    }

    /// <summary>Commands building the dataset: every type, small and large, across databases, some keys with TTLs.</summary>
    private static List<string[]> Dataset()
    {
        var commands = new List<string[]>();
        string Long(char c, int n) => new(c, n);
        static string N(long i) => i.ToString(CultureInfo.InvariantCulture);

        // Strings: Redis keeps integers (up to 20 bytes that read back the same) as numbers and
        // digests their text; the others are bytes.
        commands.Add(["SET", "str", "hello"]);
        commands.Add(["SET", "empty", ""]);
        commands.Add(["SET", "int", "12345"]);
        commands.Add(["SET", "negint", "-42"]);
        commands.Add(["SET", "maxint", "9223372036854775807"]);
        commands.Add(["SET", "minint", "-9223372036854775808"]);
        commands.Add(["SET", "notint", "0123"]);
        commands.Add(["SET", "toobig", "99999999999999999999"]);
        commands.Add(["SET", "float", "3.14"]);
        commands.Add(["INCR", "counter"]);
        commands.Add(["INCRBY", "counter", "41"]);
        commands.Add(["INCRBYFLOAT", "fl", "10.5"]);
        commands.Add(["SET", "embstr", Long('e', 44)]);
        commands.Add(["SET", "raw", Long('r', 45)]);
        commands.Add(["SET", "long", Long('L', 100_000)]);
        commands.Add(["APPEND", "appended", "abc"]);
        commands.Add(["APPEND", "appended", "def"]);
        commands.Add(["SETRANGE", "ranged", "5", "xyz"]);
        commands.Add(["SET", "binary", "a\r\n\0b"]);
        commands.Add(["SET", "ttl-str", "v", "EX", "1000"]);

        // Lists: a small one (listpack in Redis) with integers, a large one with long elements.
        commands.Add(["RPUSH", "list-small", "a", "1", "-2", "b", "1.5", ""]);
        commands.Add(["LPUSH", "list-small", "head"]);
        commands.Add(["LINSERT", "list-small", "BEFORE", "b", "inserted"]);
        string[] bigList = ["RPUSH", "list-big", .. Enumerable.Range(0, 600).Select(i => i % 7 == 0 ? Long('x', 70 + i) : N(i * 31 - 5000))];
        commands.Add(bigList);
        commands.Add(["LPOP", "list-big"]);
        commands.Add(["LSET", "list-big", "10", "changed"]);
        commands.Add(["RPUSH", "ttl-list", "1", "2", "3"]);
        commands.Add(["PEXPIRE", "ttl-list", "5000000"]);

        // Sets: integers (intset in Redis) small and past set-max-intset-entries, strings small and large.
        commands.Add(["SADD", "set-int", "1", "2", "3", "-5", "9223372036854775807"]);
        commands.Add(["SADD", "set-int-big", .. Enumerable.Range(0, 600).Select(i => N(i * 3 - 100))]);
        commands.Add(["SADD", "set-str", "a", "b", "c", "1"]);
        commands.Add(["SADD", "set-str-big", .. Enumerable.Range(0, 300).Select(i => "member:" + N(i))]);
        commands.Add(["SREM", "set-str-big", "member:7"]);
        commands.Add(["SADD", "set-long", Long('s', 100), "short"]);

        // Hashes: small (listpack) with integer values, large, and one value past 64 bytes.
        commands.Add(["HSET", "hash-small", "f1", "v1", "f2", "2", "3", "-3", "empty", ""]);
        commands.Add(["HSET", "hash-big", .. Enumerable.Range(0, 300).SelectMany(i => new[] { "field" + N(i), i % 2 == 0 ? N(i) : "value" + N(i) })]);
        commands.Add(["HDEL", "hash-big", "field5"]);
        commands.Add(["HSET", "hash-long", "f", Long('h', 100)]);
        commands.Add(["HINCRBY", "hash-small", "f2", "40"]);
        commands.Add(["HINCRBYFLOAT", "hash-small", "fl", "0.1"]);
        commands.Add(["HSET", "ttl-hash", "f", "v"]);
        commands.Add(["EXPIREAT", "ttl-hash", "4000000000"]);

        // Sorted sets: scores whose %.17g text differs from the shortest form, huge, tiny,
        // negative and infinite; small (listpack) and large (skiplist).
        commands.Add(["ZADD", "zset-small", "0.1", "a", "1.5", "b", "-2.25", "c", "1e20", "d", "inf", "e", "-inf", "f", "3", "g", "1e-5", "h", "123456789012345678", "i", "7", "12"]);
        commands.Add(["ZADD", "zset-big", .. Enumerable.Range(0, 300).SelectMany(i => new[] { (i / 7.0 - 20).ToString("R", CultureInfo.InvariantCulture), "m" + N(i) })]);
        commands.Add(["ZADD", "zset-big", "1.7976931348623157e308", "max", "5e-324", "min", "-1e300", "neg", "inf", "top"]);
        commands.Add(["ZINCRBY", "zset-small", "0.2", "a"]);
        commands.Add(["ZINCRBY", "zset-big", "2.5", "m3"]);
        commands.Add(["ZADD", "zset-long", "1", Long('z', 100)]);
        commands.Add(["ZADD", "ttl-zset", "1", "a"]);
        commands.Add(["EXPIRE", "ttl-zset", "100000"]);

        // Streams: fields shared with the node's master entry and not, integer values, several
        // nodes (100 entries each), deletions, a trim, and consumer groups with pending entries.
        for (int i = 1; i <= 250; i++)
            commands.Add(i % 3 == 0
                ? ["XADD", "stream", N(1000 + i) + "-" + N(i % 5), "other", N(i), "x", "y"]
                : ["XADD", "stream", N(1000 + i) + "-" + N(i % 5), "f", N(i), "g", "text" + N(i)]);
        commands.Add(["XDEL", "stream", "1002-2", "1150-0", "1200-0"]);
        commands.Add(["XTRIM", "stream", "MINID", "1010"]);
        commands.Add(["XGROUP", "CREATE", "stream", "g1", "0"]);
        commands.Add(["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "stream", ">"]);
        commands.Add(["XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "stream", ">"]);
        commands.Add(["XACK", "stream", "g1", "1010-0"]);
        commands.Add(["XGROUP", "CREATE", "stream", "g2", "$"]);
        commands.Add(["XADD", "stream-small", "1-1", "a", "1"]);
        commands.Add(["XADD", "stream-small", "18446744073709551615-18446744073709551615", "big", Long('v', 100)]);
        commands.Add(["XADD", "stream-empty", "5-5", "f", "v"]);
        commands.Add(["XDEL", "stream-empty", "5-5"]);
        commands.Add(["XADD", "ttl-stream", "1-1", "f", "v"]);
        commands.Add(["EXPIRE", "ttl-stream", "100000"]);

        // Other databases: the same name holding other values, the same value under another
        // number, and a database moved by SWAPDB.
        commands.Add(["SELECT", "1"]);
        commands.Add(["SET", "str", "hello"]);
        commands.Add(["SET", "only-in-1", "1"]);
        commands.Add(["SADD", "set-int", "1", "2", "3", "-5", "9223372036854775807"]);
        commands.Add(["SELECT", "2"]);
        commands.Add(["SET", "str", "hello"]);
        commands.Add(["SELECT", "5"]);
        commands.Add(["HSET", "h", "a", "b"]);
        commands.Add(["RPUSH", "l", "x"]);
        commands.Add(["SWAPDB", "5", "15"]);
        commands.Add(["SELECT", "5"]);
        commands.Add(["ZADD", "z", "2.5", "m"]);
        commands.Add(["SET", "t", "v", "PX", "100000000"]);
        return commands;
    }
}
