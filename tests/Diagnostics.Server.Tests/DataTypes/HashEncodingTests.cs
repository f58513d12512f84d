using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Small hashes held as listpacks, side by side with redis-server 7.0 in RESP2 and RESP3: OBJECT
/// ENCODING on both sides of hash-max-listpack-entries and hash-max-listpack-value (0 included)
/// for every writing command, never back to a listpack once converted; the insertion order a
/// listpack answers HGETALL/HKEYS/HVALS in after updates and deletes; HSCAN of a listpack in one
/// reply with cursor 0 whatever COUNT says; HRANDFIELD's deterministic counts; DUMP payloads
/// byte for byte; loads choosing the form as Redis's rdbLoadObject does; MEMORY USAGE still the
/// bytes held.
/// </summary>
public sealed class HashEncodingTests
{
    /// <summary>Redis's defaults on both servers (Debian's packaged configuration may differ).</summary>
    private static readonly string[][] DefaultLimits =
    [
        ["CONFIG", "SET", "hash-max-listpack-entries", "128"], ["CONFIG", "SET", "hash-max-listpack-value", "64"],
    ];

    private static void Reset(RespClient c)
    {
        RespAssert.Ok(c.Call("FLUSHALL"));
        foreach (var command in DefaultLimits)
            RespAssert.Ok(c.Call(command));
    }

    /// <summary>Commands whose reply order is a hash table's: compared sorted (a converted hash's order is its table's, not Redis's dict's).</summary>
    private static readonly HashSet<string> TableOrdered = ["t:"];

