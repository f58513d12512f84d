using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// DBSIZE, FLUSHDB, FLUSHALL, SWAPDB, and their interplay with SELECT and MOVE. These act on
/// whole databases, so the class has its own server; its tests run one after another.
/// </summary>
public sealed class DatabaseCommandTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private static void Load(RespClient c, string prefix, int count)
        => Pipeline.RunAll(c, Enumerable.Range(0, count).Select(i => new[] { "SET", $"{prefix}:{i}", "v" }));

    [Fact]
    public void DbSizeCountsKeysOfSelectedDatabaseOnly()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("FLUSHALL"));
        RespAssert.Integer(0, c.Call("DBSIZE"));
        Load(c, "size", 123);
        RespAssert.Integer(123, c.Call("DBSIZE"));
        RespAssert.Ok(c.Call("SELECT", "1"));
        RespAssert.Integer(0, c.Call("DBSIZE"));
        Load(c, "size1", 7);
        RespAssert.Integer(7, c.Call("DBSIZE"));
        RespAssert.Error("ERR wrong number of arguments for 'dbsize' command", c.Call("DBSIZE", "x"));
    }

    [Fact]
    public void FlushDbEmptiesOnlySelectedDatabase()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SELECT", "2"));
        RespAssert.Ok(c.Call("FLUSHDB"));
        Load(c, "f2", 50);
        RespAssert.Ok(c.Call("SELECT", "3"));
        Load(c, "f3", 60);
        RespAssert.Ok(c.Call("FLUSHDB"));
        RespAssert.Integer(0, c.Call("DBSIZE"));
        RespAssert.Ok(c.Call("SELECT", "2"));
        RespAssert.Integer(50, c.Call("DBSIZE"));
        RespAssert.Ok(c.Call("FLUSHDB", "SYNC"));
        RespAssert.Integer(0, c.Call("DBSIZE"));
        Load(c, "f2b", 10);
        RespAssert.Ok(c.Call("FLUSHDB", "async"));
        RespAssert.Integer(0, c.Call("DBSIZE"));
        // The emptied database takes new keys at once.
        RespAssert.Ok(c.Call("SET", "f2:new", "v"));
        RespAssert.Integer(1, c.Call("DBSIZE"));
    }

    [Fact]
    public void FlushAllEmptiesEveryDatabase()
    {
        using var c = shared.Connect();
        for (int db = 0; db < 16; db += 5)
        {
            RespAssert.Ok(c.Call("SELECT", db.ToString()));
            Load(c, $"all{db}", 20);
        }
        RespAssert.Ok(c.Call("FLUSHALL", "SYNC"));
        for (int db = 0; db < 16; db++)
        {
            RespAssert.Ok(c.Call("SELECT", db.ToString()));
            RespAssert.Integer(0, c.Call("DBSIZE"));
        }
    }

    [Fact]
    public void FlushAllAsyncLeavesNothingBehind()
    {
        using var c = shared.Connect();
        Load(c, "async", 20_000);
        Pipeline.RunAll(c, Enumerable.Range(0, 500).Select(i => new[] { "SET", $"async:ttl:{i}", "v", "EX", "1000" }));
        RespAssert.Ok(c.Call("SELECT", "4"));
        Load(c, "async4", 1000);
        RespAssert.Ok(c.Call("FLUSHALL", "ASYNC"));
        RespAssert.Integer(0, c.Call("DBSIZE"));
        RespAssert.Ok(c.Call("SELECT", "0"));
        RespAssert.Integer(0, c.Call("DBSIZE"));
        RespAssert.Null(c.Call("GET", "async:5"));
        RespAssert.Integer(-2, c.Call("TTL", "async:ttl:5"));
        Assert.Empty(c.Call("KEYS", "*").Array);
        // Keys and TTLs work normally in the flushed databases.
        RespAssert.Ok(c.Call("SET", "async:again", "v", "PX", "100"));
        Assert.InRange(c.Call("PTTL", "async:again").Integer, 1, 100);
    }

    [Fact]
    public void FlushErrors()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR syntax error", c.Call("FLUSHALL", "NOW"));
        RespAssert.Error("ERR syntax error", c.Call("FLUSHALL", "ASYNC", "SYNC"));
        RespAssert.Error("ERR syntax error", c.Call("FLUSHDB", "LATER"));
        RespAssert.Error("ERR syntax error", c.Call("FLUSHDB", "SYNC", "SYNC"));
    }

    [Fact]
    public void SwapDbExchangesDataSeenByOtherClients()
    {
        using var a = shared.Connect();
        using var b = shared.Connect();
        RespAssert.Ok(a.Call("SELECT", "8"));
        RespAssert.Ok(a.Call("FLUSHDB"));
        RespAssert.Ok(b.Call("SELECT", "9"));
        RespAssert.Ok(b.Call("FLUSHDB"));
        RespAssert.Ok(a.Call("SET", "swap:a", "in-8", "EX", "300"));
        Load(a, "swap8", 30);
        RespAssert.Ok(b.Call("SET", "swap:b", "in-9"));

        RespAssert.Ok(a.Call("SWAPDB", "8", "9"));
        // Each client stays on its number and now sees the other database's data.
        RespAssert.Null(a.Call("GET", "swap:a"));
        RespAssert.Bulk("in-9", a.Call("GET", "swap:b"));
        RespAssert.Integer(1, a.Call("DBSIZE"));
        RespAssert.Bulk("in-8", b.Call("GET", "swap:a"));
        Assert.InRange(b.Call("TTL", "swap:a").Integer, 295, 300);
        RespAssert.Integer(31, b.Call("DBSIZE"));

        // Swapping back, and swapping a database with itself, are both fine.
        RespAssert.Ok(b.Call("SWAPDB", "9", "8"));
        RespAssert.Ok(b.Call("SWAPDB", "9", "9"));
        RespAssert.Bulk("in-8", a.Call("GET", "swap:a"));
        RespAssert.Integer(31, a.Call("DBSIZE"));
        // MOVE addresses databases by number too, after the swaps.
        RespAssert.Integer(1, a.Call("MOVE", "swap:a", "9"));
        RespAssert.Bulk("in-8", b.Call("GET", "swap:a"));
        Assert.InRange(b.Call("TTL", "swap:a").Integer, 290, 300);
    }

    [Fact]
    public void SwapDbThenActiveExpiryStillWorks()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SELECT", "11"));
        RespAssert.Ok(c.Call("FLUSHDB"));
        RespAssert.Ok(c.Call("SELECT", "10"));
        RespAssert.Ok(c.Call("FLUSHDB"));
        Pipeline.RunAll(c, Enumerable.Range(0, 300).Select(i => new[] { "SET", $"swapexp:{i}", "v", "PX", "100" }));
        RespAssert.Ok(c.Call("SWAPDB", "10", "11"));
        RespAssert.Ok(c.Call("SELECT", "11"));
        var deadline = DateTime.UtcNow.AddSeconds(10);
        long size;
        Thread.Sleep(1000);
        while ((size = c.Call("DBSIZE").Integer) > 0 && DateTime.UtcNow < deadline)
            Thread.Sleep(100);
        Assert.Equal(0, size);
    }

    [Fact]
    public void SwapDbErrors()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR invalid first DB index", c.Call("SWAPDB", "x", "1"));
        RespAssert.Error("ERR invalid second DB index", c.Call("SWAPDB", "1", "y"));
        RespAssert.Error("ERR invalid second DB index", c.Call("SWAPDB", "100", "y"));
        RespAssert.Error("ERR invalid first DB index", c.Call("SWAPDB", "99999999999", "1"));
        RespAssert.Error("ERR DB index is out of range", c.Call("SWAPDB", "1", "16"));
        RespAssert.Error("ERR DB index is out of range", c.Call("SWAPDB", "-1", "0"));
        RespAssert.Error("ERR wrong number of arguments for 'swapdb' command", c.Call("SWAPDB", "1"));
    }

    [Fact]
    public void MoveAndSelectInterplay()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SELECT", "12"));
        RespAssert.Ok(c.Call("FLUSHDB"));
        RespAssert.Ok(c.Call("SELECT", "13"));
        RespAssert.Ok(c.Call("FLUSHDB"));
        RespAssert.Ok(c.Call("SELECT", "12"));
        Load(c, "mv", 40);
        for (int i = 0; i < 40; i += 2)
            RespAssert.Integer(1, c.Call("MOVE", $"mv:{i}", "13"));
        RespAssert.Integer(20, c.Call("DBSIZE"));
        RespAssert.Ok(c.Call("SELECT", "13"));
        RespAssert.Integer(20, c.Call("DBSIZE"));
        RespAssert.Bulk("v", c.Call("GET", "mv:0"));
        RespAssert.Null(c.Call("GET", "mv:1"));
        RespAssert.Ok(c.Call("FLUSHDB"));
        RespAssert.Ok(c.Call("SELECT", "12"));
        RespAssert.Integer(20, c.Call("DBSIZE"));
    }
}
