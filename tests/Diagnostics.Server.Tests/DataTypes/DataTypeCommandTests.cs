using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// What the side-by-side conformance test cannot compare: random replies (checked for the
/// properties Redis documents), cursor scans over values large enough to take several calls,
/// Redis 7.2+ options (ZRANK WITHSCORE, HSCAN NOVALUES), and the generic key commands (TYPE,
/// OBJECT, SCAN TYPE, COPY, RENAME, MOVE, EXPIRE) on every type.
/// </summary>
public sealed class DataTypeCommandTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private static string[] Range(string prefix, int count) => Enumerable.Range(0, count).Select(i => prefix + i).ToArray();

    private static void Fill(RespClient c, string key, string type, int count)
    {
        var commands = Range("m", count).Select((m, i) => type switch
        {
            "hash" => new[] { "HSET", key, m, "v" + i },
            "set" => ["SADD", key, m],
            "zset" => ["ZADD", key, i.ToString(CultureInfo.InvariantCulture), m],
            _ => ["RPUSH", key, m],
        });
        Pipeline.RunAll(c, commands);
    }

    [Fact]
    public void RandomFieldsFollowTheCountRules()
    {
        using var c = shared.Connect();
        Fill(c, "rand:h", "hash", 50);
        Fill(c, "rand:s", "set", 50);
        Fill(c, "rand:z", "zset", 50);

        foreach (var (command, key) in new[] { ("HRANDFIELD", "rand:h"), ("SRANDMEMBER", "rand:s"), ("ZRANDMEMBER", "rand:z") })
        {
            // A positive count: distinct elements, at most the size.
            var some = c.Call(command, key, "20").Array.Select(r => r.Text!).ToList();
            Assert.Equal(20, some.Distinct().Count());
            var most = c.Call(command, key, "40").Array.Select(r => r.Text!).ToList();
            Assert.Equal(40, most.Distinct().Count());
            Assert.Equal(50, c.Call(command, key, "500").Array.Count);
            Assert.Equal(50, c.Call(command, key, "500").Array.Select(r => r.Text).Distinct().Count());
            // A negative count: exactly that many, repeats allowed.
            var many = c.Call(command, key, "-300").Array.Select(r => r.Text!).ToList();
            Assert.Equal(300, many.Count);
            Assert.True(many.Distinct().Count() < 300, "300 picks among 50 without a repeat");
            Assert.All(many, m => Assert.StartsWith("m", m));
        }

        // WITHVALUES and WITHSCORES pair each field with its own value.
        var pairs = c.Call("HRANDFIELD", "rand:h", "-10", "WITHVALUES").Array;
        Assert.Equal(20, pairs.Count);
        for (int i = 0; i < pairs.Count; i += 2)
            Assert.Equal("v" + pairs[i].Text![1..], pairs[i + 1].Text);
        var scored = c.Call("ZRANDMEMBER", "rand:z", "5", "WITHSCORES").Array;
        for (int i = 0; i < scored.Count; i += 2)
            Assert.Equal(scored[i].Text![1..], scored[i + 1].Text);

        // RESP3 nests each pair.
        using var r3 = shared.Connect();
        r3.Call("HELLO", "3");
        var nested = r3.Call("HRANDFIELD", "rand:h", "3", "WITHVALUES").Array;
        Assert.Equal(3, nested.Count);
        Assert.All(nested, pair => Assert.Equal("v" + pair.Array[0].Text![1..], pair.Array[1].Text));
        var scores = r3.Call("ZRANDMEMBER", "rand:z", "-4", "WITHSCORES").Array;
        Assert.All(scores, pair => Assert.Equal(double.Parse(pair.Array[0].Text![1..], CultureInfo.InvariantCulture), pair.Array[1].Double));
    }

    [Fact]
    public void SpopRemovesExactlyWhatItReturns()
    {
        using var c = shared.Connect();
        Fill(c, "spop:s", "set", 100);
        var popped = c.Call("SPOP", "spop:s", "30").Array.Select(r => r.Text!).ToList();
        Assert.Equal(30, popped.Distinct().Count());
        RespAssert.Integer(70, c.Call("SCARD", "spop:s"));
        foreach (string member in popped)
            RespAssert.Integer(0, c.Call("SISMEMBER", "spop:s", member));
        string one = c.Call("SPOP", "spop:s").Text!;
        RespAssert.Integer(0, c.Call("SISMEMBER", "spop:s", one));
        Assert.Equal(69, c.Call("SPOP", "spop:s", "1000").Array.Count);
        RespAssert.Integer(0, c.Call("EXISTS", "spop:s"));
    }

    [Theory]
    [InlineData("hash", "HSCAN")]
    [InlineData("set", "SSCAN")]
    [InlineData("zset", "ZSCAN")]
    public void ScansVisitEveryElementAcrossCalls(string type, string command)
    {
        using var c = shared.Connect();
        string key = "scan:" + type;
        Fill(c, key, type, 1000);
        var seen = new HashSet<string>();
        string cursor = "0";
        int calls = 0;
        do
        {
            var reply = c.Call(command, key, cursor, "COUNT", "50").Array;
            cursor = reply[0].Text!;
            var items = reply[1].Array;
            int step = type == "set" ? 1 : 2;
            for (int i = 0; i < items.Count; i += step)
            {
                seen.Add(items[i].Text!);
                if (type == "hash")
                    Assert.Equal("v" + items[i].Text![1..], items[i + 1].Text);
                if (type == "zset")
                    Assert.Equal(items[i].Text![1..], items[i + 1].Text);
            }
            calls++;
        } while (cursor != "0");
        Assert.Equal(1000, seen.Count);
        Assert.True(calls > 5, $"a 1000-element scan with COUNT 50 took only {calls} calls");

        // MATCH filters what a full iteration returns.
        var matched = new HashSet<string>();
        cursor = "0";
        do
        {
            var reply = c.Call(command, key, cursor, "MATCH", "m1?", "COUNT", "100").Array;
            cursor = reply[0].Text!;
            for (int i = 0; i < reply[1].Array.Count; i += type == "set" ? 1 : 2)
                matched.Add(reply[1].Array[i].Text!);
        } while (cursor != "0");
        Assert.Equal(Enumerable.Range(10, 10).Select(i => "m" + i).Order(), matched.Order());
    }

    [Fact]
    public void HscanNoValuesReturnsFieldsOnly()
    {
        using var c = shared.Connect();
        Fill(c, "scan:novalues", "hash", 5);
        var reply = c.Call("HSCAN", "scan:novalues", "0", "NOVALUES").Array;
        RespAssert.Bulk("0", reply[0]);
        Assert.Equal(Range("m", 5).Order(), reply[1].Array.Select(r => r.Text!).Order());
    }

    [Fact]
    public void ZrankWithScoreGivesRankAndScore()
    {
        using var c = shared.Connect();
        c.Call("ZADD", "rank:z", "1.5", "a", "2", "b", "-inf", "c");
        var withScore = c.Call("ZRANK", "rank:z", "a", "WITHSCORE").Array;
        RespAssert.Integer(1, withScore[0]);
        RespAssert.Bulk("1.5", withScore[1]);
        var reverse = c.Call("ZREVRANK", "rank:z", "c", "WITHSCORE").Array;
        RespAssert.Integer(2, reverse[0]);
        RespAssert.Bulk("-inf", reverse[1]);
        Assert.Equal('*', c.Call("ZRANK", "rank:z", "nope", "WITHSCORE").Kind);
        Assert.True(c.Call("ZRANK", "rank:z", "nope", "WITHSCORE").IsNull);
        RespAssert.Error("ERR syntax error", c.Call("ZRANK", "rank:z", "a", "WITHSCORES"));

        using var r3 = shared.Connect();
        r3.Call("HELLO", "3");
        var resp3 = r3.Call("ZRANK", "rank:z", "b", "WITHSCORE").Array;
        RespAssert.Integer(2, resp3[0]);
        Assert.Equal(',', resp3[1].Kind);
        Assert.Equal(2.0, resp3[1].Double);
    }

    [Theory]
    [InlineData("hash", "hash", "listpack")]
    [InlineData("list", "list", "quicklist")]
    [InlineData("set", "set", "listpack")] // 20 short strings: a listpack in Redis 7.2 (7.0 has no listpack sets: hashtable)
    [InlineData("zset", "zset", "listpack")] // 20 short members: a listpack, as in Redis 7.0
    public void GenericKeyCommandsWorkOnEveryType(string type, string typeName, string encoding)
    {
        using var c = shared.Connect();
        string key = "generic:" + type;
        Fill(c, key, type, 20);
        RespAssert.Simple(typeName, c.Call("TYPE", key));
        RespAssert.Bulk(encoding, c.Call("OBJECT", "ENCODING", key));
        Assert.StartsWith("Value at:", c.Call("DEBUG", "OBJECT", key).Text);
        Assert.Contains("encoding:" + encoding, c.Call("DEBUG", "OBJECT", key).Text);
        Assert.Contains(key, c.Call("SCAN", "0", "TYPE", typeName, "COUNT", "100000").Array[1].Array.Select(r => r.Text));
        Assert.DoesNotContain(key, c.Call("SCAN", "0", "TYPE", "string", "COUNT", "100000").Array[1].Array.Select(r => r.Text));

        // COPY makes an independent value: changing the copy leaves the original alone.
        RespAssert.Integer(1, c.Call("COPY", key, key + ":copy"));
        string length = type switch { "hash" => "HLEN", "list" => "LLEN", "set" => "SCARD", _ => "ZCARD" };
        string[] add = type switch
        {
            "hash" => ["HSET", key + ":copy", "extra", "1"],
            "list" => ["RPUSH", key + ":copy", "extra"],
            "set" => ["SADD", key + ":copy", "extra"],
            _ => ["ZADD", key + ":copy", "99", "extra"],
        };
        c.Call(add);
        RespAssert.Integer(21, c.Call(length, key + ":copy"));
        RespAssert.Integer(20, c.Call(length, key));

        // RENAME and MOVE carry the value; EXPIRE and PERSIST apply to it as to any key.
        RespAssert.Ok(c.Call("RENAME", key + ":copy", key + ":renamed"));
        RespAssert.Integer(21, c.Call(length, key + ":renamed"));
        RespAssert.Integer(1, c.Call("MOVE", key + ":renamed", "3"));
        RespAssert.Ok(c.Call("SELECT", "3"));
        RespAssert.Integer(21, c.Call(length, key + ":renamed"));
        RespAssert.Integer(1, c.Call("DEL", key + ":renamed"));
        RespAssert.Ok(c.Call("SELECT", "0"));
        RespAssert.Integer(1, c.Call("PEXPIRE", key, "150"));
        // Changing an aggregate keeps its TTL.
        c.Call([add[0], key, .. add[2..]]);
        Assert.InRange(c.Call("PTTL", key).Integer, 1, 150);
        Poll.Until(() => c.Call("EXISTS", key).Integer == 0, $"{key} to expire", 5_000);
        RespAssert.Integer(0, c.Call(length, key));
    }

    [Fact]
    public void WrongTypeIsRefusedByEveryFamily()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "wrongtype:s", "v"));
        const string wrong = "WRONGTYPE Operation against a key holding the wrong kind of value";
        RespAssert.Error(wrong, c.Call("HSET", "wrongtype:s", "f", "v"));
        RespAssert.Error(wrong, c.Call("LPUSH", "wrongtype:s", "a"));
        RespAssert.Error(wrong, c.Call("SADD", "wrongtype:s", "a"));
        RespAssert.Error(wrong, c.Call("ZADD", "wrongtype:s", "1", "a"));
        c.Call("HSET", "wrongtype:h", "f", "v");
        RespAssert.Error(wrong, c.Call("GET", "wrongtype:h"));
        RespAssert.Error(wrong, c.Call("APPEND", "wrongtype:h", "x"));
        RespAssert.Error(wrong, c.Call("LRANGE", "wrongtype:h", "0", "-1"));
        RespAssert.Error(wrong, c.Call("SMEMBERS", "wrongtype:h"));
        RespAssert.Error(wrong, c.Call("ZSCORE", "wrongtype:h", "f"));
        // SET replaces any type, as in Redis.
        RespAssert.Ok(c.Call("SET", "wrongtype:h", "now a string"));
        RespAssert.Simple("string", c.Call("TYPE", "wrongtype:h"));
    }

    [Fact]
    public void ValuesAreBinarySafe()
    {
        using var c = shared.Connect();
        byte[] B(string s) => System.Text.Encoding.UTF8.GetBytes(s);
        string binary = "a\0b\r\n\0c";
        c.Call(B("HSET"), B("bin:h"), B(binary), B(binary + binary));
        RespAssert.Bulk(binary + binary, c.Call(B("HGET"), B("bin:h"), B(binary)));
        c.Call(B("RPUSH"), B("bin:l"), B(binary), B(""), B("\0"));
        RespAssert.BulkArray(c.Call("LRANGE", "bin:l", "0", "-1"), binary, "", "\0");
        c.Call(B("SADD"), B("bin:s"), B(binary), B(""));
        RespAssert.Integer(1, c.Call(B("SISMEMBER"), B("bin:s"), B("")));
        c.Call(B("ZADD"), B("bin:z"), B("1"), B(binary), B("0"), B(""));
        RespAssert.BulkArray(c.Call("ZRANGE", "bin:z", "0", "-1"), "", binary);
    }
}