    [Fact]
    public void ListpackRepliesOrderAndEncodingsMatchRedis()
    {
        List<string[]> commands =
        [
            // Insertion order kept through updates (in place) and deletes (closing up), new fields appended.
            ["HSET", "h", "a", "1", "b", "2", "c", "3"], ["HSET", "h", "a", "10"], ["HDEL", "h", "b"],
            ["HSET", "h", "b", "20", "d", "4"], ["HSETNX", "h", "e", "5"], ["HMSET", "h", "c", "30", "f", "6"],
            ["HINCRBY", "h", "g", "7"], ["HINCRBYFLOAT", "h", "a", "0.5"], ["HINCRBY", "h", "d", "-10"],
            ["HGETALL", "h"], ["HKEYS", "h"], ["HVALS", "h"], ["HLEN", "h"], ["OBJECT", "ENCODING", "h"],
            ["HDEL", "h", "a", "g"], ["HGETALL", "h"], ["HMGET", "h", "a", "b", "c", "zz"],
            // Integers in every listpack width, text that only looks like one, empty strings.
            ["HSET", "n", "1", "one", "-5", "minus", "007", "padded", "12345678901234", "big", "f", "-0",
                "g", "", "", "empty", "4095", "-4096", "40000", "-40000", "9000000", "3000000000", "+1", " 1"],
            ["HGETALL", "n"], ["HGET", "n", "1"], ["HGET", "n", "4095"], ["HGET", "n", "9000000"], ["HSTRLEN", "n", "4095"],
            ["HSTRLEN", "n", "9000000"], ["HSTRLEN", "n", "g"], ["HEXISTS", "n", "007"], ["HEXISTS", "n", "7"], ["HEXISTS", "n", ""],
            ["HINCRBY", "n", "4095", "1"], ["HINCRBY", "n", "f", "1"], ["HINCRBYFLOAT", "n", "9000000", "0.25"], ["HGETALL", "n"],
            // HSCAN: everything at once, cursor 0, COUNT ignored, MATCH on the field.
            ["HSCAN", "h", "0"], ["HSCAN", "h", "7", "COUNT", "1"], ["HSCAN", "h", "0", "MATCH", "[cd]*"],
            ["HSCAN", "h", "0", "MATCH", "nomatch"], ["HSCAN", "n", "0", "MATCH", "*0*", "COUNT", "2"],
            // HRANDFIELD where the answer is not random: the whole hash in order, one field repeated.
            ["HRANDFIELD", "h", "100"], ["HRANDFIELD", "h", "5", "WITHVALUES"], ["HRANDFIELD", "h", "0"],
            ["HSET", "one", "f", "v"], ["HRANDFIELD", "one"], ["HRANDFIELD", "one", "1"], ["HRANDFIELD", "one", "-3"],
            ["HRANDFIELD", "one", "-3", "WITHVALUES"], ["HRANDFIELD", "one", "1", "WITHVALUES"], ["HRANDFIELD", "one", "9", "WITHVALUES"],
            // SORT BY and GET through a listpack's fields, integers included.
            ["RPUSH", "ids", "2", "1", "3"], ["HSET", "w_1", "weight", "30", "name", "x"], ["HSET", "w_2", "weight", "10", "name", "y"],
            ["HSET", "w_3", "weight", "-20", "name", "7"], ["SORT", "ids", "BY", "w_*->weight", "GET", "w_*->name", "GET", "w_*->weight"],
            // Emptied by HDEL: the key goes.
            ["HDEL", "one", "f"], ["EXISTS", "one"],

            // hash-max-listpack-entries: past it after a write, never back.
            ["CONFIG", "SET", "hash-max-listpack-entries", "3"],
            ["HSET", "t:e", "a", "1", "b", "2", "c", "3"], ["OBJECT", "ENCODING", "t:e"],
            ["HSET", "t:e", "d", "4"], ["OBJECT", "ENCODING", "t:e"], ["HDEL", "t:e", "d", "c", "b"], ["OBJECT", "ENCODING", "t:e"],
            ["HGETALL", "t:e"], ["HSET", "t:many", "a", "1", "b", "2", "c", "3", "d", "4"], ["OBJECT", "ENCODING", "t:many"],
            ["HSETNX", "t:nx", "a", "1"], ["HSETNX", "t:nx", "b", "1"], ["HSETNX", "t:nx", "c", "1"], ["OBJECT", "ENCODING", "t:nx"],
            ["HSETNX", "t:nx", "d", "1"], ["OBJECT", "ENCODING", "t:nx"],
            ["HINCRBY", "t:inc", "a", "1"], ["HINCRBY", "t:inc", "b", "1"], ["HINCRBY", "t:inc", "c", "1"], ["HINCRBY", "t:inc", "d", "1"],
            ["OBJECT", "ENCODING", "t:inc"], ["HSCAN", "t:e", "0", "COUNT", "100"],

            // hash-max-listpack-value: before a write, a field or value longer than it converts.
            ["CONFIG", "SET", "hash-max-listpack-entries", "128"], ["CONFIG", "SET", "hash-max-listpack-value", "4"],
            ["HSET", "v", "abcd", "1234"], ["OBJECT", "ENCODING", "v"], ["HGETALL", "v"],
            ["HSET", "t:v", "a", "12345"], ["OBJECT", "ENCODING", "t:v"],
            ["HSET", "t:f", "abcde", "1"], ["OBJECT", "ENCODING", "t:f"],
            ["HSET", "t:multi", "a", "1", "b", "2"], ["HSET", "t:multi", "a", "1", "c", "long-value"], ["OBJECT", "ENCODING", "t:multi"],
            ["HMSET", "t:hm", "a", "1", "b", "12345"], ["OBJECT", "ENCODING", "t:hm"],
            // HSETNX looks at the lengths only for a new field.
            ["HSETNX", "nx", "a", "1"], ["HSETNX", "nx", "a", "123456"], ["OBJECT", "ENCODING", "nx"],
            ["HSETNX", "t:nx2", "a", "1"], ["HSETNX", "t:nx2", "b", "123456"], ["OBJECT", "ENCODING", "t:nx2"],
            // HINCRBY / HINCRBYFLOAT: the field and the result's length.
            ["HINCRBY", "t:i", "a", "99999"], ["OBJECT", "ENCODING", "t:i"],
            ["HINCRBY", "t:if", "abcde", "1"], ["OBJECT", "ENCODING", "t:if"],
            ["HINCRBYFLOAT", "y", "a", "1.5"], ["HINCRBYFLOAT", "y", "a", "1.25"], ["OBJECT", "ENCODING", "y"],
            ["HINCRBYFLOAT", "t:y", "a", "1.5"], ["HINCRBYFLOAT", "t:y", "a", "0.001"], ["OBJECT", "ENCODING", "t:y"],
            ["HINCRBY", "t:ov", "a", "9223372036854775807"], ["HINCRBY", "t:ov", "a", "1"], ["OBJECT", "ENCODING", "t:ov"],

            // Limits of 0: every write converts (entries after it, value before it for any non-empty text).
            ["CONFIG", "SET", "hash-max-listpack-value", "64"], ["CONFIG", "SET", "hash-max-listpack-entries", "0"],
            ["HSET", "t:zero", "a", "1"], ["OBJECT", "ENCODING", "t:zero"],
            ["CONFIG", "SET", "hash-max-listpack-entries", "128"], ["CONFIG", "SET", "hash-max-listpack-value", "0"],
            ["HSET", "zv", "", ""], ["OBJECT", "ENCODING", "zv"], ["HSET", "zv", "", "x"], ["OBJECT", "ENCODING", "zv"],
            ["HGETALL", "zv"],
            // A listpack made under wider limits stays one: limits apply to the next write only.
            ["OBJECT", "ENCODING", "h"], ["HGET", "h", "c"], ["HSET", "h", "c", "31"], ["OBJECT", "ENCODING", "h"],
        ];
        SideBySideReplies.AssertSame(commands, Reset, (i, reply) =>
            DataTypeConformanceTests.Render(reply, commands[i].Length > 1 && TableOrdered.Any(p => commands[i][1].StartsWith(p, StringComparison.Ordinal))
                && commands[i][0] is "HGETALL" or "HKEYS" or "HVALS" or "HSCAN"));
    }

