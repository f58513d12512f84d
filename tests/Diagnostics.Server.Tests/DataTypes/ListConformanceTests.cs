using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Lists against the real redis-server 7.0: every list command's replies in RESP2 and RESP3, and
/// the quicklist behind them. Node boundaries are Redis's after random pushes, pops, inserts,
/// sets, removals, trims and moves (DEBUG OBJECT's ql_* fields and DUMP's bytes compared after
/// every step), for node limits in elements and in bytes.
/// </summary>
public sealed class ListConformanceTests
{
    private static readonly string[] DebugOn = ["--enable-debug-command", "yes"];

    [Fact]
    public void ListCommandsAnswerAsRedis()
    {
        string[][] commands =
        [
            ["RPUSH", "l", "a", "b", "c", "1", "2", "3", "-7", "b", "a"], ["LPUSH", "l", "z", "40000"], ["LLEN", "l"],
            ["LRANGE", "l", "0", "-1"], ["LRANGE", "l", "-3", "100"], ["LRANGE", "l", "5", "2"], ["LRANGE", "l", "x", "1"],
            ["LINDEX", "l", "0"], ["LINDEX", "l", "-1"], ["LINDEX", "l", "4"], ["LINDEX", "l", "99"], ["LINDEX", "l", "-99"],
            ["LSET", "l", "1", "changed"], ["LSET", "l", "-1", "12"], ["LSET", "l", "50", "x"], ["LSET", "missing", "0", "x"],
            ["LINSERT", "l", "BEFORE", "b", "nb"], ["LINSERT", "l", "AFTER", "3", "n3"], ["LINSERT", "l", "AFTER", "nope", "x"],
            ["LINSERT", "l", "MIDDLE", "b", "x"], ["LINSERT", "missing", "BEFORE", "a", "x"],
            ["LPOS", "l", "b"], ["LPOS", "l", "b", "RANK", "-1"], ["LPOS", "l", "b", "COUNT", "0"], ["LPOS", "l", "b", "RANK", "2", "COUNT", "5"],
            ["LPOS", "l", "b", "MAXLEN", "3"], ["LPOS", "l", "12", "RANK", "-1", "COUNT", "2", "MAXLEN", "2"], ["LPOS", "l", "b", "RANK", "0"],
            ["LPOS", "l", "b", "COUNT", "-1"], ["LPOS", "missing", "b", "COUNT", "1"], ["LPOS", "l", "3"],
            ["LREM", "l", "1", "b"], ["LREM", "l", "-1", "a"], ["LREM", "l", "0", "12"], ["LREM", "l", "0", "absent"],
            ["LRANGE", "l", "0", "-1"],
            ["LPOP", "l"], ["RPOP", "l"], ["LPOP", "l", "2"], ["RPOP", "l", "0"], ["LPOP", "l", "-1"], ["LPOP", "missing"], ["LPOP", "missing", "2"],
            ["LPUSHX", "missing", "a"], ["RPUSHX", "l", "x1", "x2"], ["LPUSHX", "l", "y"],
            ["LMOVE", "l", "m", "LEFT", "RIGHT"], ["LMOVE", "l", "l", "RIGHT", "LEFT"], ["LMOVE", "l", "l", "LEFT", "LEFT"], ["RPOPLPUSH", "l", "m"],
            ["LMOVE", "missing", "m", "LEFT", "LEFT"], ["LMOVE", "l", "m", "UP", "LEFT"], ["LRANGE", "m", "0", "-1"],
            ["LMPOP", "2", "missing", "l", "LEFT"], ["LMPOP", "2", "missing", "m", "RIGHT", "COUNT", "5"], ["LMPOP", "1", "missing", "LEFT"],
            ["BLPOP", "missing", "l", "0.01"], ["BRPOP", "l", "0.01"], ["BLMOVE", "l", "m", "RIGHT", "LEFT", "0.01"], ["BLMPOP", "0.01", "1", "l", "LEFT", "COUNT", "2"],
            ["RPUSH", "n", "3", "10", "1", "-5", "200000", "2"], ["SORT", "n"], ["SORT", "n", "DESC", "LIMIT", "1", "3"], ["SORT", "n", "STORE", "sorted"],
            ["LRANGE", "sorted", "0", "-1"], ["SORT", "n", "ALPHA", "STORE", "n"], ["LRANGE", "n", "0", "-1"],
            ["COPY", "n", "n2"], ["LRANGE", "n2", "0", "-1"], ["OBJECT", "ENCODING", "n2"],
            ["LTRIM", "n", "1", "-2"], ["LRANGE", "n", "0", "-1"], ["LTRIM", "n", "5", "1"], ["EXISTS", "n"],
            ["SET", "s", "x"], ["LPUSH", "s", "a"], ["LRANGE", "s", "0", "1"], ["LLEN", "s"],
            ["RPUSH", "big", new string('x', 9000), "1", new string('y', 20000)], ["LINDEX", "big", "1"], ["LSET", "big", "0", "small"], ["LRANGE", "big", "0", "1"],
            ["EVAL", "return redis.call('LRANGE', KEYS[1], 0, -1)", "1", "n2"], ["EVAL", "redis.call('RPUSH', KEYS[1], 5, 'x'); return redis.call('LPOP', KEYS[1], 9)", "1", "ev"],
        ];
        SideBySideReplies.AssertSame(commands, c => RespAssert.Ok(c.Call("FLUSHALL")));
    }

