using Diagnostics.Server.Tests.DataTypes;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Snapshots;

/// <summary>
/// RDB snapshots: SAVE and BGSAVE write Redis's format (redis-check-rdb passes, redis-server loads
/// the file and serves the same data), the file loads here at start and through DEBUG RELOAD, and
/// redis-server's own dump loads here. A BGSAVE taken while clients write is the keyspace as it was
/// at one moment: multi-key writes are whole in it, and it holds every write acknowledged before.
/// </summary>
public sealed class RdbSnapshotTests
{
    private static DatasetSnapshot WriteWorkload(RespClient c)
    {
        foreach (var command in DataTypePersistenceTests.Workload)
        {
            var reply = c.Call(command);
            Assert.False(reply.IsError, $"{string.Join(' ', command)} failed: {reply}");
        }
        // Big values take the plain encodings (hashtable, skiplist, several quicklist nodes).
        Pipeline.RunAll(c, Enumerable.Range(0, 700).SelectMany(i => new[]
        {
            new[] { "HSET", "big:h", "f" + i, "v" + i }, ["RPUSH", "big:l", "e" + i + new string('x', i % 40)], ["SADD", "big:s", "m" + i],
            ["SADD", "big:ints", i.ToString()], ["ZADD", "big:z", (i * 0.5).ToString(System.Globalization.CultureInfo.InvariantCulture), "m" + i],
        }));
        RespAssert.Ok(c.Call("SET", "str:long", string.Concat(Enumerable.Repeat("compressible ", 200))));
        RespAssert.Ok(c.Call("SET", "str:int", "-1234567890"));
        RespAssert.Ok(c.Call("SET", "ttl:str", "v", "PX", "3600000"));
        RespAssert.Bulk("snaplib", c.Call("FUNCTION", "LOAD", "#!lua name=snaplib\nredis.register_function('snapf', function() return 41 + 1 end)"));
        RespAssert.Ok(c.Call("SELECT", "5"));
        RespAssert.Ok(c.Call("SET", "db5:k", "v"));
        RespAssert.Ok(c.Call("SELECT", "0"));
        return DatasetSnapshot.Read(c);
    }

    [Fact]
    public void SaveWritesAnRdbThatRedisChecksLoadsAndServesAndThatLoadsHereAtStart()
    {
        using var dir = new TempDirectory();
        DatasetSnapshot written;
        long before = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        using (var server = ServerProcess.Start("--dir", dir.Path))
        using (var c = server.Connect())
        {
            written = WriteWorkload(c);
            Assert.True(InfoFields.GetInt64(c, "persistence", "rdb_changes_since_last_save") > 0);
            RespAssert.Ok(c.Call("SAVE"));
            Assert.True(c.Call("LASTSAVE").Integer >= before);
            var persistence = InfoFields.Read(c, "persistence");
            Assert.Equal("0", persistence["rdb_changes_since_last_save"]);
            Assert.Equal("1", persistence["rdb_saves"]);
            Assert.Equal(new FileInfo(Path.Combine(dir.Path, "dump.rdb")).Length.ToString(), persistence["rdb_last_save_bytes"]);
            // Written by a thread that counted it.
            Assert.Contains("snapshot_write", c.Call("INFO", "diskio").Text);
        }
        string dump = Path.Combine(dir.Path, "dump.rdb");
        Assert.True(File.Exists(dump), "SAVE wrote no dump.rdb");
        AssertRedisChecks(dump);

        using (var redis = RealRedisServer.StartIn(dir.Path, "--dbfilename", "dump.rdb"))
        using (var theirs = redis.Connect())
        {
            DatasetSnapshot.Read(theirs).AssertSameAs(written, "redis-server loading our dump.rdb");
            RespAssert.Integer(42, theirs.Call("FCALL", "snapf", "0"));
        }

        using (var server = ServerProcess.Start("--dir", dir.Path))
        using (var c = server.Connect())
        {
            DatasetSnapshot.Read(c).AssertSameAs(written, "our server loading its dump.rdb at start");
            Assert.Contains("DB loaded from disk", server.Output);
            Assert.Equal(written.Count.ToString(), InfoFields.Get(c, "persistence", "rdb_last_load_keys_loaded"));
            RespAssert.Integer(42, c.Call("FCALL", "snapf", "0"));
            RespAssert.Ok(c.Call("DEBUG", "RELOAD"));
            DatasetSnapshot.Read(c).AssertSameAs(written, "after DEBUG RELOAD");
            RespAssert.Integer(42, c.Call("FCALL", "snapf", "0"));
        }
    }