    [Fact]
    public void RandomDistinctFieldsOfAListpackComeInInsertionOrderAsInRedis()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        string[] fields = [.. Enumerable.Range(0, 30).Select(i => ((i * 17) % 30).ToString(CultureInfo.InvariantCulture) + "f")];
        foreach (var (name, c) in new[] { ("ours", ours.Connect()), ("redis", redis.Connect()) })
        {
            using (c)
            {
                Reset(c);
                Assert.False(c.Call(["HSET", "r", .. fields.SelectMany(f => new[] { f, "v" + f })]).IsError);
                var seen = new HashSet<string>();
                for (int trial = 0; trial < 40; trial++)
                {
                    var picked = c.Call("HRANDFIELD", "r", "7").Array.Select(v => v.Text!).ToList();
                    Assert.Equal(7, picked.Distinct().Count());
                    var positions = picked.Select(p => Array.IndexOf(fields, p)).ToList();
                    Assert.True(positions.SequenceEqual(positions.Order()), $"{name}: HRANDFIELD r 7 gave {string.Join(',', picked)}, not in insertion order");
                    seen.UnionWith(picked);

                    var withValues = c.Call("HRANDFIELD", "r", "-12", "WITHVALUES").Array;
                    Assert.Equal(24, withValues.Count);
                    for (int i = 0; i < withValues.Count; i += 2)
                        Assert.Equal("v" + withValues[i].Text, withValues[i + 1].Text);
                    seen.UnionWith(withValues.Where((_, i) => i % 2 == 0).Select(v => v.Text!));
                }
                Assert.True(seen.Count >= 25, $"{name}: 40 draws of 7 and 12 saw only {seen.Count} of 30 fields");
                RespAssert.Bulk("listpack", c.Call("OBJECT", "ENCODING", "r"));
            }
        }
    }

    [Fact]
    public void DumpPayloadsAreRedisBytesAndRestoreChoosesRedisForm()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        using var a = ours.Connect();
        using var b = redis.Connect();
        string[][] build =
        [
            ["HSET", "small", "name", "ann", "age", "42", "city", "paris"],
            ["HSET", "ints", "1", "-1", "127", "128", "-4096", "4095", "40000", "-40000", "9000000", "3000000000", "-9223372036854775808", "9223372036854775807"],
            ["HSET", "text", "007", "+1", "-0", "", "", "x", "long", new string('y', 64), new string('f', 64), "z"],
            ["HSET", "edited", "a", "1", "b", "2", "c", "3", "d", "4"],
            ["HSET", "edited", "b", "a much longer value than before", "a", "0"],
            ["HDEL", "edited", "c"],
            ["HSET", "edited", "c", "back at the end"],
            ["HSET", "compressible", .. Enumerable.Range(0, 40).SelectMany(i => new[] { "field" + i, "value value value" })],
            ["HSET", "full", .. Enumerable.Range(0, 128).SelectMany(i => new[] { "f" + i, i.ToString(CultureInfo.InvariantCulture) })],
        ];
        foreach (var c in new[] { a, b })
        {
            Reset(c);
            foreach (var command in build)
                Assert.False(c.Call(command).IsError, string.Join(' ', command));
        }
        string[] keys = ["small", "ints", "text", "edited", "compressible", "full"];
        foreach (string compression in (string[])["yes", "no"])
        {
            foreach (var c in new[] { a, b })
                RespAssert.Ok(c.Call("CONFIG", "SET", "rdbcompression", compression));
            foreach (string key in keys)
            {
                RespAssert.Bulk("listpack", a.Call("OBJECT", "ENCODING", key));
                byte[] mine = a.CallForBytes("DUMP", key);
                byte[] theirs = b.CallForBytes("DUMP", key);
                Assert.True(mine.AsSpan().SequenceEqual(theirs),
                    $"DUMP {key} (rdbcompression {compression}) differs\n  redis: {Convert.ToHexString(theirs)}\n  ours:  {Convert.ToHexString(mine)}");
            }
        }

        // A plain hash payload: a hash converted by a limit of 0 fields, one short field.
        foreach (var c in new[] { a, b })
        {
            RespAssert.Ok(c.Call("CONFIG", "SET", "hash-max-listpack-entries", "0"));
            RespAssert.Integer(1, c.Call("HSET", "plain", "a", "1"));
            RespAssert.Bulk("hashtable", c.Call("OBJECT", "ENCODING", "plain"));
            RespAssert.Integer(1, c.Call("HSET", "plain:long", "a", "long value"));
        }
        string[] restored = [.. keys, "plain", "plain:long"];
        var payloads = restored.ToDictionary(k => k, k => b.CallForBytes("DUMP", k));

        // Restored under other limits, each side picks the form Redis's rdbLoadObject picks: a listpack
        // is kept whatever its values' lengths and converted past the entry limit; a plain hash becomes
        // a listpack when few and short enough.
        foreach (var c in new[] { a, b })
        {
            RespAssert.Ok(c.Call("CONFIG", "SET", "hash-max-listpack-value", "2"));
            RespAssert.Ok(c.Call("CONFIG", "SET", "hash-max-listpack-entries", "5"));
            foreach (string key in restored)
                RespAssert.Ok(c.Call(Args("RESTORE", key + ":r", "0", payloads[key])));
        }
        foreach (string key in restored)
        {
            var theirs = b.Call("OBJECT", "ENCODING", key + ":r");
            Assert.True(theirs == a.Call("OBJECT", "ENCODING", key + ":r"), $"{key}:r encoding differs (redis {theirs})");
            if (theirs.Text == "listpack")
                Assert.Equal(b.Call("HGETALL", key + ":r").ToString(), a.Call("HGETALL", key + ":r").ToString());
            else
                Assert.Equal(DataTypeConformanceTests.Render(b.Call("HGETALL", key + ":r"), true), DataTypeConformanceTests.Render(a.Call("HGETALL", key + ":r"), true));
        }
        RespAssert.Bulk("listpack", a.Call("OBJECT", "ENCODING", "text:r"));        // 64-byte values, limit 2: kept
        RespAssert.Bulk("hashtable", a.Call("OBJECT", "ENCODING", "full:r"));       // 128 fields, limit 5
        RespAssert.Bulk("listpack", a.Call("OBJECT", "ENCODING", "plain:r"));       // a plain hash small enough
        RespAssert.Bulk("hashtable", a.Call("OBJECT", "ENCODING", "plain:long:r")); // ... and one with a value too long
        // A restored listpack is Redis's bytes again.
        Assert.True(a.CallForBytes("DUMP", "edited:r").AsSpan().SequenceEqual(payloads["edited"]), "DUMP of the restored listpack differs");
    }

    [Fact]
    public void SnapshotsCarryListpacksBothWaysAndReloadKeepsRedisForms()
    {
        using var dir = new TempDirectory("hash-listpack-rdb-");
        string[][] build =
        [
            ["HSET", "small", "name", "ann", "age", "42", "city", "paris"],
            ["HSET", "ordered", "z", "1", "y", "2", "x", "3"], ["HDEL", "ordered", "y"], ["HSET", "ordered", "y", "again"],
            ["HSET", "big", .. Enumerable.Range(0, 300).SelectMany(i => new[] { "f" + i, "v" + i })],
            ["HSET", "long", "f", new string('v', 100)],
            ["CONFIG", "SET", "hash-max-listpack-value", "1000"], ["HSET", "wide", "f", new string('w', 100)],
            ["CONFIG", "SET", "hash-max-listpack-value", "64"],
        ];
        using var redis = RealRedisServer.StartIn(dir.Path, "--dbfilename", "redis.rdb");
        using var b = redis.Connect();
        using var ours = ServerProcess.Start("--dir", dir.Path, "--dbfilename", "ours.rdb", "--appendonly", "no");
        using var a = ours.Connect();
        foreach (var c in new[] { a, b })
        {
            Reset(c);
            foreach (var command in build)
                Assert.False(c.Call(command).IsError, string.Join(' ', command));
            RespAssert.Ok(c.Call("SAVE"));
        }
        string[] keys = ["small", "ordered", "big", "long", "wide"];
        string Describe(RespClient c) => string.Join("\n", keys.Select(k =>
        {
            string encoding = c.Call("OBJECT", "ENCODING", k).Text!;
            var all = c.Call("HGETALL", k);
            return $"{k} {encoding} {(encoding == "listpack" ? all.ToString() : DataTypeConformanceTests.Render(all, true))}";
        }));
        string expected = Describe(b);
        Assert.Equal(expected, Describe(a));

        var check = ExternalTool.Run("redis-check-rdb", "redis-tools", [dir.File("ours.rdb")]);
        Assert.True(check.ExitCode == 0 && check.StandardOutput.Contains("RDB looks OK"), $"redis-check-rdb ours.rdb:\n{check.StandardOutput}\n{check.StandardError}");

        // Each server loads the other's file: the same forms, a listpack's order kept.
        // (Debian's redis-server defaults hash-max-listpack-entries to 512: Redis's own 128 here.)
        using (var redisLoadingOurs = RealRedisServer.StartIn(dir.Path, "--dbfilename", "ours.rdb", "--hash-max-listpack-entries", "128"))
        using (var c = redisLoadingOurs.Connect())
            Assert.Equal(expected, Describe(c));
        using (var oursLoadingRedis = ServerProcess.Start("--dir", dir.Path, "--dbfilename", "redis.rdb", "--appendonly", "no"))
        using (var c = oursLoadingRedis.Connect())
            Assert.Equal(expected, Describe(c));

        // DEBUG RELOAD under narrower limits: listpacks kept whatever their values, converted past the entries.
        RespAssert.Ok(a.Call("CONFIG", "SET", "hash-max-listpack-value", "2"));
        RespAssert.Ok(a.Call("DEBUG", "RELOAD"));
        RespAssert.Bulk("listpack", a.Call("OBJECT", "ENCODING", "wide"));
        RespAssert.Bulk("listpack", a.Call("OBJECT", "ENCODING", "small"));
        Assert.Equal(["z", "x", "y"], a.Call("HKEYS", "ordered").Array.Select(v => v.Text!));
        RespAssert.Ok(a.Call("CONFIG", "SET", "hash-max-listpack-entries", "2"));
        RespAssert.Ok(a.Call("DEBUG", "RELOAD"));
        RespAssert.Bulk("hashtable", a.Call("OBJECT", "ENCODING", "small"));
        RespAssert.Bulk("listpack", a.Call("OBJECT", "ENCODING", "wide"));
    }

    [Fact]
    public void MemoryUsageOfSmallHashesIsTheBytesHeld()
    {
        const int Keys = 5000;
        using var server = ServerProcess.Start();
        using var observer = server.Connect();
        long baseline = InfoFields.GetInt64(observer, "memory", "used_memory");
        using (var loader = server.Connect())
            Pipeline.RunAll(loader, Enumerable.Range(0, Keys).Select(i => new[] { "HSET", "user:" + i, "name", "ann", "age", "42", "city", "paris" }));
        Poll.Until(() => observer.Call("CLIENT", "LIST").Text!.Split('\n', StringSplitOptions.RemoveEmptyEntries).Length == 1, "the loader to disconnect");
        long held = InfoFields.GetInt64(observer, "memory", "used_memory") - baseline;
        long usage = 0;
        for (int i = 0; i < Keys; i++)
            usage += observer.Call("MEMORY", "USAGE", "user:" + i).Integer;
        RespAssert.Bulk("listpack", observer.Call("OBJECT", "ENCODING", "user:0"));
        Assert.True(Math.Abs(usage - held) <= held / 10,
            $"MEMORY USAGE of {Keys} small hashes sums to {usage} bytes, used_memory grew by {held} ({(usage - held) * 100.0 / held:F1}% apart)");

        // A field added, updated longer, deleted: MEMORY USAGE follows the block's size.
        long before = observer.Call("MEMORY", "USAGE", "user:1").Integer;
        observer.Call("HSET", "user:1", "email", "ann@example.com");
        long grown = observer.Call("MEMORY", "USAGE", "user:1").Integer;
        Assert.True(grown > before, $"MEMORY USAGE {before} -> {grown} after adding a field");
        observer.Call("HDEL", "user:1", "email");
        long shrunk = observer.Call("MEMORY", "USAGE", "user:1").Integer;
        Assert.True(shrunk >= before && shrunk <= grown, $"MEMORY USAGE {before} -> {grown} -> {shrunk} after deleting it again");

        observer.Call("FLUSHALL");
        Poll.Until(() => InfoFields.GetInt64(observer, "memory", "used_memory") - baseline < 64 * 1024,
            () => $"used_memory back within 64 KB of its baseline {baseline} after FLUSHALL (now {InfoFields.GetInt64(observer, "memory", "used_memory")})");
    }

    private static byte[][] Args(params object[] parts)
        => [.. parts.Select(p => p as byte[] ?? System.Text.Encoding.UTF8.GetBytes((string)p))];
}