    [Theory]
    [InlineData(-2, 1)]
    [InlineData(-1, 2)]
    [InlineData(2, 3)]
    [InlineData(3, 4)]
    [InlineData(0, 5)]
    [InlineData(16, 6)]
    public void RandomEditsKeepRedisNodes(int fill, int seed)
    {
        using var ours = ServerProcess.Start(DebugOn);
        using var redis = RealRedisServer.Start(DebugOn);
        foreach (int protocol in (int[])[2, 3])
        {
            using var a = ours.Connect();
            using var b = redis.Connect();
            foreach (var c in new[] { a, b })
            {
                if (protocol == 3)
                    Assert.Equal('%', c.Call("HELLO", "3").Kind);
                RespAssert.Ok(c.Call("FLUSHALL"));
                RespAssert.Ok(c.Call("CONFIG", "SET", "list-max-listpack-size", fill.ToString(CultureInfo.InvariantCulture)));
            }
            var random = new Random(seed * 10 + protocol);
            var model = new List<string>();
            string Both(params string[] command)
            {
                string mine = a.Call(command).ToString(), theirs = b.Call(command).ToString();
                Assert.True(mine == theirs, $"RESP{protocol} fill {fill} {SideBySideReplies.Describe(command.Select(System.Text.Encoding.UTF8.GetBytes).ToArray())}\n  redis: {theirs}\n  ours:  {mine}");
                return mine;
            }
            for (int step = 0; step < 250; step++)
            {
                RandomStep(random, model, Both);
                model = b.Call("LRANGE", "l", "0", "-1").Array.Select(v => v.Text!).ToList();
                if (model.Count == 0)
                    continue;
                Assert.Equal(QuicklistFields(b.Call("DEBUG", "OBJECT", "l").Text!), QuicklistFields(a.Call("DEBUG", "OBJECT", "l").Text!));
                Assert.Equal(b.CallForBytes("DUMP", "l"), a.CallForBytes("DUMP", "l"));
            }
        }
    }

    [Theory]
    [InlineData(-2, 10, 5)]
    [InlineData(-2, 5000, 10)]
    [InlineData(-1, 1000, 100)]
    [InlineData(-5, 3000, 50)]
    [InlineData(3, 10, 5)]
    [InlineData(128, 1000, 3)]
    [InlineData(0, 5, 3)]
    [InlineData(-2, 100, 0)]
    [InlineData(-2, 40, 9000)]
    [InlineData(-3, 5000, 0)]
    public void DebugObjectShowsRedisQuicklist(int fill, int count, int length)
    {
        // DEBUG RELOAD below saves a dump.rdb: in a directory of its own, never the test's.
        using var dir = new TempDirectory();
        using var ours = ServerProcess.Start([.. DebugOn, "--dir", dir.Path]);
        using var redis = RealRedisServer.Start(DebugOn);
        using var a = ours.Connect();
        using var b = redis.Connect();
        string[] push = ["RPUSH", "l", .. Enumerable.Range(0, count).Select(i => length == 0 ? i.ToString(CultureInfo.InvariantCulture) : ("v" + i + "-").PadRight(length, 'x'))];
        foreach (var c in new[] { a, b })
        {
            RespAssert.Ok(c.Call("FLUSHALL"));
            RespAssert.Ok(c.Call("CONFIG", "SET", "list-max-listpack-size", fill.ToString(CultureInfo.InvariantCulture)));
            Assert.Equal(count, c.Call(push).Integer);
        }
        string theirs = QuicklistFields(b.Call("DEBUG", "OBJECT", "l").Text!);
        Assert.Contains("ql_nodes:", theirs);
        Assert.Equal(theirs, QuicklistFields(a.Call("DEBUG", "OBJECT", "l").Text!));
        Assert.Equal(b.CallForBytes("DUMP", "l"), a.CallForBytes("DUMP", "l"));
        // A reload keeps the nodes as they were, whatever the limit is now.
        foreach (var c in new[] { a, b })
        {
            RespAssert.Ok(c.Call("CONFIG", "SET", "list-max-listpack-size", "7"));
            RespAssert.Ok(c.Call("DEBUG", "RELOAD"));
        }
        Assert.Equal(QuicklistFields(b.Call("DEBUG", "OBJECT", "l").Text!), QuicklistFields(a.Call("DEBUG", "OBJECT", "l").Text!));
    }