    [Fact]
    public void RedisServersDumpLoadsHere()
    {
        using var dir = new TempDirectory();
        DatasetSnapshot written;
        using (var redis = RealRedisServer.StartIn(dir.Path))
        using (var theirs = redis.Connect())
        {
            written = WriteWorkload(theirs);
            RespAssert.Ok(theirs.Call("SAVE"));
        }
        using var server = ServerProcess.Start("--dir", dir.Path);
        using var c = server.Connect();
        DatasetSnapshot.Read(c).AssertSameAs(written, "our server loading redis-server's dump.rdb");
        RespAssert.Integer(42, c.Call("FCALL", "snapf", "0"));
    }

    [Fact]
    public async Task BackgroundSaveIsTheKeyspaceAtItsCutWhileClientsWrite()
    {
        using var dir = new TempDirectory();
        using var server = ServerProcess.Start("--dir", dir.Path);
        using var c = server.Connect();
        // Enough data that serializing it takes a while, spread over every shard.
        Pipeline.RunAll(c, Enumerable.Range(0, 100_000).Select(i => new[] { "SET", "fill:" + i, new string('v', 64) }));

        // Writers: MSET of a pair whose keys live in different shards (atomic across them), and
        // INCR, whose acknowledged count before the BGSAVE is a floor for what the dump holds.
        using var stop = new CancellationTokenSource();
        var acknowledged = new long[3];
        var writers = Enumerable.Range(0, 3).Select(w => Task.Run(() =>
        {
            using var writer = server.Connect();
            for (long n = 1; !stop.IsCancellationRequested; n++)
            {
                RespAssert.Ok(writer.Call("MSET", $"pair:{w}:a", n.ToString(), $"pair:{w}:b", n.ToString()));
                RespAssert.Integer(n, writer.Call("INCR", $"counter:{w}"));
                Volatile.Write(ref acknowledged[w], n);
            }
        })).ToArray();
        Poll.Until(() => acknowledged.All(n => Volatile.Read(ref n) > 200), "every writer to get going");
        long[] floors = [.. acknowledged.Select(n => Volatile.Read(ref n))];
        Assert.Equal("Background saving started", c.Call("BGSAVE").Text);
        Poll.Until(() => InfoFields.Get(c, "persistence", "rdb_bgsave_in_progress") == "0", "the background save to finish", 60_000);
        stop.Cancel();
        await Task.WhenAll(writers);
        var persistence = InfoFields.Read(c, "persistence");
        Assert.Equal("ok", persistence["rdb_last_bgsave_status"]);
        Assert.Equal("1", persistence["rdb_saves"]);
        long[] ceilings = [.. Enumerable.Range(0, 3).Select(w => long.Parse(c.Call("GET", $"counter:{w}").Text!))];

        using var loaded = ServerProcess.Start("--dir", dir.Path);
        using var l = loaded.Connect();
        for (int w = 0; w < 3; w++)
        {
            string? a = l.Call("GET", $"pair:{w}:a").Text, b = l.Call("GET", $"pair:{w}:b").Text;
            Assert.NotNull(a);
            Assert.Equal(a, b); // never half an MSET
            // Every INCR acknowledged before BGSAVE is in; none after the writers stopped can be.
            Assert.InRange(long.Parse(l.Call("GET", $"counter:{w}").Text!), floors[w], ceilings[w]);
        }
        RespAssert.Integer(100_000 + 9, l.Call("DBSIZE"));
    }

