using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>SCAN, KEYS (glob patterns) and RANDOMKEY against a real server; each test uses its own database.</summary>
public sealed class ScanTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private static RespClient Select(RespClient c, int db)
    {
        RespAssert.Ok(c.Call("SELECT", db.ToString()));
        RespAssert.Ok(c.Call("FLUSHDB"));
        return c;
    }

    private static void Load(RespClient c, IEnumerable<string> keys)
        => Pipeline.RunAll(c, keys.Select(k => new[] { "SET", k, "v" }));

    /// <summary>Runs a whole SCAN iteration; returns every key returned (with repeats) and the number of calls.</summary>
    private static (List<string> Keys, int Calls) ScanAll(RespClient c, params string[] options)
    {
        var keys = new List<string>();
        string cursor = "0";
        int calls = 0;
        do
        {
            var reply = c.Call(["SCAN", cursor, .. options]);
            Assert.True(reply.IsArray && reply.Array.Count == 2, $"unexpected SCAN reply {reply}");
            cursor = reply.Array[0].Text!;
            keys.AddRange(reply.Array[1].Array.Select(k => k.Text!));
            calls++;
            Assert.True(calls < 100_000, "SCAN did not terminate");
        } while (cursor != "0");
        return (keys, calls);
    }

    [Fact]
    public void ScanVisitsEveryKeyAndEndsAtZero()
    {
        using var c = Select(shared.Connect(), 1);
        var expected = Enumerable.Range(0, 5000).Select(i => $"scanall:{i}").ToHashSet();
        Load(c, expected);
        var (keys, calls) = ScanAll(c, "COUNT", "10");
        Assert.True(expected.SetEquals(keys.ToHashSet()), $"SCAN returned {keys.ToHashSet().Count} distinct keys of {expected.Count}");
        // COUNT bounds the work per call, so a full iteration takes many calls.
        Assert.True(calls > 100, $"only {calls} calls for 5000 keys with COUNT 10");
    }

    [Fact]
    public void ScanDefaultCountAndLargeCount()
    {
        using var c = Select(shared.Connect(), 2);
        var expected = Enumerable.Range(0, 300).Select(i => $"scancount:{i}").ToHashSet();
        Load(c, expected);
        Assert.True(expected.SetEquals(ScanAll(c).Keys));
        var (keys, calls) = ScanAll(c, "COUNT", "100000");
        Assert.True(expected.SetEquals(keys));
        Assert.Equal(300, keys.Count);
        Assert.Equal(1, calls);
        Assert.Equal(300, ScanAll(c, "COUNT", long.MaxValue.ToString()).Keys.Count);
    }

    /// <summary>
    /// Keys present for the whole scan are all returned although thousands of insertions and
    /// deletions between calls make the tables grow, rehash and shrink.
    /// </summary>
    [Fact]
    public void ScanSurvivesRehashingBetweenCalls()
    {
        using var c = Select(shared.Connect(), 3);
        var stable = Enumerable.Range(0, 1000).Select(i => $"stable:{i}").ToHashSet();
        Load(c, stable);
        Load(c, Enumerable.Range(0, 2000).Select(i => $"transient:{i}"));
        var seen = new HashSet<string>();
        string cursor = "0";
        int round = 0;
        do
        {
            var reply = c.Call("SCAN", cursor, "COUNT", "20");
            cursor = reply.Array[0].Text!;
            foreach (var k in reply.Array[1].Array)
                seen.Add(k.Text!);
            round++;
            if (round == 5)
                Load(c, Enumerable.Range(0, 6000).Select(i => $"growth:{i}")); // forces table growth
            if (round == 40)
                Pipeline.RunAll(c, Enumerable.Range(0, 2000).Select(i => new[] { "DEL", $"transient:{i}" }));
            if (round == 60)
                Pipeline.RunAll(c, Enumerable.Range(0, 6000).Select(i => new[] { "DEL", $"growth:{i}" })); // lets it shrink
        } while (cursor != "0");
        var missing = stable.Where(k => !seen.Contains(k)).ToList();
        Assert.True(missing.Count == 0, $"{missing.Count} stable keys never returned, e.g. {string.Join(", ", missing.Take(5))}");
    }

    [Fact]
    public void ScanMatchAndType()
    {
        using var c = Select(shared.Connect(), 4);
        Load(c, Enumerable.Range(0, 200).Select(i => $"user:{i}"));
        Load(c, Enumerable.Range(0, 50).Select(i => $"order:{i}"));
        var users = ScanAll(c, "MATCH", "user:*", "COUNT", "7").Keys.ToHashSet();
        Assert.Equal(200, users.Count);
        Assert.All(users, k => Assert.StartsWith("user:", k));
        var tens = ScanAll(c, "MATCH", "order:?", "COUNT", "1000").Keys;
        Assert.Equal(Enumerable.Range(0, 10).Select(i => $"order:{i}").Order(), tens.Order());

        Assert.Equal(250, ScanAll(c, "TYPE", "string").Keys.Distinct().Count());
        Assert.Equal(250, ScanAll(c, "TYPE", "STRING").Keys.Distinct().Count());
        Assert.Empty(ScanAll(c, "TYPE", "list").Keys);
        // Redis 7 answers an unknown type with an empty iteration.
        Assert.Empty(ScanAll(c, "TYPE", "nosuchtype").Keys);
        Assert.Equal(50, ScanAll(c, "MATCH", "order:*", "TYPE", "string", "COUNT", "3").Keys.Distinct().Count());
    }

    [Fact]
    public void ScanSkipsExpiredKeys()
    {
        using var c = Select(shared.Connect(), 5);
        Load(c, Enumerable.Range(0, 20).Select(i => $"live:{i}"));
        Pipeline.RunAll(c, Enumerable.Range(0, 20).Select(i => new[] { "SET", $"dying:{i}", "v", "PX", "50" }));
        Thread.Sleep(200);
        var keys = ScanAll(c, "COUNT", "1000").Keys;
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"live:{i}").Order(), keys.Order());
    }

    [Fact]
    public void ScanOnEmptyDatabase()
    {
        using var c = Select(shared.Connect(), 6);
        var reply = c.Call("SCAN", "0");
        RespAssert.Bulk("0", reply.Array[0]);
        Assert.Empty(reply.Array[1].Array);
    }

    [Fact]
    public void ScanErrors()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR invalid cursor", c.Call("SCAN", "abc"));
        RespAssert.Error("ERR invalid cursor", c.Call("SCAN", "1.5"));
        RespAssert.Error("ERR invalid cursor", c.Call("SCAN", "99999999999999999999999"));
        RespAssert.Error("ERR syntax error", c.Call("SCAN", "0", "COUNT", "0"));
        RespAssert.Error("ERR syntax error", c.Call("SCAN", "0", "COUNT", "-1"));
        RespAssert.Error("ERR value is not an integer or out of range", c.Call("SCAN", "0", "COUNT", "x"));
        RespAssert.Error("ERR syntax error", c.Call("SCAN", "0", "MATCH"));
        RespAssert.Error("ERR syntax error", c.Call("SCAN", "0", "LIMIT", "10"));
        RespAssert.Error("ERR wrong number of arguments for 'scan' command", c.Call("SCAN"));
    }

    [Fact]
    public void KeysMatchesGlobPatterns()
    {
        using var c = Select(shared.Connect(), 7);
        string[] all = ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo", "h[a]llo", "hbllo", "xyz"];
        Load(c, all);
        void Expect(string pattern, params string[] expected)
        {
            var reply = c.Call("KEYS", pattern);
            Assert.Equal(expected.Order(), reply.Array.Select(k => k.Text!).Order());
        }
        Expect("*", all);
        Expect("h?llo", "hello", "hallo", "hxllo", "h*llo", "h?llo", "hbllo");
        Expect("h*llo", "hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo", "h[a]llo", "hbllo");
        Expect("h[ae]llo", "hello", "hallo");
        Expect("h[^e]llo", "hallo", "hxllo", "h*llo", "h?llo", "hbllo");
        Expect("h[a-b]llo", "hallo", "hbllo");
        Expect("h[b-a]llo", "hallo", "hbllo");
        Expect("h\\*llo", "h*llo");
        Expect("h\\?llo", "h?llo");
        Expect("h\\[a\\]llo", "h[a]llo");
        Expect("h[\\]a]llo", "hallo");
        Expect("x*", "xyz");
        Expect("*z", "xyz");
        Expect("x?z", "xyz");
        Expect("nomatch*");
        Expect("hello?");
        Expect("h[", []);
        Expect("hxll[o", "hxllo");
        Expect("**o", "hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo", "h[a]llo", "hbllo");
    }

    [Fact]
    public void KeysWithHostilePatternFinishes()
    {
        using var c = Select(shared.Connect(), 8);
        string key = new('a', 80);
        Load(c, [key, key + "b"]);
        // Exponential for a naive matcher; Redis's skip-longer-matches rule makes it linear-ish.
        var reply = c.Call("KEYS", string.Concat(Enumerable.Repeat("*a", 30)) + "*b");
        Assert.Equal([key + "b"], reply.Array.Select(k => k.Text!));
        var none = c.Call("KEYS", string.Concat(Enumerable.Repeat("*a", 40)) + "c");
        Assert.Empty(none.Array);
        // Nesting beyond Redis's limit of 1000 stars does not match (and does not overflow the stack).
        string deep = string.Concat(Enumerable.Repeat("a*", 1200));
        Load(c, [new string('a', 1200)]);
        Assert.Empty(c.Call("KEYS", deep).Array);
    }

    [Fact]
    public void KeysSkipsExpiredKeysAndWorksAcrossShards()
    {
        using var c = Select(shared.Connect(), 9);
        Load(c, Enumerable.Range(0, 100).Select(i => $"ks:{i}"));
        RespAssert.Ok(c.Call("SET", "ks:dying", "v", "PX", "30"));
        Thread.Sleep(150);
        var keys = c.Call("KEYS", "ks:*").Array.Select(k => k.Text!).ToList();
        Assert.Equal(100, keys.Count);
        Assert.DoesNotContain("ks:dying", keys);
        RespAssert.Error("ERR wrong number of arguments for 'keys' command", c.Call("KEYS"));
    }

    [Fact]
    public void RandomKeyReturnsExistingKeysOrNull()
    {
        using var c = Select(shared.Connect(), 10);
        RespAssert.Null(c.Call("RANDOMKEY"));
        var keys = Enumerable.Range(0, 50).Select(i => $"rk:{i}").ToHashSet();
        Load(c, keys);
        var seen = new HashSet<string>();
        for (int i = 0; i < 200; i++)
        {
            string key = c.Call("RANDOMKEY").Text!;
            Assert.Contains(key, keys);
            seen.Add(key);
        }
        Assert.True(seen.Count > 10, $"RANDOMKEY returned only {seen.Count} distinct keys in 200 calls");
        RespAssert.Error("ERR wrong number of arguments for 'randomkey' command", c.Call("RANDOMKEY", "x"));
    }

    [Fact]
    public void RandomKeyDeletesExpiredPicks()
    {
        using var c = Select(shared.Connect(), 13);
        Pipeline.RunAll(c, Enumerable.Range(0, 30).Select(i => new[] { "SET", $"rkx:{i}", "v", "PX", "30" }));
        RespAssert.Ok(c.Call("SET", "rkx:live", "v"));
        Thread.Sleep(150);
        for (int i = 0; i < 20; i++)
            RespAssert.Bulk("rkx:live", c.Call("RANDOMKEY"));
    }
}