    [Fact]
    public void PlainNodesFromRedisAreKept()
    {
        using var ours = ServerProcess.Start(DebugOn);
        using var redis = RealRedisServer.Start(DebugOn);
        using var a = ours.Connect();
        using var b = redis.Connect();
        foreach (var c in new[] { a, b })
            RespAssert.Ok(c.Call("FLUSHALL"));
        // Redis makes plain nodes from 1 GB; its debug switch lowers that to make some here.
        RespAssert.Ok(b.Call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"));
        Assert.Equal(6, b.Call("RPUSH", "p", "a", "b", new string('Z', 150), "c", "12", new string('Q', 120)).Integer);
        byte[] payload = b.CallForBytes("DUMP", "p");
        RespAssert.Ok(a.Call("RESTORE"u8.ToArray(), "p"u8.ToArray(), "0"u8.ToArray(), payload));
        Assert.Equal(payload, a.CallForBytes("DUMP", "p"));
        Assert.Equal(QuicklistFields(b.Call("DEBUG", "OBJECT", "p").Text!), QuicklistFields(a.Call("DEBUG", "OBJECT", "p").Text!));
        string[][] edits = [["LINDEX", "p", "2"], ["LSET", "p", "2", "small"], ["LINSERT", "p", "AFTER", "small", "n2"], ["LREM", "p", "0", new string('Q', 120)], ["LRANGE", "p", "0", "-1"]];
        foreach (var edit in edits)
            Assert.Equal(b.Call(edit).ToString(), a.Call(edit).ToString());
        Assert.Equal(QuicklistFields(b.Call("DEBUG", "OBJECT", "p").Text!), QuicklistFields(a.Call("DEBUG", "OBJECT", "p").Text!));
        Assert.Equal(b.CallForBytes("DUMP", "p"), a.CallForBytes("DUMP", "p"));
        RespAssert.Ok(b.Call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1073741824"));
    }

    /// <summary>DEBUG OBJECT without the address and the clock: serializedlength and the ql_* fields.</summary>
    private static string QuicklistFields(string debugObject)
        => string.Join(' ', debugObject.Split(' ').Where(w => !w.StartsWith("at:", StringComparison.Ordinal) && !w.StartsWith("lru", StringComparison.Ordinal) && w != "Value"));

    private static void RandomStep(Random random, List<string> model, Func<string[], string> both)
    {
        int n = model.Count;
        string Pick() => n == 0 || random.Next(10) == 0 ? "absent" : model[random.Next(n)];
        string Value() => random.Next(10) switch
        {
            0 or 1 or 2 => random.Next(-1000, 100_000).ToString(CultureInfo.InvariantCulture),
            3 => new string('x', random.Next(500, 5000)),
            _ => "e" + random.Next(30) + new string('y', random.Next(0, random.Next(3) switch { 0 => 5, 1 => 50, _ => 300 })),
        };
        string Index() => random.Next(-n - 1, n + 1).ToString(CultureInfo.InvariantCulture);
        int op = random.Next(100);
        if (n == 0 || op < 25)
            both([random.Next(2) == 0 ? "LPUSH" : "RPUSH", "l", .. Enumerable.Range(0, random.Next(1, 20)).Select(_ => Value())]);
        else if (op < 40)
            both(["LINSERT", "l", random.Next(2) == 0 ? "BEFORE" : "AFTER", Pick(), Value()]);
        else if (op < 50)
            both(["LSET", "l", Index(), Value()]);
        else if (op < 60)
            both(["LREM", "l", random.Next(-3, 4).ToString(CultureInfo.InvariantCulture), Pick()]);
        else if (op < 65)
            both(["LTRIM", "l", Index(), Index()]);
        else if (op < 75)
            both([random.Next(2) == 0 ? "LPOP" : "RPOP", "l", random.Next(1, 6).ToString(CultureInfo.InvariantCulture)]);
        else if (op < 80)
            both(["LMOVE", "l", "l", random.Next(2) == 0 ? "LEFT" : "RIGHT", random.Next(2) == 0 ? "LEFT" : "RIGHT"]);
        else if (op < 85)
            both(["LPOS", "l", Pick(), "RANK", random.Next(2) == 0 ? "1" : "-2", "COUNT", random.Next(0, 4).ToString(CultureInfo.InvariantCulture)]);
        else
        {
            both(["LINDEX", "l", Index()]);
            int start = random.Next(-n - 2, n + 2);
            both(["LRANGE", "l", start.ToString(CultureInfo.InvariantCulture), (start + random.Next(-2, 50)).ToString(CultureInfo.InvariantCulture)]);
        }
    }
}