    [Fact]
    public void TheScheduleSavesAfterEnoughChangesAndShutdownSavesUnlessNoSave()
    {
        using var dir = new TempDirectory();
        string dump = Path.Combine(dir.Path, "dump.rdb");
        using (var server = ServerProcess.Start("--dir", dir.Path, "--save", "1 3"))
        using (var c = server.Connect())
        {
            RespAssert.Ok(c.Call("SET", "a", "1"));
            Thread.Sleep(2500);
            Assert.False(File.Exists(dump), "one change saved although the schedule asks for 3");
            RespAssert.Ok(c.Call("SET", "b", "2"));
            RespAssert.Ok(c.Call("SET", "c", "3"));
            Poll.Until(() => File.Exists(dump), "the schedule to save after 3 changes", 10_000);
            Poll.Until(() => InfoFields.Get(c, "persistence", "rdb_changes_since_last_save") == "0", "the counter to reset");
            server.WaitForOutput("3 changes in 1 seconds. Saving...");
            RespAssert.Ok(c.Call("SET", "d", "4"));
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), "SHUTDOWN did not stop the server");
        }
        using (var server = ServerProcess.Start("--dir", dir.Path, "--save", ""))
        using (var c = server.Connect())
        {
            RespAssert.Integer(4, c.Call("DBSIZE")); // SHUTDOWN saved the last write
            RespAssert.Ok(c.Call("SET", "e", "5"));
            c.Send("SHUTDOWN", "NOSAVE");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        using (var server = ServerProcess.Start("--dir", dir.Path, "--save", ""))
        using (var c = server.Connect())
        {
            RespAssert.Integer(4, c.Call("DBSIZE")); // NOSAVE: e was not saved
            RespAssert.Ok(c.Call("SET", "f", "6"));
            c.Send("SHUTDOWN", "SAVE"); // saves although the schedule is off
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        using (var server = ServerProcess.Start("--dir", dir.Path, "--save", "3600 1"))
        using (var c = server.Connect())
        {
            RespAssert.Integer(5, c.Call("DBSIZE"));
            RespAssert.Ok(c.Call("SET", "g", "7"));
            Assert.True(server.Terminate(TimeSpan.FromSeconds(30)), "SIGTERM did not stop the server");
        }
        using (var server = ServerProcess.Start("--dir", dir.Path))
        using (var c = server.Connect())
            RespAssert.Integer(6, c.Call("DBSIZE")); // a signal saves when the schedule is on
    }

    /// <summary>A snapshot that cannot be written stops writes (and PING) with MISCONF until one succeeds, as in Redis.</summary>
    [Theory]
    [InlineData(ServerTarget.Ours)]
    [InlineData(ServerTarget.Redis)]
    public void AFailedBackgroundSaveStopsWritesUntilOneSucceeds(string target)
    {
        using var dir = new TempDirectory();
        var (server, connect) = ServerTarget.Start(target, "--save", "3600 1", "--dir", dir.Path);
        using (server)
        using (var c = connect())
        {
            // A folder (not empty) where the snapshot's file goes: renaming the written file over it fails.
            string blocker = Path.Combine(dir.Path, "dump.rdb");
            Directory.CreateDirectory(blocker);
            File.WriteAllText(Path.Combine(blocker, "in-the-way"), "x");
            RespAssert.Ok(c.Call("SET", "k", "v"));
            Assert.Equal("Background saving started", c.Call("BGSAVE").Text);
            Poll.Until(() => InfoFields.Get(c, "persistence", "rdb_last_bgsave_status") == "err", "the save to fail");
            RespAssert.Error("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.",
                c.Call("SET", "k", "w"));
            Assert.True(c.Call("PING").IsError);
            RespAssert.Bulk("v", c.Call("GET", "k"));
            Assert.Equal(["in-the-way"], Directory.GetFileSystemEntries(dir.Path, "*", SearchOption.AllDirectories).Select(Path.GetFileName).Where(n => n != "dump.rdb"));
            Directory.Delete(blocker, recursive: true);
            Assert.Equal("Background saving started", c.Call("BGSAVE").Text);
            Poll.Until(() => InfoFields.Get(c, "persistence", "rdb_last_bgsave_status") == "ok", "the save to succeed");
            RespAssert.Ok(c.Call("SET", "k", "w"));
        }
    }

    [Fact]
    public void SaveCommandsAndSettingsAnswerAsRedis()
    {
        SideBySideReplies.AssertSame(
        [
            ["BGSAVE", "foo"], ["BGSAVE", "SCHEDULE", "extra"], ["SAVE", "extra"], ["LASTSAVE", "extra"],
            ["CONFIG", "SET", "save", "1"], ["CONFIG", "SET", "save", "a 1"], ["CONFIG", "SET", "save", "10 -1"], ["CONFIG", "SET", "save", "0 5"],
            ["CONFIG", "SET", "save", "1.5 1"], ["CONFIG", "SET", "save", " 60  5 "], ["CONFIG", "SET", "save", "60 0"],
            ["CONFIG", "SET", "save", "01 +1 1 1"], ["CONFIG", "GET", "save"], ["CONFIG", "SET", "save", ""], ["CONFIG", "GET", "save"],
            ["CONFIG", "SET", "dbfilename", "a/b"], ["CONFIG", "GET", "dbfilename"],
            ["CONFIG", "SET", "rdbcompression", "maybe"], ["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"], ["CONFIG", "GET", "stop-writes-on-bgsave-error"],
            ["CONFIG", "GET", "aof-use-rdb-preamble"], ["CONFIG", "GET", "rdbchecksum"],
            ["MULTI"], ["SAVE"], ["EXEC"],
        ], c => RespAssert.Ok(c.Call("FLUSHALL")));
    }

    private static void AssertRedisChecks(string path)
    {
        var check = ExternalTool.Run("redis-check-rdb", "redis-tools", [path]);
        Assert.True(check.ExitCode == 0, $"redis-check-rdb failed ({check.ExitCode}):\n{check.StandardOutput}\n{check.StandardError}");
        Assert.Contains("RDB looks OK!", check.StandardOutput);
    }
}
