using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Hashes, lists, sets and sorted sets through the AOF: every write command of the families,
/// including the ones that must be logged as their effect (SPOP's random members, HINCRBYFLOAT's
/// rounding, LMPOP and ZMPOP), survives DEBUG RELOAD, a restart, and a rewrite followed by a
/// restart, with values and expiry times unchanged.
/// </summary>
public sealed class DataTypePersistenceTests
{
    /// <summary>Writes of every type and family, shared with the RDB snapshot and replication tests.</summary>
    internal static readonly string[][] Workload =
    [
        ["HSET", "h:a", "f1", "v1", "f2", "v2", "f3", "v3"], ["HSETNX", "h:a", "f4", "v4"], ["HDEL", "h:a", "f1"],
        ["HMSET", "h:b", "x", "1"], ["HINCRBY", "h:b", "x", "41"], ["HINCRBYFLOAT", "h:b", "pi", "3.14159"], ["HINCRBYFLOAT", "h:b", "pi", "0.1"],
        ["HSET", "h:gone", "f", "v"], ["HDEL", "h:gone", "f"],
        ["RPUSH", "l:a", "one", "two", "three", "a-much-longer-element-than-seven-bytes"], ["LPUSH", "l:a", "zero"], ["LSET", "l:a", "1", "ONE"],
        ["LINSERT", "l:a", "BEFORE", "three", "2.5"], ["LREM", "l:a", "1", "two"], ["LTRIM", "l:a", "0", "3"], ["LPOP", "l:a"], ["RPUSHX", "l:a", "tail"],
        ["RPUSH", "l:src", "1", "2", "3", "4", "5", "6"], ["LMOVE", "l:src", "l:dst", "LEFT", "RIGHT"], ["RPOPLPUSH", "l:src", "l:dst"],
        ["LMPOP", "2", "l:none", "l:src", "RIGHT", "COUNT", "2"], ["RPOP", "l:src", "1"],
        ["SADD", "s:a", "a", "b", "c", "d", "e", "f", "g", "h"], ["SREM", "s:a", "h"], ["SPOP", "s:a"], ["SPOP", "s:a", "2"],
        ["SADD", "s:b", "c", "d", "e", "x"], ["SMOVE", "s:b", "s:a", "x"],
        // The pops are random: one member certainly shared keeps s:inter from being empty (RENAME needs it).
        ["SADD", "s:a", "c"], ["SINTERSTORE", "s:inter", "s:a", "s:b"],
        ["SUNIONSTORE", "s:union", "s:a", "s:b"], ["SDIFFSTORE", "s:diff", "s:a", "s:b"],
        ["ZADD", "z:a", "1", "a", "2", "b", "3", "c", "-inf", "low", "+inf", "high", "2.5", "mid"], ["ZINCRBY", "z:a", "0.25", "a"],
        ["ZADD", "z:a", "GT", "CH", "0", "b", "10", "c"], ["ZREM", "z:a", "mid"], ["ZPOPMIN", "z:a"], ["ZPOPMAX", "z:a", "1"],
        ["ZADD", "z:b", "5", "a", "6", "z"], ["ZUNIONSTORE", "z:union", "2", "z:a", "z:b", "WEIGHTS", "2", "1"],
        ["ZINTERSTORE", "z:inter", "2", "z:a", "z:b", "AGGREGATE", "MAX"], ["ZDIFFSTORE", "z:diff", "2", "z:a", "z:b"],
        ["ZRANGESTORE", "z:range", "z:union", "0", "1"], ["ZMPOP", "1", "z:b", "MAX"], ["ZREMRANGEBYSCORE", "z:union", "(100", "+inf"],
        ["ZADD", "z:lex", "0", "a", "0", "b", "0", "c"], ["ZREMRANGEBYLEX", "z:lex", "[a", "(b"],
        // Bitmaps (strings written bit by bit) and SORT ... STORE (a list).
        ["SETBIT", "b:a", "100", "1"], ["BITFIELD", "b:a", "SET", "u8", "#3", "200", "INCRBY", "i5", "0", "7"], ["SET", "b:x", "abc"],
        ["BITOP", "XOR", "b:xor", "b:a", "b:x"], ["BITFIELD", "b:a", "OVERFLOW", "FAIL", "INCRBY", "u8", "#3", "100"], ["BITOP", "NOT", "b:not", "b:x"],
        ["SORT", "s:a", "ALPHA", "STORE", "sort:alpha"], ["SORT", "z:a", "BY", "nosort", "DESC", "STORE", "sort:z"],
        ["MSET", "w:a", "3", "w:b", "1", "w:c", "2"], ["SORT", "s:b", "BY", "w:*", "GET", "#", "GET", "w:*", "STORE", "sort:by"],
        // Streams: entries (shared and own fields, numbers stored as integers), deletions, trims,
        // counters, groups with consumers and pending entries, an emptied stream.
        ["XADD", "x:a", "1-1", "f", "v", "n", "42"], ["XADD", "x:a", "1-2", "f", "w", "n", "-7"], ["XADD", "x:a", "2-0", "other", "field"],
        ["XADD", "x:a", "3-0", "f", "x", "n", "99999999999999999999"], ["XDEL", "x:a", "1-2"], ["XGROUP", "CREATE", "x:a", "g1", "0"],
        ["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "x:a", ">"], ["XGROUP", "CREATECONSUMER", "x:a", "g1", "idle"],
        ["XGROUP", "CREATE", "x:a", "g2", "$"], ["XCLAIM", "x:a", "g1", "bob", "0", "2-0"], ["XACK", "x:a", "g1", "1-1"],
        ["XADD", "x:trim", "MAXLEN", "2", "1-0", "a", "1"], ["XADD", "x:trim", "MAXLEN", "2", "2-0", "a", "2"], ["XADD", "x:trim", "MAXLEN", "2", "3-0", "a", "3"],
        ["XADD", "x:empty", "5-0", "a", "1"], ["XDEL", "x:empty", "5-0"], ["XSETID", "x:empty", "9-9", "ENTRIESADDED", "12", "MAXDELETEDID", "7-0"],
        ["XGROUP", "CREATE", "x:mk", "g", "$", "MKSTREAM"],
        // Geo (sorted sets of geohashes): GEOADD is logged as ZADD, the STORE forms as DEL + ZADD of what they stored.
        ["GEOADD", "geo:a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "2.3522", "48.8566", "Paris"],
        ["GEOADD", "geo:a", "XX", "CH", "13.4", "38.1", "Palermo", "0", "0", "ignored"], ["GEOADD", "geo:a", "NX", "1", "1", "Paris", "180", "85.05112878", "corner"],
        ["GEOSEARCHSTORE", "geo:near", "geo:a", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "STOREDIST"],
        ["GEORADIUS", "geo:a", "15", "37", "2000", "mi", "COUNT", "2", "DESC", "STORE", "geo:far"],
        ["GEORADIUSBYMEMBER", "geo:a", "Paris", "1", "km", "STOREDIST", "geo:paris"], ["GEORADIUS", "geo:a", "0", "0", "1", "km", "STORE", "geo:none"],
        // HyperLogLogs: sparse, promoted, merged, converted by PFDEBUG, with PFCOUNT's cache writes.
        ["PFADD", "hll:a", "a", "b", "c"], ["PFCOUNT", "hll:a"], ["PFADD", "hll:a", "d"], ["PFADD", "hll:empty"],
        ["PFADD", "hll:big", .. Enumerable.Range(0, 3000).Select(i => "e" + i)], ["PFCOUNT", "hll:big"],
        ["PFMERGE", "hll:merged", "hll:a", "hll:big"], ["PFADD", "hll:b", "x", "y"], ["PFDEBUG", "TODENSE", "hll:b"], ["PFCOUNT", "hll:b"],
        ["PFMERGE", "hll:a", "hll:b"],
        // Expiry and generic commands on aggregates.
        ["HSET", "ttl:h", "f", "v"], ["PEXPIRE", "ttl:h", "900000"], ["RPUSH", "ttl:l", "x"], ["EXPIREAT", "ttl:l", "4102444800"],
        ["SADD", "ttl:s", "m"], ["EXPIRE", "ttl:s", "800"], ["SADD", "ttl:s", "n"],
        ["ZADD", "ttl:z", "1", "m"], ["PEXPIREAT", "ttl:z", "4102444800123"],
        ["COPY", "z:a", "copy:z"], ["RENAME", "s:inter", "renamed:s"], ["SELECT", "2"], ["HSET", "db2:h", "k", "v"], ["SELECT", "0"],
    ];

    [Fact]
    public void EveryTypeSurvivesReloadRestartAndRewrite()
    {
        using var dir = new TempDirectory();
        DatasetSnapshot written;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            foreach (var command in Workload)
            {
                var reply = c.Call(command);
                Assert.False(reply.IsError, $"{string.Join(' ', command)} failed: {reply}");
            }
            // Big values: a rewrite splits them into several commands.
            Pipeline.RunAll(c, Enumerable.Range(0, 500).SelectMany(i => new[]
            {
                new[] { "HSET", "big:h", "f" + i, "v" + i }, ["RPUSH", "big:l", "e" + i], ["SADD", "big:s", "m" + i], ["ZADD", "big:z", i.ToString(), "m" + i],
            }));
            written = DatasetSnapshot.Read(c);
            Assert.True(written.Count > 25, $"the workload left only {written.Count} keys");
            Assert.False(written.Contains(0, "h:gone"), "a hash emptied by HDEL still exists");

            RespAssert.Ok(c.Call("DEBUG", "LOADAOF"));
            DatasetSnapshot.Read(c).AssertSameAs(written, "after DEBUG LOADAOF");
            c.Send("SHUTDOWN", "NOSAVE");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), "SHUTDOWN did not stop the server");
        }

