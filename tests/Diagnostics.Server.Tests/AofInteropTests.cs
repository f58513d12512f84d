using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The files are Redis's own format both ways: what this server writes passes Debian's
/// redis-check-aof and loads into Debian's redis-server 7 with the same data; what redis-server 7
/// writes (RESP or RDB base, incremental files, the legacy single file) loads here.
/// </summary>
public sealed class AofInteropTests
{
    /// <summary>Strings in several databases, with and without deadlines, overwritten, deleted and renamed.</summary>
    private static void WriteWorkload(RespClient c)
    {
        for (int db = 0; db < 3; db++)
        {
            RespAssert.Ok(c.Call("SELECT", db.ToString()));
            for (int i = 0; i < 300; i++)
                Assert.False(c.Call("SET", $"interop:{db}:{i}", new string((char)('a' + i % 26), i % 97) + i).IsError);
            for (int i = 0; i < 300; i += 7)
                RespAssert.Integer(1, c.Call("PEXPIREAT", $"interop:{db}:{i}", (4102444800000L + i).ToString()));
            for (int i = 0; i < 300; i += 11)
                RespAssert.Integer(1, c.Call("DEL", $"interop:{db}:{i}"));
            RespAssert.Ok(c.Call("SET", $"interop:{db}:counter", "10"));
            RespAssert.Integer(15, c.Call("INCRBY", $"interop:{db}:counter", "5"));
            RespAssert.Ok(c.Call("RENAME", $"interop:{db}:1", $"interop:{db}:renamed"));
            RespAssert.Ok(c.Call("SET", $"interop:{db}:binary", "\u0001\r\n\u0000end", "EX", "86400"));
            WriteCollections(c, $"interop:{db}:");
        }
        RespAssert.Ok(c.Call("SELECT", "0"));
    }

    /// <summary>
    /// Every type, small and big: in redis-server's RDB these take each encoding Redis 7.0 writes
    /// (listpack, quicklist with a plain node, intset, hashtable, skiplist).
    /// </summary>
    private static void WriteCollections(RespClient c, string prefix)
    {
        RespAssert.Integer(4, c.Call("RPUSH", prefix + "list", "a", "", "-5", "123456789012"));
        for (int i = 0; i < 300; i++)
            c.Call("RPUSH", prefix + "biglist", "element" + i);
        RespAssert.Integer(301, c.Call("LPUSH", prefix + "biglist", new string('p', 9000)));
        RespAssert.Integer(4, c.Call("SADD", prefix + "ints", "1", "-3", "70000", "5000000000"));
        for (int i = 0; i < 200; i++)
            c.Call("SADD", prefix + "members", "m" + i);
        RespAssert.Integer(3, c.Call("HSET", prefix + "hash", "f", "v", "n", "12", "empty", ""));
        for (int i = 0; i < 600; i++)   // over hash-max-listpack-entries (512 in Debian's build)
            c.Call("HSET", prefix + "bighash", "field" + i, "value" + i);
        RespAssert.Integer(4, c.Call("ZADD", prefix + "zset", "1.5", "a", "-inf", "b", "+inf", "c", "-0.25", "d"));
        for (int i = 0; i < 200; i++)
            c.Call("ZADD", prefix + "bigzset", (i * 0.5).ToString(System.Globalization.CultureInfo.InvariantCulture), "z" + i);
        RespAssert.Integer(1, c.Call("PEXPIREAT", prefix + "hash", "4102444800000"));
        RespAssert.Integer(1, c.Call("PEXPIREAT", prefix + "bigzset", "4102444900000"));
        WriteStreams(c, prefix);
    }

    /// <summary>
    /// Streams over several nodes (entries with the node's fields and with their own, numbers
    /// stored as integers), deletions, a consumer group with delivered, acknowledged and claimed
    /// entries and an idle consumer, and an emptied stream with counters of its own.
    /// </summary>
    private static void WriteStreams(RespClient c, string prefix)
    {
        string stream = prefix + "stream";
        for (int i = 1; i <= 250; i++)
            Assert.False(i % 7 == 0
                ? c.Call("XADD", stream, $"{i}-{i % 3}", "other", "x" + i).IsError
                : c.Call("XADD", stream, $"{i}-{i % 3}", "n", i.ToString(), "text", new string('s', i % 40)).IsError);
        RespAssert.Integer(2, c.Call("XDEL", stream, "5-2", "120-0"));
        // Pending entries past what the trim below removes: an AOF (Redis's own included) recreates
        // pending entries with XCLAIM, which skips entries no longer in the stream.
        RespAssert.Ok(c.Call("XGROUP", "CREATE", stream, "workers", "20-0"));
        Assert.False(c.Call("XREADGROUP", "GROUP", "workers", "alice", "COUNT", "10", "STREAMS", stream, ">").IsError);
        RespAssert.Integer(2, c.Call("XACK", stream, "workers", "21-0", "22-1"));
        Assert.False(c.Call("XCLAIM", stream, "workers", "bob", "0", "23-2", "24-0").IsError);
        RespAssert.Integer(1, c.Call("XGROUP", "CREATECONSUMER", stream, "workers", "idle"));
        RespAssert.Ok(c.Call("XGROUP", "CREATE", stream, "late", "$"));
        Assert.False(c.Call("XTRIM", stream, "MAXLEN", "240").IsError);
        string empty = prefix + "emptystream";
        Assert.False(c.Call("XADD", empty, "9-9", "f", "v").IsError);
        RespAssert.Integer(1, c.Call("XDEL", empty, "9-9"));
        RespAssert.Ok(c.Call("XGROUP", "CREATE", prefix + "mkstream", "g", "$", "MKSTREAM"));
    }

