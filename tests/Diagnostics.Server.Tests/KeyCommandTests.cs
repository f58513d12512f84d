using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>DEL, UNLINK, EXISTS, TYPE, TOUCH, RENAME, RENAMENX, COPY, MOVE and OBJECT against a real server.</summary>
public sealed class KeyCommandTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public void DelCountsOnlyExistingKeysAcrossShards()
    {
        using var c = shared.Connect();
        for (int i = 0; i < 20; i++)
            RespAssert.Ok(c.Call("SET", $"del:{i}", "v"));
        var args = new List<string> { "DEL" };
        for (int i = 0; i < 20; i++)
            args.Add($"del:{i}");
        args.Add("del:missing");
        args.Add("del:3"); // already deleted by the time it is reached
        RespAssert.Integer(20, c.Call([.. args]));
        RespAssert.Integer(0, c.Call("EXISTS", "del:0", "del:19"));
        RespAssert.Integer(0, c.Call("DEL", "del:missing"));
        RespAssert.Error("ERR wrong number of arguments for 'del' command", c.Call("DEL"));
    }

    /// <summary>
    /// Deleting keys while the tables grow (incremental rehashing, with fresh keys going to the new
    /// table) must keep every other key reachable and the count exact.
    /// </summary>
    [Fact]
    public void DeletesDuringRehashingKeepKeyspaceIntact()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SELECT", "14"));
        var random = new Random(2);
        var live = new HashSet<string>();
        var commands = new List<string[]>();
        for (int i = 0; i < 60_000; i++)
        {
            string key = $"churn:{i}";
            commands.Add(["SET", key, "v"]);
            live.Add(key);
            if (random.NextDouble() < 0.4)
            {
                string victim = $"churn:{random.Next(Math.Max(0, i - 50), i + 1)}";
                commands.Add(["DEL", victim]);
                live.Remove(victim);
            }
        }
        Pipeline.RunAll(c, commands);
        RespAssert.Integer(live.Count, c.Call("DBSIZE"));
        var keys = live.ToArray();
        var exists = Pipeline.Run(c, keys.Select(k => new[] { "EXISTS", k }));
        var missing = Enumerable.Range(0, keys.Length).Where(i => exists[i].Kind != ':' || exists[i].Integer != 1).ToList();
        if (missing.Count > 0)
        {
            // Say enough to tell a table that lost entries (DBSIZE unchanged) from a keyspace
            // emptied by someone else (a FLUSH or SWAPDB in the command stats, DBSIZE now lower).
            Assert.Fail($"{missing.Count} of {keys.Length} keys not found (first {keys[missing[0]]} at {missing[0]}, last {keys[missing[^1]]} at {missing[^1]}); "
                + $"DBSIZE now {c.Call("DBSIZE")}\n{c.Call("INFO", "keyspace")}\n{c.Call("INFO", "commandstats")}\n{c.Call("CLIENT", "LIST")}\nserver output:\n{shared.Server.Output}");
        }
    }

    [Fact]
    public void UnlinkDeletesLikeDel()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "unlink:a", "1"));
        RespAssert.Ok(c.Call("SET", "unlink:b", new string('x', 100_000)));
        RespAssert.Integer(2, c.Call("UNLINK", "unlink:a", "unlink:b", "unlink:c"));
        RespAssert.Null(c.Call("GET", "unlink:b"));
        RespAssert.Error("ERR wrong number of arguments for 'unlink' command", c.Call("UNLINK"));
    }

    [Fact]
    public void ExistsCountsRepeatedKeys()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "exists:a", "1"));
        RespAssert.Integer(1, c.Call("EXISTS", "exists:a"));
        RespAssert.Integer(3, c.Call("EXISTS", "exists:a", "exists:a", "exists:missing", "exists:a"));
        RespAssert.Integer(0, c.Call("EXISTS", "exists:missing"));
    }

    [Fact]
    public void TypeNamesStringOrNone()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "type:s", "v"));
        RespAssert.Simple("string", c.Call("TYPE", "type:s"));
        RespAssert.Simple("none", c.Call("TYPE", "type:missing"));
        RespAssert.Error("ERR wrong number of arguments for 'type' command", c.Call("TYPE", "a", "b"));
    }

    [Fact]
    public void TouchCountsExistingKeysAndResetsIdleTime()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "touch:a", "1"));
        RespAssert.Ok(c.Call("SET", "touch:b", "1"));
        RespAssert.Integer(3, c.Call("TOUCH", "touch:a", "touch:b", "touch:missing", "touch:a"));
        RespAssert.Integer(0, c.Call("OBJECT", "IDLETIME", "touch:a"));
    }

    [Fact]
    public void RenameMovesValueAndOverwritesTarget()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "rename:src", "value"));
        RespAssert.Ok(c.Call("SET", "rename:dst", "old", "EX", "1000"));
        RespAssert.Ok(c.Call("RENAME", "rename:src", "rename:dst"));
        RespAssert.Bulk("value", c.Call("GET", "rename:dst"));
        RespAssert.Integer(0, c.Call("EXISTS", "rename:src"));
        // The target takes the source's TTL, here none.
        RespAssert.Integer(-1, c.Call("TTL", "rename:dst"));
    }

    [Fact]
    public void RenameErrorsAndSameKey()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR no such key", c.Call("RENAME", "rename-err:missing", "rename-err:x"));
        RespAssert.Error("ERR no such key", c.Call("RENAMENX", "rename-err:missing", "rename-err:x"));
        RespAssert.Error("ERR no such key", c.Call("RENAME", "rename-err:missing", "rename-err:missing"));
        RespAssert.Ok(c.Call("SET", "rename-err:k", "v", "EX", "100"));
        RespAssert.Ok(c.Call("RENAME", "rename-err:k", "rename-err:k"));
        RespAssert.Integer(0, c.Call("RENAMENX", "rename-err:k", "rename-err:k"));
        RespAssert.Bulk("v", c.Call("GET", "rename-err:k"));
        Assert.InRange(c.Call("TTL", "rename-err:k").Integer, 99, 100);
        RespAssert.Error("ERR wrong number of arguments for 'rename' command", c.Call("RENAME", "rename-err:k"));
    }

    [Fact]
    public void RenameNxOnlyWhenTargetAbsent()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "renamenx:a", "1"));
        RespAssert.Ok(c.Call("SET", "renamenx:b", "2"));
        RespAssert.Integer(0, c.Call("RENAMENX", "renamenx:a", "renamenx:b"));
        RespAssert.Bulk("1", c.Call("GET", "renamenx:a"));
        RespAssert.Bulk("2", c.Call("GET", "renamenx:b"));
        RespAssert.Integer(1, c.Call("RENAMENX", "renamenx:a", "renamenx:c"));
        RespAssert.Bulk("1", c.Call("GET", "renamenx:c"));
        RespAssert.Integer(0, c.Call("EXISTS", "renamenx:a"));
    }

    /// <summary>
    /// Forty pairs: with the keys spread over the shards by hash, many pairs cross shards (the
    /// chance that none does is 2^-40 with two shards). Every rename must keep value and TTL.
    /// </summary>
    [Fact]
    public void RenameAcrossShardsKeepsValueAndTtl()
    {
        using var c = shared.Connect();
        const int pairs = 40;
        for (int i = 0; i < pairs; i++)
            RespAssert.Ok(c.Call("SET", $"xrename:from:{i}", $"value-{i}", "EX", "500"));
        for (int i = 0; i < pairs; i++)
        {
            if (i % 2 == 0)
                RespAssert.Ok(c.Call("RENAME", $"xrename:from:{i}", $"xrename:to:{i}"));
            else
                RespAssert.Integer(1, c.Call("RENAMENX", $"xrename:from:{i}", $"xrename:to:{i}"));
        }
        for (int i = 0; i < pairs; i++)
        {
            RespAssert.Integer(0, c.Call("EXISTS", $"xrename:from:{i}"));
            RespAssert.Bulk($"value-{i}", c.Call("GET", $"xrename:to:{i}"));
            Assert.InRange(c.Call("TTL", $"xrename:to:{i}").Integer, 495, 500);
        }
        // Renaming back and forth keeps working (the entries are intact in their new tables).
        for (int i = 0; i < pairs; i++)
            RespAssert.Ok(c.Call("RENAME", $"xrename:to:{i}", $"xrename:back:{i}"));
        for (int i = 0; i < pairs; i++)
            RespAssert.Bulk($"value-{i}", c.Call("GET", $"xrename:back:{i}"));
    }

    [Fact]
    public void CopyDuplicatesValueAndTtl()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "copy:src", "payload", "EX", "300"));
        RespAssert.Integer(1, c.Call("COPY", "copy:src", "copy:dst"));
        RespAssert.Bulk("payload", c.Call("GET", "copy:dst"));
        Assert.InRange(c.Call("TTL", "copy:dst").Integer, 295, 300);
        // The copy is independent of the original.
        RespAssert.Ok(c.Call("SET", "copy:src", "changed"));
        RespAssert.Bulk("payload", c.Call("GET", "copy:dst"));

        RespAssert.Integer(0, c.Call("COPY", "copy:src", "copy:dst"));
        RespAssert.Bulk("payload", c.Call("GET", "copy:dst"));
        RespAssert.Integer(1, c.Call("COPY", "copy:src", "copy:dst", "REPLACE"));
        RespAssert.Bulk("changed", c.Call("GET", "copy:dst"));
        RespAssert.Integer(-1, c.Call("TTL", "copy:dst"));
        RespAssert.Integer(0, c.Call("COPY", "copy:missing", "copy:dst2"));
    }

    [Fact]
    public void CopyToAnotherDatabase()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "copydb:k", "v"));
        RespAssert.Integer(1, c.Call("COPY", "copydb:k", "copydb:k", "DB", "5"));
        RespAssert.Integer(0, c.Call("COPY", "copydb:k", "copydb:k", "DB", "5"));
        RespAssert.Integer(1, c.Call("COPY", "copydb:k", "copydb:k", "DB", "5", "REPLACE"));
        RespAssert.Ok(c.Call("SELECT", "5"));
        RespAssert.Bulk("v", c.Call("GET", "copydb:k"));
        RespAssert.Ok(c.Call("SELECT", "0"));
        RespAssert.Bulk("v", c.Call("GET", "copydb:k"));
    }

    [Fact]
    public void CopyErrors()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "copyerr:k", "v"));
        RespAssert.Error("ERR source and destination objects are the same", c.Call("COPY", "copyerr:k", "copyerr:k"));
        RespAssert.Error("ERR source and destination objects are the same", c.Call("COPY", "copyerr:k", "copyerr:k", "DB", "0"));
        RespAssert.Error("ERR DB index is out of range", c.Call("COPY", "copyerr:k", "copyerr:x", "DB", "16"));
        RespAssert.Error("ERR DB index is out of range", c.Call("COPY", "copyerr:k", "copyerr:x", "DB", "-1"));
        RespAssert.Error("ERR value is not an integer or out of range", c.Call("COPY", "copyerr:k", "copyerr:x", "DB", "one"));
        RespAssert.Error("ERR syntax error", c.Call("COPY", "copyerr:k", "copyerr:x", "NOW"));
        RespAssert.Error("ERR syntax error", c.Call("COPY", "copyerr:k", "copyerr:x", "DB"));
        RespAssert.Error("ERR wrong number of arguments for 'copy' command", c.Call("COPY", "copyerr:k"));
        RespAssert.Integer(0, c.Call("EXISTS", "copyerr:x"));
    }

    [Fact]
    public void MoveToAnotherDatabaseKeepsTtl()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "move:k", "v", "EX", "200"));
        RespAssert.Integer(1, c.Call("MOVE", "move:k", "7"));
        RespAssert.Integer(0, c.Call("EXISTS", "move:k"));
        RespAssert.Integer(0, c.Call("MOVE", "move:k", "7"));
        RespAssert.Ok(c.Call("SELECT", "7"));
        RespAssert.Bulk("v", c.Call("GET", "move:k"));
        Assert.InRange(c.Call("TTL", "move:k").Integer, 195, 200);
        // The target already holds the key: nothing moves.
        RespAssert.Ok(c.Call("SELECT", "0"));
        RespAssert.Ok(c.Call("SET", "move:k", "other"));
        RespAssert.Integer(0, c.Call("MOVE", "move:k", "7"));
        RespAssert.Bulk("other", c.Call("GET", "move:k"));
        RespAssert.Ok(c.Call("SELECT", "7"));
        RespAssert.Bulk("v", c.Call("GET", "move:k"));
    }

    [Fact]
    public void MoveErrors()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "moveerr:k", "v"));
        RespAssert.Error("ERR source and destination objects are the same", c.Call("MOVE", "moveerr:k", "0"));
        RespAssert.Error("ERR DB index is out of range", c.Call("MOVE", "moveerr:k", "16"));
        RespAssert.Error("ERR DB index is out of range", c.Call("MOVE", "moveerr:k", "-1"));
        RespAssert.Error("ERR value is not an integer or out of range", c.Call("MOVE", "moveerr:k", "x"));
        RespAssert.Error("ERR value is not an integer or out of range", c.Call("MOVE", "moveerr:k", "99999999999"));
        RespAssert.Integer(0, c.Call("MOVE", "moveerr:missing", "3"));
        RespAssert.Error("ERR wrong number of arguments for 'move' command", c.Call("MOVE", "moveerr:k"));
    }

    [Fact]
    public void ObjectEncodingFollowsRedisRules()
    {
        using var c = shared.Connect();
        (string Value, string Encoding)[] cases =
        [
            ("12345", "int"), ("-123", "int"), ("0", "int"), ("9223372036854775807", "int"),
            ("12345678901234567890", "embstr"), ("01", "embstr"), ("hello", "embstr"), ("1.5", "embstr"),
            (new string('e', 44), "embstr"), (new string('r', 45), "raw"),
        ];
        for (int i = 0; i < cases.Length; i++)
        {
            RespAssert.Ok(c.Call("SET", $"objenc:{i}", cases[i].Value));
            RespAssert.Bulk(cases[i].Encoding, c.Call("OBJECT", "ENCODING", $"objenc:{i}"));
        }
        RespAssert.Null(c.Call("OBJECT", "ENCODING", "objenc:missing"));
    }

    /// <summary>
    /// A string's encoding also depends on its history, side by side with redis-server: changed in
    /// place (APPEND, SETRANGE, SETBIT, BITFIELD's writes, PFADD, PFCOUNT) or built raw (BITOP,
    /// PFMERGE, SETRANGE on a missing key) it is "raw" whatever its bytes; a new value (SET, INCR,
    /// INCRBYFLOAT, RESTORE) is encoded afresh; COPY and RENAME keep the encoding.
    /// </summary>
    [Fact]
    public void StringEncodingFollowsHowTheValueWasWritten()
    {
        string[] script =
        [
            "SET a 123", "APPEND a 4", "INCR a", "SET b abc", "SETRANGE b 1 x", "SETRANGE b2 0 abc", "SET b3 abc", "SETRANGE b3 0 ",
            "SET e abc", "APPEND e ", "APPEND new abc", "SETBIT c 1 1", "SET c2 abc", "SETBIT c2 0 0", "INCRBYFLOAT d 1.5",
            "PFADD h x", "PFMERGE h2 h", "BITOP OR o c", "SET bf abc", "BITFIELD bf GET u8 0", "SET bf2 abc", "BITFIELD bf2 INCRBY u2 0 0",
            "SET r 12", "APPEND r 3", "COPY r r2", "RENAME b bb", "SET r 99", "GETSET bb 1", "SET raw45 " + new string('x', 45), "APPEND i 7",
        ];
        var commands = new List<string[]>();
        foreach (string line in script)
        {
            string[] parts = line.Split(' ');
            commands.Add(parts);
            string key = parts[0] is "BITOP" ? parts[2] : parts[0] is "COPY" ? parts[2] : parts[0] is "RENAME" ? parts[2] : parts[1];
            commands.Add(["OBJECT", "ENCODING", key]);
        }
        SideBySideReplies.AssertSame(commands, client => RespAssert.Ok(client.Call("FLUSHALL")));
    }

    [Fact]
    public void ObjectRefcountIdletimeAndFreqUnderDefaultPolicy()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "objmisc:text", "hello"));
        RespAssert.Ok(c.Call("SET", "objmisc:shared", "42"));
        RespAssert.Integer(1, c.Call("OBJECT", "REFCOUNT", "objmisc:text"));
        // Redis shares the integers 0..9999 when no LRU/LFU policy is active.
        RespAssert.Integer(int.MaxValue, c.Call("OBJECT", "REFCOUNT", "objmisc:shared"));
        RespAssert.Integer(0, c.Call("OBJECT", "IDLETIME", "objmisc:text"));
        RespAssert.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
            c.Call("OBJECT", "FREQ", "objmisc:text"));
        RespAssert.Null(c.Call("OBJECT", "REFCOUNT", "objmisc:missing"));
        RespAssert.Null(c.Call("OBJECT", "IDLETIME", "objmisc:missing"));
    }

    [Fact]
    public void ObjectIdletimeGrowsWithoutAccess()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "objidle:k", "v"));
        Thread.Sleep(2100);
        Assert.InRange(c.Call("OBJECT", "IDLETIME", "objidle:k").Integer, 1, 3);
        // TTL and TYPE look without touching; GET touches.
        c.Call("TYPE", "objidle:k");
        Assert.True(c.Call("OBJECT", "IDLETIME", "objidle:k").Integer >= 1);
        RespAssert.Bulk("v", c.Call("GET", "objidle:k"));
        RespAssert.Integer(0, c.Call("OBJECT", "IDLETIME", "objidle:k"));
    }

    [Fact]
    public void ObjectFreqUnderLfuPolicy()
    {
        using var server = ServerProcess.Start("--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lfu");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "k", "v"));
        long initial = c.Call("OBJECT", "FREQ", "k").Integer;
        Assert.InRange(initial, 0, 255);
        for (int i = 0; i < 200; i++)
            c.Call("GET", "k");
        Assert.True(c.Call("OBJECT", "FREQ", "k").Integer > initial, "FREQ should grow with accesses");
        RespAssert.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
            c.Call("OBJECT", "IDLETIME", "k"));
        // With maxmemory set and an LFU policy Redis stops sharing integers.
        RespAssert.Ok(c.Call("SET", "n", "7"));
        RespAssert.Integer(1, c.Call("OBJECT", "REFCOUNT", "n"));
    }

    [Fact]
    public void ObjectHelpAndErrors()
    {
        using var c = shared.Connect();
        var help = c.Call("OBJECT", "HELP");
        Assert.Equal("OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", help.Array[0].Text);
        Assert.Contains(help.Array, line => line.Text == "ENCODING <key>");
        Assert.Equal("    Prints this help.", help.Array[^1].Text);
        RespAssert.Error("ERR unknown subcommand 'nosuch'. Try OBJECT HELP.", c.Call("OBJECT", "nosuch", "k"));
        RespAssert.Error("ERR wrong number of arguments for 'object' command", c.Call("OBJECT"));
        RespAssert.Error("ERR wrong number of arguments for 'object|encoding' command", c.Call("OBJECT", "ENCODING"));
    }

    [Fact]
    public void KeyCommandsWorkInInlineModeAcrossShards()
    {
        using var server = ServerProcess.Start("--execution-mode", "inline", "--shards", "4");
        using var c = server.Connect();
        for (int i = 0; i < 30; i++)
            RespAssert.Ok(c.Call("SET", $"a{i}", $"v{i}", "PX", "600000"));
        for (int i = 0; i < 30; i++)
            RespAssert.Ok(c.Call("RENAME", $"a{i}", $"b{i}"));
        for (int i = 0; i < 30; i++)
            RespAssert.Integer(1, c.Call("COPY", $"b{i}", $"c{i}"));
        RespAssert.Integer(60, c.Call("DBSIZE"));
        for (int i = 0; i < 30; i++)
        {
            RespAssert.Bulk($"v{i}", c.Call("GET", $"c{i}"));
            Assert.InRange(c.Call("PTTL", $"b{i}").Integer, 590_000, 600_000);
        }
        RespAssert.Integer(30, c.Call(["EXISTS", .. Enumerable.Range(0, 30).Select(i => $"b{i}")]));
    }
}