        // The log as written (DEBUG RELOAD rewrote it: add more on top so replay covers both).
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            DatasetSnapshot.Read(c).AssertSameAs(written, "after a restart");
            Assert.False(c.Call("SPOP", "s:union", "2").IsError);
            Assert.False(c.Call("HINCRBYFLOAT", "h:b", "pi", "1e-3").IsError);
            Assert.False(c.Call("LMPOP", "1", "big:l", "LEFT", "COUNT", "3").IsError);
            RespAssert.Integer(1, c.Call("GEOADD", "geo:a", "12.496366", "41.902782", "Rome"));
            RespAssert.Integer(3, c.Call("GEOSEARCHSTORE", "geo:near", "geo:a", "FROMMEMBER", "Rome", "BYRADIUS", "1000", "km", "STOREDIST", "ASC"));
            RespAssert.Integer(1, c.Call("GEORADIUS", "geo:a", "15", "37", "1000", "km", "COUNT", "1", "STORE", "geo:far"));
            RespAssert.Integer(0, c.Call("GEOSEARCHSTORE", "geo:paris", "geo:a", "FROMLONLAT", "0", "0", "BYBOX", "1", "1", "km"));
            RespAssert.Integer(1, c.Call("PFADD", "hll:a", "after-restart"));
            Assert.False(c.Call("PFCOUNT", "hll:a").IsError);
            written = DatasetSnapshot.Read(c);
            c.Send("SHUTDOWN", "NOSAVE");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), "SHUTDOWN did not stop the server");
        }

        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            DatasetSnapshot.Read(c).AssertSameAs(written, "after a restart that replayed SPOP, HINCRBYFLOAT, LMPOP and the geo writes");
            Assert.StartsWith("Background append only file rewriting", c.Call("BGREWRITEAOF").Text);
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0", "the rewrite to finish");
            c.Send("SHUTDOWN", "NOSAVE");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), "SHUTDOWN did not stop the server");
        }

        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
            DatasetSnapshot.Read(c).AssertSameAs(written, "after a rewrite and a restart");
    }
}