    [Fact]
    public void FilesWrittenHerePassRedisCheckAofAndLoadIntoRedisServer()
    {
        using var dir = new TempDirectory();
        DatasetSnapshot expected;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            WriteWorkload(c);
            Assert.StartsWith("Background append only file rewriting started", c.Call("BGREWRITEAOF").Text);
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0", "the rewrite to finish");
            RespAssert.Ok(c.Call("SET", "interop:after-rewrite", "in the new incr file"));
            RespAssert.Integer(1, c.Call("DEL", "interop:0:2"));
            expected = DatasetSnapshot.Read(c);
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }

        var check = ExternalTool.Run("redis-check-aof", "redis-tools", [Path.Combine(dir.AppendDirectory, "appendonly.aof.manifest")]);
        Assert.True(check.ExitCode == 0, $"redis-check-aof failed:\n{check.StandardOutput}{check.StandardError}");
        Assert.Contains("All AOF files and manifest are valid", check.StandardOutput);

        using var copy = new TempDirectory();
        CopyDirectory(dir.AppendDirectory, copy.AppendDirectory);
        using var loaded = RealRedisServer.StartIn(copy.Path, "--appendonly", "yes");
        using var rc = loaded.Connect();
        DatasetSnapshot.Read(rc).AssertSameAs(expected, "redis-server loading our files");
    }

    [Theory]
    [InlineData("no")]
    [InlineData("yes")]
    public void FilesWrittenByRedisServerLoadHere(string rdbPreamble)
    {
        DatasetSnapshot expected;
        using var dir = new TempDirectory();
        using (var redis = RealRedisServer.Start("--appendonly", "yes", "--aof-use-rdb-preamble", rdbPreamble))
        using (var c = redis.Connect())
        {
            WriteWorkload(c);
            // The rewrite makes a base file (RDB with the preamble on); what follows goes to an incr file.
            Assert.StartsWith("Background append only file rewriting started", c.Call("BGREWRITEAOF").Text);
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0"
                && InfoFields.Get(c, "persistence", "aof_rewrite_scheduled") == "0", "redis-server's rewrite to finish");
            RespAssert.Ok(c.Call("SET", "interop:after-rewrite", "x", "PX", "86400000"));
            RespAssert.Integer(16, c.Call("INCR", "interop:0:counter"));
            expected = DatasetSnapshot.Read(c);
            RespAssert.Ok(c.Call("CONFIG", "SET", "appendfsync", "always"));
            RespAssert.Ok(c.Call("SET", "interop:synced", "y"));
            expected = DatasetSnapshot.Read(c);
            CopyDirectory(Path.Combine(redis.Directory, "appendonlydir"), dir.AppendDirectory);
        }
        string baseSuffix = rdbPreamble == "yes" ? ".base.rdb" : ".base.aof";
        Assert.Single(Directory.GetFiles(dir.AppendDirectory, "*" + baseSuffix));

        using var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path);
        using var ours = server.Connect();
        DatasetSnapshot.Read(ours).AssertSameAs(expected, $"loading redis-server's files (aof-use-rdb-preamble {rdbPreamble})");
        // Appends go on in redis-server's incr file, and the set stays loadable by both.
        RespAssert.Ok(ours.Call("SET", "interop:ours", "z"));
        ours.Send("SHUTDOWN");
        Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        var check = ExternalTool.Run("redis-check-aof", "redis-tools", [Path.Combine(dir.AppendDirectory, "appendonly.aof.manifest")]);
        Assert.True(check.ExitCode == 0, $"redis-check-aof failed:\n{check.StandardOutput}{check.StandardError}");
    }

    /// <summary>A Redis 6 style appendonly.aof in dir is moved into the append directory as the base, as Redis 7 upgrades it.</summary>
    [Fact]
    public void LegacySingleFileIsUpgradedToTheMultiPartLayout()
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("appendonly.aof"), RespClient.EncodeAll(
            ["SELECT", "0"], ["SET", "legacy:a", "1"], ["SET", "legacy:b", "2"], ["PEXPIREAT", "legacy:b", "4102444800000"],
            ["SELECT", "2"], ["SET", "legacy:c", "3"], ["INCR", "legacy:c"]));
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Bulk("1", c.Call("GET", "legacy:a"));
            RespAssert.Integer(4102444800000, c.Call("PEXPIRETIME", "legacy:b"));
            RespAssert.Ok(c.Call("SELECT", "2"));
            RespAssert.Bulk("4", c.Call("GET", "legacy:c"));
            RespAssert.Ok(c.Call("SET", "legacy:d", "new"));
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        Assert.False(File.Exists(dir.File("appendonly.aof")), "the legacy file should have moved into the append directory");
        string manifest = File.ReadAllText(Path.Combine(dir.AppendDirectory, "appendonly.aof.manifest"));
        Assert.Contains("file appendonly.aof seq 1 type b", manifest);
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Bulk("2", c.Call("GET", "legacy:b"));
            RespAssert.Ok(c.Call("SELECT", "2"));
            RespAssert.Bulk("new", c.Call("GET", "legacy:d"));
        }
    }

    private static void CopyDirectory(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (var file in Directory.GetFiles(from))
            File.Copy(file, Path.Combine(to, Path.GetFileName(file)), overwrite: true);
    }
}
