using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// SLOWLOG as Redis keeps it: newest first, six fields per entry, arguments capped at 32 and 128
/// bytes each, secrets redacted, bounded by slowlog-max-len, off with a negative threshold.
/// Each test runs its own server, since the thresholds are server-wide.
/// </summary>
public sealed class SlowLogTests
{
    [Fact]
    public void EveryCommandIsLoggedNewestFirstWithRedisFields()
    {
        using var server = ServerProcess.Start("--slowlog-log-slower-than", "0");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("CLIENT", "SETNAME", "slow-client"));
        RespAssert.Ok(c.Call("SLOWLOG", "RESET"));
        RespAssert.Ok(c.Call("SET", "slow:a", "1"));
        RespAssert.Bulk("1", c.Call("GET", "slow:a"));
        long before = DateTimeOffset.UtcNow.ToUnixTimeSeconds();

        var entries = c.Call("SLOWLOG", "GET").Array;
        // Newest first: GET, SET, then the SLOWLOG RESET itself.
        Assert.Equal(3, entries.Count);
        var get = entries[0].Array;
        Assert.Equal(6, get.Count);
        Assert.True(get[0].Integer > entries[1].Array[0].Integer, "ids must grow");
        Assert.InRange(get[1].Integer, before - 5, before + 5);
        Assert.True(get[2].Integer >= 0);
        RespAssert.BulkArray(get[3], "GET", "slow:a");
        Assert.StartsWith("127.0.0.1:", get[4].Text);
        Assert.Equal("slow-client", get[5].Text);
        RespAssert.BulkArray(entries[1].Array[3], "SET", "slow:a", "1");
        RespAssert.BulkArray(entries[2].Array[3], "SLOWLOG", "RESET");

        RespAssert.Integer(4, c.Call("SLOWLOG", "LEN")); // the GET above was logged too
        Assert.Single(c.Call("SLOWLOG", "GET", "1").Array);
        Assert.Equal(6, c.Call("SLOWLOG", "GET", "-1").Array.Count);
        RespAssert.Error("ERR count should be greater than or equal to -1", c.Call("SLOWLOG", "GET", "-2"));
        RespAssert.Error("ERR count should be greater than or equal to -1", c.Call("SLOWLOG", "GET", "x"));
    }

    [Fact]
    public void LongArgumentListsAndValuesAreCutAndSecretsRedacted()
    {
        using var server = ServerProcess.Start("--slowlog-log-slower-than", "0", "--requirepass", "s3cret-pass");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", "s3cret-pass"));
        var many = new List<string> { "MSET" };
        for (int i = 0; i < 40; i++)
            many.AddRange([$"slow:k{i}", "v"]);
        RespAssert.Ok(c.Call([.. many]));
        RespAssert.Ok(c.Call("SET", "slow:big", new string('x', 300)));
        Assert.False(c.Call("HELLO", "2", "AUTH", "default", "s3cret-pass").IsError, "HELLO AUTH failed");
        RespAssert.Ok(c.Call("CONFIG", "SET", "requirepass", "s3cret-pass", "maxclients", "500"));

        // Newest first; SLOWLOG GET is logged after it replies, so it is not among them.
        var entries = c.Call("SLOWLOG", "GET", "-1").Array;
        var config = entries[0].Array[3].Array.Select(a => a.Text).ToList();
        Assert.Equal(["CONFIG", "SET", "requirepass", "(redacted)", "maxclients", "500"], config);
        var hello = entries[1].Array[3].Array.Select(a => a.Text).ToList();
        Assert.Equal(["HELLO", "2", "AUTH", "(redacted)", "(redacted)"], hello);
        var big = entries[2].Array[3].Array;
        Assert.Equal(new string('x', 128) + "... (172 more bytes)", big[2].Text);
        var mset = entries[3].Array[3].Array;
        Assert.Equal(32, mset.Count);
        Assert.Equal("... (50 more arguments)", mset[31].Text);
        var auth = entries[4].Array[3].Array.Select(a => a.Text).ToList();
        Assert.Equal(["AUTH", "(redacted)"], auth);
        string everything = string.Join("\n", entries.SelectMany(e => e.Array[3].Array).Select(a => a.Text));
        Assert.DoesNotContain("s3cret-pass", everything);
    }

    [Fact]
    public void ThresholdAndMaxLengthAreHonouredAtRunTime()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        // Default threshold (10 ms): ordinary commands stay out, a 50 ms DEBUG SLEEP gets in. Each
        // command runs once before: a first call's JIT can pass 10 ms on a busy machine.
        RespAssert.Ok(c.Call("SET", "slow:warm", "1"));
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0"));
        c.Call("SLOWLOG", "GET");
        RespAssert.Ok(c.Call("SLOWLOG", "RESET"));
        RespAssert.Ok(c.Call("SLOWLOG", "RESET"));
        RespAssert.Ok(c.Call("SET", "slow:fast", "1"));
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.05"));
        var entries = c.Call("SLOWLOG", "GET").Array;
        Assert.Single(entries);
        RespAssert.BulkArray(entries[0].Array[3], "DEBUG", "SLEEP", "0.05");
        Assert.True(entries[0].Array[2].Integer >= 50_000, $"DEBUG SLEEP 0.05 logged as {entries[0].Array[2].Integer} us");

        RespAssert.Ok(c.Call("CONFIG", "SET", "slowlog-log-slower-than", "0"));
        RespAssert.Ok(c.Call("CONFIG", "SET", "slowlog-max-len", "3"));
        for (int i = 0; i < 10; i++)
            RespAssert.Ok(c.Call("SET", $"slow:n{i}", "v"));
        RespAssert.Integer(3, c.Call("SLOWLOG", "LEN"));
        var newest = c.Call("SLOWLOG", "GET").Array;
        Assert.Equal(3, newest.Count);
        RespAssert.BulkArray(newest[0].Array[3], "SLOWLOG", "LEN");
        RespAssert.BulkArray(newest[1].Array[3], "SET", "slow:n9", "v");
        RespAssert.BulkArray(newest[2].Array[3], "SET", "slow:n8", "v");

        RespAssert.Ok(c.Call("CONFIG", "SET", "slowlog-log-slower-than", "-1"));
        RespAssert.Ok(c.Call("SLOWLOG", "RESET"));
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.02"));
        RespAssert.Integer(0, c.Call("SLOWLOG", "LEN"));
        Assert.Equal("-1", c.Call("CONFIG", "GET", "slowlog-log-slower-than").Array[1].Text);
    }
}
