using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Inputs that would exhaust the stack of a naive recursive implementation, and so kill the whole
/// process: glob patterns of 100k wildcards or unbalanced brackets in KEYS, SCAN MATCH and CONFIG
/// GET (matching nests at most 1000 deep, as Redis 7, compared side by side with redis-server),
/// and a configuration file that includes itself (which crashes redis-server). The server answers,
/// or refuses to start with a reason, and carries on.
/// </summary>
public sealed class StackExhaustionTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private static RespClient Select(RespClient c, int db)
    {
        RespAssert.Ok(c.Call("SELECT", db.ToString()));
        RespAssert.Ok(c.Call("FLUSHDB"));
        return c;
    }

    /// <summary>Every key SCAN MATCH returns over a whole iteration.</summary>
    private static List<string> ScanMatch(RespClient c, string pattern)
    {
        var keys = new List<string>();
        string cursor = "0";
        do
        {
            var reply = c.Call("SCAN", cursor, "MATCH", pattern, "COUNT", "1000");
            cursor = reply.Array[0].Text!;
            keys.AddRange(reply.Array[1].Array.Select(k => k.Text!));
        } while (cursor != "0");
        return keys;
    }

    [Fact]
    public void HugePatternsAnswerAndTheServerCarriesOn()
    {
        using var c = Select(shared.Connect(), 3);
        string longKey = new('a', 200_000);
        RespAssert.Ok(c.Call("SET", "stack:plain", "v"));
        RespAssert.Ok(c.Call("SET", longKey, "v"));

        // 100k stars are one star: everything matches.
        string stars = new('*', 100_000);
        Assert.Equal(2, c.Call("KEYS", stars).Array.Count);
        Assert.Equal(2, ScanMatch(c, stars).Count);
        // 100k stars each followed by a byte nest 100k deep: past 1000 levels nothing matches.
        string nested = string.Concat(Enumerable.Repeat("*a", 100_000));
        Assert.Empty(c.Call("KEYS", nested).Array);
        Assert.Empty(ScanMatch(c, nested));
        Assert.Empty(c.Call("KEYS", string.Concat(Enumerable.Repeat("a*", 100_000))).Array);
        // Unterminated and nested brackets are classes, not recursion.
        Assert.Empty(c.Call("KEYS", new string('[', 100_000)).Array);
        Assert.Empty(c.Call("KEYS", string.Concat(Enumerable.Repeat("[[]", 50_000))).Array);
        Assert.Empty(c.Call("KEYS", string.Concat(Enumerable.Repeat("[a-z]*?", 30_000))).Array);
        Assert.Empty(c.Call("CONFIG", "GET", string.Concat(Enumerable.Repeat("*m", 100_000))).Array);

        RespAssert.Simple("PONG", c.Call("PING"));
        RespAssert.Bulk("v", c.Call("GET", "stack:plain"));
        using var other = shared.Connect();
        RespAssert.Simple("PONG", other.Call("PING"));
    }

    [Fact]
    public void NestingLimitMatchesRedis()
    {
        using var redis = RealRedisServer.Start();
        using var theirs = new RespClient(redis.Port);
        using var ours = Select(shared.Connect(), 4);
        string key = new('a', 1200);
        RespAssert.Ok(ours.Call("SET", key, "v"));
        RespAssert.Ok(theirs.Call("SET", key, "v"));
        foreach (int stars in new[] { 998, 999, 1000, 1001, 1002, 1003, 1100 })
        {
            string pattern = string.Concat(Enumerable.Repeat("a*", stars));
            int expected = theirs.Call("KEYS", pattern).Array.Count;
            int actual = ours.Call("KEYS", pattern).Array.Count;
            Assert.True(expected == actual, $"KEYS with {stars} x \"a*\": redis found {expected} keys, this server {actual}");
        }
    }

    [Fact]
    public void ConfigFileIncludingItselfIsAnErrorNotACrash()
    {
        using var dir = new TempDirectory("include-loop-");
        string first = Path.Combine(dir.Path, "first.conf");
        string second = Path.Combine(dir.Path, "second.conf");
        File.WriteAllText(first, $"include {second}\nmaxclients 100\n");
        File.WriteAllText(second, $"include {first}\n");

        var (exitCode, output) = ServerProcess.RunUntilExitWith(first);

        Assert.Equal(1, exitCode);
        Assert.Contains("*** FATAL CONFIG ERROR ***", output);
        Assert.Contains("includes nest deeper than 32 files (does a file include itself?)", output);
        Assert.DoesNotContain("Stack overflow", output);
    }
}
