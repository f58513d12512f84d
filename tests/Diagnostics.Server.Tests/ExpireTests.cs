using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>EXPIRE family, TTL family, PERSIST, and lazy and active expiry, against a real server.</summary>
public sealed class ExpireTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private static long NowMs => DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();

    [Fact]
    public void TtlReportsMissingPersistentAndRemaining()
    {
        using var c = shared.Connect();
        RespAssert.Integer(-2, c.Call("TTL", "ttl:missing"));
        RespAssert.Integer(-2, c.Call("PTTL", "ttl:missing"));
        RespAssert.Integer(-2, c.Call("EXPIRETIME", "ttl:missing"));
        RespAssert.Integer(-2, c.Call("PEXPIRETIME", "ttl:missing"));
        RespAssert.Ok(c.Call("SET", "ttl:plain", "v"));
        RespAssert.Integer(-1, c.Call("TTL", "ttl:plain"));
        RespAssert.Integer(-1, c.Call("PTTL", "ttl:plain"));
        RespAssert.Integer(-1, c.Call("EXPIRETIME", "ttl:plain"));
        RespAssert.Integer(-1, c.Call("PEXPIRETIME", "ttl:plain"));

        RespAssert.Integer(1, c.Call("EXPIRE", "ttl:plain", "100"));
        Assert.InRange(c.Call("TTL", "ttl:plain").Integer, 99, 100);
        Assert.InRange(c.Call("PTTL", "ttl:plain").Integer, 98_000, 100_000);
    }

    [Fact]
    public void TtlRoundsToNearestSecond()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "ttlround:k", "v"));
        RespAssert.Integer(1, c.Call("PEXPIRE", "ttlround:k", "2900"));
        // 2900 ms, less up to 400 ms of a loaded machine's latency, still rounds to 3 s, as (ms + 500) / 1000 does.
        RespAssert.Integer(3, c.Call("TTL", "ttlround:k"));
        RespAssert.Integer(1, c.Call("PEXPIRE", "ttlround:k", "1400"));
        RespAssert.Integer(1, c.Call("TTL", "ttlround:k"));
    }

    [Fact]
    public void ExpireAtAndExpireTimeUseAbsoluteTimes()
    {
        using var c = shared.Connect();
        long at = NowMs / 1000 + 1000;
        RespAssert.Ok(c.Call("SET", "expat:k", "v"));
        RespAssert.Integer(1, c.Call("EXPIREAT", "expat:k", at.ToString()));
        RespAssert.Integer(at, c.Call("EXPIRETIME", "expat:k"));
        RespAssert.Integer(at * 1000, c.Call("PEXPIRETIME", "expat:k"));

        long atMs = NowMs + 500_123;
        RespAssert.Integer(1, c.Call("PEXPIREAT", "expat:k", atMs.ToString()));
        RespAssert.Integer(atMs, c.Call("PEXPIRETIME", "expat:k"));
        RespAssert.Integer((atMs + 500) / 1000, c.Call("EXPIRETIME", "expat:k"));
        Assert.InRange(c.Call("TTL", "expat:k").Integer, 495, 500);
    }

    [Fact]
    public void ExpireOnMissingKeyReturnsZero()
    {
        using var c = shared.Connect();
        RespAssert.Integer(0, c.Call("EXPIRE", "expmissing:k", "100"));
        RespAssert.Integer(0, c.Call("PEXPIRE", "expmissing:k", "100"));
        RespAssert.Integer(0, c.Call("EXPIREAT", "expmissing:k", "99999999999"));
        RespAssert.Integer(0, c.Call("PEXPIREAT", "expmissing:k", "99999999999999"));
        RespAssert.Integer(0, c.Call("EXISTS", "expmissing:k"));
    }

    [Fact]
    public void TimeInThePastDeletesTheKey()
    {
        using var c = shared.Connect();
        string[][] commands =
        [
            ["EXPIRE", "past:k", "-1"], ["PEXPIRE", "past:k", "0"], ["EXPIREAT", "past:k", "1"],
            ["PEXPIREAT", "past:k", (NowMs - 1000).ToString()], ["EXPIRE", "past:k", "0"], ["EXPIREAT", "past:k", "-5"],
        ];
        foreach (var command in commands)
        {
            RespAssert.Ok(c.Call("SET", "past:k", "v"));
            RespAssert.Integer(1, c.Call(command));
            RespAssert.Integer(0, c.Call("EXISTS", "past:k"));
            RespAssert.Integer(-2, c.Call("TTL", "past:k"));
        }
    }

    [Fact]
    public void NxAndXxConditions()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "nxxx:k", "v"));
        RespAssert.Integer(0, c.Call("EXPIRE", "nxxx:k", "100", "XX"));
        RespAssert.Integer(-1, c.Call("TTL", "nxxx:k"));
        RespAssert.Integer(1, c.Call("EXPIRE", "nxxx:k", "100", "NX"));
        RespAssert.Integer(0, c.Call("EXPIRE", "nxxx:k", "200", "NX"));
        RespAssert.Integer(100, c.Call("TTL", "nxxx:k"));
        RespAssert.Integer(1, c.Call("EXPIRE", "nxxx:k", "200", "xx"));
        Assert.InRange(c.Call("TTL", "nxxx:k").Integer, 199, 200);
        RespAssert.Integer(0, c.Call("PEXPIRE", "nxxx:missing", "100", "NX"));
    }

    [Fact]
    public void GtAndLtConditions()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "gtlt:k", "v"));
        // No TTL counts as infinite: GT fails, LT succeeds.
        RespAssert.Integer(0, c.Call("EXPIRE", "gtlt:k", "100", "GT"));
        RespAssert.Integer(-1, c.Call("TTL", "gtlt:k"));
        RespAssert.Integer(1, c.Call("EXPIRE", "gtlt:k", "100", "LT"));
        RespAssert.Integer(0, c.Call("EXPIRE", "gtlt:k", "50", "GT"));
        RespAssert.Integer(1, c.Call("EXPIRE", "gtlt:k", "200", "GT"));
        RespAssert.Integer(0, c.Call("EXPIRE", "gtlt:k", "300", "LT"));
        RespAssert.Integer(1, c.Call("EXPIRE", "gtlt:k", "150", "LT"));
        Assert.InRange(c.Call("TTL", "gtlt:k").Integer, 149, 150);
        RespAssert.Integer(1, c.Call("EXPIRE", "gtlt:k", "300", "XX", "GT"));
        Assert.InRange(c.Call("TTL", "gtlt:k").Integer, 299, 300);
        // A past time that passes LT deletes the key.
        RespAssert.Integer(1, c.Call("EXPIRE", "gtlt:k", "-10", "LT"));
        RespAssert.Integer(0, c.Call("EXISTS", "gtlt:k"));
    }

    [Fact]
    public void ConditionErrors()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "experr:k", "v"));
        const string nxWithOthers = "ERR NX and XX, GT or LT options at the same time are not compatible";
        RespAssert.Error(nxWithOthers, c.Call("EXPIRE", "experr:k", "10", "NX", "XX"));
        RespAssert.Error(nxWithOthers, c.Call("EXPIRE", "experr:k", "10", "NX", "GT"));
        RespAssert.Error(nxWithOthers, c.Call("PEXPIRE", "experr:k", "10", "LT", "NX"));
        RespAssert.Error("ERR GT and LT options at the same time are not compatible", c.Call("EXPIREAT", "experr:k", "10", "GT", "LT"));
        RespAssert.Error("ERR Unsupported option FOO", c.Call("EXPIRE", "experr:k", "10", "FOO"));
        // Options are checked before the time argument, as in Redis.
        RespAssert.Error(nxWithOthers, c.Call("EXPIRE", "experr:k", "soon", "NX", "XX"));
        RespAssert.Error("ERR value is not an integer or out of range", c.Call("EXPIRE", "experr:k", "soon"));
        RespAssert.Error("ERR value is not an integer or out of range", c.Call("PEXPIRE", "experr:k", "1.5"));
        RespAssert.Error("ERR wrong number of arguments for 'expire' command", c.Call("EXPIRE", "experr:k"));
        RespAssert.Integer(-1, c.Call("TTL", "experr:k"));
    }

    [Fact]
    public void OverflowingTimesAreInvalid()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "expover:k", "v"));
        RespAssert.Error("ERR invalid expire time in 'expire' command", c.Call("EXPIRE", "expover:k", "9223372036854775807"));
        RespAssert.Error("ERR invalid expire time in 'expire' command", c.Call("EXPIRE", "expover:k", "99999999999999999"));
        RespAssert.Error("ERR invalid expire time in 'pexpire' command", c.Call("PEXPIRE", "expover:k", "9223372036854775807"));
        RespAssert.Error("ERR invalid expire time in 'expireat' command", c.Call("EXPIREAT", "expover:k", "-9223372036854775808"));
        RespAssert.Integer(-1, c.Call("TTL", "expover:k"));
        // The largest absolute millisecond time is accepted.
        RespAssert.Integer(1, c.Call("PEXPIREAT", "expover:k", "9223372036854775807"));
        RespAssert.Integer(9223372036854775807, c.Call("PEXPIRETIME", "expover:k"));
        RespAssert.Integer(9223372036854776, c.Call("EXPIRETIME", "expover:k"));
    }

    [Fact]
    public void PersistRemovesTtl()
    {
        using var c = shared.Connect();
        RespAssert.Integer(0, c.Call("PERSIST", "persist:missing"));
        RespAssert.Ok(c.Call("SET", "persist:k", "v", "EX", "100"));
        RespAssert.Integer(1, c.Call("PERSIST", "persist:k"));
        RespAssert.Integer(-1, c.Call("TTL", "persist:k"));
        RespAssert.Integer(0, c.Call("PERSIST", "persist:k"));
        RespAssert.Bulk("v", c.Call("GET", "persist:k"));
        // Setting a TTL again after PERSIST works (the key re-enters the volatile set).
        RespAssert.Integer(1, c.Call("PEXPIRE", "persist:k", "100"));
        Thread.Sleep(250);
        RespAssert.Null(c.Call("GET", "persist:k"));
    }

    [Fact]
    public void ExpiredKeysVanishOnAccess()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "lazy:get", "v", "PX", "100"));
        RespAssert.Ok(c.Call("SET", "lazy:exists", "v", "PX", "100"));
        RespAssert.Ok(c.Call("SET", "lazy:ttl", "v", "PX", "100"));
        RespAssert.Ok(c.Call("SET", "lazy:type", "v", "PX", "100"));
        RespAssert.Integer(1, c.Call("EXISTS", "lazy:exists"));
        Thread.Sleep(300);
        RespAssert.Null(c.Call("GET", "lazy:get"));
        RespAssert.Integer(0, c.Call("EXISTS", "lazy:exists"));
        RespAssert.Integer(-2, c.Call("TTL", "lazy:ttl"));
        RespAssert.Simple("none", c.Call("TYPE", "lazy:type"));
        RespAssert.Integer(0, c.Call("EXPIRE", "lazy:get", "100"));
        RespAssert.Integer(0, c.Call("PERSIST", "lazy:exists"));
        RespAssert.Error("ERR no such key", c.Call("RENAME", "lazy:ttl", "lazy:renamed"));
    }

    /// <summary>
    /// Keys that are never touched again must still go: the shard cron samples keys with a TTL and
    /// deletes the expired ones, so DBSIZE (which counts without expiring) drops to zero.
    /// </summary>
    [Fact]
    public void ActiveExpiryRemovesUntouchedKeys()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SELECT", "11"));
        const int keys = 2000;
        Pipeline.RunAll(c, Enumerable.Range(0, keys).Select(i => new[] { "SET", $"active:{i}", "v", "PX", "100" }));
        Assert.InRange(c.Call("DBSIZE").Integer, 1, keys);
        Thread.Sleep(1500);
        var deadline = DateTime.UtcNow.AddSeconds(10);
        long size;
        while ((size = c.Call("DBSIZE").Integer) > 0 && DateTime.UtcNow < deadline)
            Thread.Sleep(100);
        Assert.Equal(0, size);
    }

    [Fact]
    public void ActiveExpiryLeavesLiveKeys()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SELECT", "12"));
        Pipeline.RunAll(c, Enumerable.Range(0, 500).Select(i => new[] { "SET", $"mixed:short:{i}", "v", "PX", "100" }));
        Pipeline.RunAll(c, Enumerable.Range(0, 100).Select(i => new[] { "SET", $"mixed:long:{i}", "v", "EX", "1000" }));
        Pipeline.RunAll(c, Enumerable.Range(0, 100).Select(i => new[] { "SET", $"mixed:plain:{i}", "v" }));
        var deadline = DateTime.UtcNow.AddSeconds(10);
        long size;
        Thread.Sleep(1500);
        while ((size = c.Call("DBSIZE").Integer) > 200 && DateTime.UtcNow < deadline)
            Thread.Sleep(100);
        Assert.Equal(200, size);
        RespAssert.Bulk("v", c.Call("GET", "mixed:long:99"));
        RespAssert.Bulk("v", c.Call("GET", "mixed:plain:0"));
    }
}
