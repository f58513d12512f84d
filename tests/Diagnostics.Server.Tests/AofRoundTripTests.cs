using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Every command family of the core, written with appendonly yes, survives a restart (and DEBUG
/// RELOAD) unchanged: same keys, values and absolute expiry times, in every database.
/// </summary>
public sealed class AofRoundTripTests
{
    private static readonly string[][] Workload =
    [
        // strings
        ["SET", "s:plain", "hello"], ["SET", "s:binary", "a\0b\r\nc"], ["SET", "s:empty", ""],
        ["SET", "s:ex", "v", "EX", "1000"], ["SET", "s:px", "v", "PX", "900000"], ["SET", "s:exat", "v", "EXAT", "4102444800"],
        ["SET", "s:pxat", "v", "PXAT", "4102444800123"], ["SET", "s:keepttl", "old", "EX", "500"], ["SET", "s:keepttl", "new", "KEEPTTL"],
        ["SET", "s:nx", "first", "NX"], ["SET", "s:nx", "second", "NX"], ["SET", "s:xx", "never", "XX"], ["SET", "s:get", "a"], ["SET", "s:get", "b", "GET"],
        ["SETNX", "s:setnx", "1"], ["SETNX", "s:setnx", "2"], ["SETEX", "s:setex", "700", "v"], ["PSETEX", "s:psetex", "800000", "v"],
        ["GETSET", "s:getset", "x"], ["GETSET", "s:getset", "y"], ["SET", "s:getdel", "gone"], ["GETDEL", "s:getdel"],
        ["SET", "s:getex", "v"], ["GETEX", "s:getex", "EX", "600"], ["SET", "s:getex-persist", "v", "EX", "100"], ["GETEX", "s:getex-persist", "PERSIST"],
        ["MSET", "m:1", "one", "m:2", "two", "m:3", "three"], ["MSETNX", "m:4", "four", "m:5", "five"], ["MSETNX", "m:1", "x", "m:6", "six"],
        ["APPEND", "s:append", "abc"], ["APPEND", "s:append", "def"], ["SETRANGE", "s:range", "5", "tail"], ["SETRANGE", "s:append", "1", "ZZ"],
        ["INCR", "n:incr"], ["INCR", "n:incr"], ["DECR", "n:decr"], ["INCRBY", "n:by", "40"], ["DECRBY", "n:by", "2"],
        ["INCRBYFLOAT", "n:float", "10.5"], ["INCRBYFLOAT", "n:float", "0.1"], ["INCRBYFLOAT", "n:float", "-5.0e3"],
        // keys and expiry
        ["SET", "k:del", "x"], ["DEL", "k:del", "k:missing"], ["SET", "k:unlink", "x"], ["UNLINK", "k:unlink"],
        ["SET", "k:rename", "r"], ["RENAME", "k:rename", "k:renamed"], ["SET", "k:rnx", "a"], ["SET", "k:rnx-target", "b"], ["RENAMENX", "k:rnx", "k:rnx-target"],
        ["SET", "k:copy", "c", "EX", "900"], ["COPY", "k:copy", "k:copied"], ["COPY", "k:copy", "k:copy-db5", "DB", "5"],
        ["SET", "k:expire", "e"], ["EXPIRE", "k:expire", "300"], ["SET", "k:pexpire", "e"], ["PEXPIRE", "k:pexpire", "300000"],
        ["SET", "k:expireat", "e"], ["EXPIREAT", "k:expireat", "4102444800"], ["SET", "k:pexpireat", "e"], ["PEXPIREAT", "k:pexpireat", "4102444800999"],
        ["SET", "k:expire-nx", "e"], ["EXPIRE", "k:expire-nx", "100", "NX"], ["EXPIRE", "k:expire-nx", "999", "NX"], ["EXPIRE", "k:expire-nx", "50", "GT"],
        ["SET", "k:persist", "p", "EX", "100"], ["PERSIST", "k:persist"], ["SET", "k:past", "p"], ["EXPIREAT", "k:past", "1"],
        ["SET", "k:move", "m"], ["MOVE", "k:move", "3"],
        // databases
        ["SELECT", "1"], ["SET", "db1:a", "1"], ["SET", "db1:b", "2", "PX", "600000"],
        ["SELECT", "2"], ["SET", "db2:a", "to-swap"],
        ["SELECT", "7"], ["SET", "db7:gone", "x"], ["FLUSHDB"], ["SET", "db7:kept", "y"],
        ["SWAPDB", "2", "4"],
        ["SELECT", "0"],
    ];

    [Fact]
    public void EveryCoreCommandSurvivesRestartAndReload()
    {
        using var dir = new TempDirectory();
        DatasetSnapshot written;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            foreach (var command in Workload)
                Assert.False(c.Call(command).IsError, $"{string.Join(' ', command)} failed");
            written = DatasetSnapshot.Read(c);
            Assert.True(written.Count > 40, $"the workload left only {written.Count} keys");

            RespAssert.Ok(c.Call("DEBUG", "LOADAOF"));
            DatasetSnapshot.Read(c).AssertSameAs(written, "after DEBUG LOADAOF");
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), "SHUTDOWN did not stop the server");
        }

        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            DatasetSnapshot.Read(c).AssertSameAs(written, "after restart");
            Assert.Contains("DB loaded from append only file", server.Output);
        }
    }

    [Fact]
    public void RelativeExpiriesAreLoggedAsAbsoluteTimes()
    {
        using var dir = new TempDirectory();
        using var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path, "--appendfsync", "always");
        using var c = server.Connect();
        long before = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        RespAssert.Ok(c.Call("SET", "rel:set", "v", "EX", "100"));
        RespAssert.Ok(c.Call("SETEX", "rel:setex", "100", "v"));
        RespAssert.Integer(1, c.Call("EXPIRE", "rel:set", "200"));
        RespAssert.Bulk("v", c.Call("GETEX", "rel:setex", "PX", "300000"));
        RespAssert.Bulk("1.5", c.Call("INCRBYFLOAT", "rel:float", "1.5"));
        long after = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();

        string log = ReadIncrementalFiles(dir);
        Assert.DoesNotContain("\r\nEX\r\n", log);
        Assert.DoesNotContain("$5\r\nSETEX\r\n", log, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("\r\nEXPIRE\r\n", log);
        Assert.DoesNotContain("INCRBYFLOAT", log, StringComparison.OrdinalIgnoreCase);
        AssertDeadline(log, "SET", "rel:set", "PXAT", before + 100_000, after + 100_000);
        AssertDeadline(log, "SET", "rel:setex", "PXAT", before + 100_000, after + 100_000);
        Assert.Contains("PEXPIREAT\r\n$7\r\nrel:set\r\n", log);
        Assert.Contains("PEXPIREAT\r\n$9\r\nrel:setex\r\n", log);
        Assert.Contains("$3\r\nSET\r\n$9\r\nrel:float\r\n$3\r\n1.5\r\n$7\r\nKEEPTTL\r\n", log);
    }

    /// <summary>
    /// A key that expired between writes is not brought back by a replay: the INCR that followed
    /// its expiry created a fresh key then, and creates the same one on load.
    /// </summary>
    [Fact]
    public void ExpiredKeysStayExpiredAcrossRestart()
    {
        using var dir = new TempDirectory();
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Ok(c.Call("SET", "exp:counter", "100", "PX", "300"));
            RespAssert.Integer(101, c.Call("INCR", "exp:counter"));
            RespAssert.Ok(c.Call("SET", "exp:short", "v", "PX", "300"));
            RespAssert.Ok(c.Call("SET", "exp:long", "v", "EX", "3600"));
            RespAssert.Ok(c.Call("SET", "exp:reborn", "old", "PX", "300"));
            Thread.Sleep(600);
            RespAssert.Integer(1, c.Call("INCR", "exp:reborn")); // expired: INCR starts from 0
            RespAssert.Null(c.Call("GET", "exp:short"));
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Null(c.Call("GET", "exp:counter"));
            RespAssert.Null(c.Call("GET", "exp:short"));
            RespAssert.Bulk("v", c.Call("GET", "exp:long"));
            RespAssert.Bulk("1", c.Call("GET", "exp:reborn"));
            RespAssert.Integer(-1, c.Call("TTL", "exp:reborn"));
        }
    }

    [Fact]
    public void SigtermFlushesEverysecWritesBeforeExit()
    {
        using var dir = new TempDirectory();
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path, "--appendfsync", "everysec"))
        using (var c = server.Connect())
        {
            for (int i = 0; i < 200; i++)
                RespAssert.Ok(c.Call("SET", $"term:{i}", $"value {i}"));
            Assert.True(server.Terminate(TimeSpan.FromSeconds(30)), "SIGTERM did not stop the server");
            Assert.Equal(0, server.ExitCode);
            Assert.Contains("Calling fsync() on the AOF file.", server.Output);
        }
        AofRestart.AssertLoads(dir.Path, 200, ("term:199", "value 199"));
    }

    [Fact]
    public void ShutdownSaveWritesTheSnapshotAndNosaveDoesNot()
    {
        using var dir = new TempDirectory();
        string dump = Path.Combine(dir.Path, "dump.rdb");
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Ok(c.Call("SET", "shut:a", "1"));
            c.Send("SHUTDOWN", "NOSAVE");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        Assert.False(File.Exists(dump), "SHUTDOWN NOSAVE wrote a snapshot");
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Bulk("1", c.Call("GET", "shut:a"));
            RespAssert.Ok(c.Call("SET", "shut:b", "2"));
            c.Send("SHUTDOWN", "SAVE");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(60)));
        }
        // As Redis: SAVE writes the RDB snapshot whether or not the AOF is on; the AOF itself is
        // made durable either way and stays as it was.
        Assert.True(File.Exists(dump), "SHUTDOWN SAVE wrote no snapshot");
        Assert.Contains("appendonly.aof.1.base.aof", File.ReadAllText(Path.Combine(dir.AppendDirectory, "appendonly.aof.manifest")));
        using (var server = ServerProcess.Start("--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Bulk("1", c.Call("GET", "shut:a"));
            RespAssert.Bulk("2", c.Call("GET", "shut:b"));
        }
    }

    [Fact]
    public void TurningTheAofOnAtRunTimeWritesTheExistingDataFirst()
    {
        using var dir = new TempDirectory();
        using (var server = ServerProcess.Start("--dir", dir.Path))
        using (var c = server.Connect())
        {
            for (int i = 0; i < 500; i++)
                RespAssert.Ok(c.Call("SET", $"runtime:{i}", $"v{i}", "EX", "3600"));
            RespAssert.Ok(c.Call("CONFIG", "SET", "appendonly", "yes"));
            RespAssert.Ok(c.Call("SET", "runtime:after", "x"));
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0", "the initial rewrite to finish");
            Assert.Equal("1", InfoFields.Get(c, "persistence", "aof_enabled"));
            RespAssert.Ok(c.Call("CONFIG", "SET", "appendonly", "no"));
            Assert.Equal("0", InfoFields.Get(c, "persistence", "aof_enabled"));
            RespAssert.Ok(c.Call("SET", "runtime:unlogged", "x"));
        }
        AofRestart.AssertLoads(dir.Path, 501, ("runtime:499", "v499"), ("runtime:after", "x"), ("runtime:unlogged", null));
    }

    /// <summary>appendfsync switched back and forth under load: no write is lost or doubled, no client hangs.</summary>
    [Fact]
    public void FsyncPolicyChangesUnderLoadLoseNothing()
    {
        using var dir = new TempDirectory();
        const int Writers = 3;
        var acknowledged = new long[Writers];
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var admin = server.Connect())
        {
            using var stop = new ManualResetEventSlim();
            var threads = Enumerable.Range(0, Writers).Select(w => new Thread(() =>
            {
                using var c = server.Connect();
                while (!stop.IsSet)
                    acknowledged[w] = c.Call("INCR", $"policy:{w}").Integer;
            }) { IsBackground = true }).ToArray();
            foreach (var t in threads)
                t.Start();
            string[] policies = ["always", "everysec", "no", "always", "no", "everysec"];
            for (int i = 0; i < 30; i++)
            {
                RespAssert.Ok(admin.Call("CONFIG", "SET", "appendfsync", policies[i % policies.Length]));
                Thread.Sleep(40);
            }
            stop.Set();
            foreach (var t in threads)
                Assert.True(t.Join(TimeSpan.FromSeconds(10)), "a writer hung across a policy change");
            for (int w = 0; w < Writers; w++)
                RespAssert.Bulk(acknowledged[w].ToString(), admin.Call("GET", $"policy:{w}"));
            Assert.All(acknowledged, n => Assert.True(n > 10, "a writer made no progress"));
            admin.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            for (int w = 0; w < Writers; w++)
                RespAssert.Bulk(acknowledged[w].ToString(), c.Call("GET", $"policy:{w}"));
        }
    }

    private static string ReadIncrementalFiles(TempDirectory dir)
    {
        var text = new System.Text.StringBuilder();
        foreach (var file in Directory.GetFiles(dir.AppendDirectory, "*.incr.aof").Order())
        {
            using var stream = new FileStream(file, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            using var reader = new StreamReader(stream);
            text.Append(reader.ReadToEnd());
        }
        return text.ToString();
    }

    private static void AssertDeadline(string log, string command, string key, string token, long min, long max)
    {
        string prefix = $"${command.Length}\r\n{command}\r\n${key.Length}\r\n{key}\r\n";
        int at = log.IndexOf(prefix, StringComparison.Ordinal);
        Assert.True(at >= 0, $"no {command} {key} in the AOF:\n{log}");
        int tokenAt = log.IndexOf($"\r\n{token}\r\n", at, StringComparison.Ordinal);
        Assert.True(tokenAt >= 0, $"{command} {key} was not logged with {token}");
        var lines = log[(tokenAt + token.Length + 4)..].Split("\r\n");
        long deadline = long.Parse(lines[1]);
        Assert.InRange(deadline, min, max);
    }
}
