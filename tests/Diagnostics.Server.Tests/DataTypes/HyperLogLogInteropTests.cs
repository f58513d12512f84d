using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// HyperLogLogs move between this server and redis-server 7.0.15 through the files: what this
/// server's AOF holds (PFADD, PFMERGE, PFCOUNT's cache writes and PFDEBUG's conversions, as
/// commands and, after a rewrite, as the values themselves) loads into redis-server with the same
/// bytes and counts; what redis-server writes (its AOF, or an RDB base file with
/// aof-use-rdb-preamble) loads here with the same bytes, counts the same, and goes on taking
/// PFADDs as redis-server would.
/// </summary>
public sealed class HyperLogLogInteropTests
{
    private static readonly string[] Keys = ["hll:empty", "hll:few", "hll:sparse", "hll:dense", "hll:merged", "hll:todense", "hll:uncounted", "hll:ttl"];

    /// <summary>Every shape: empty, a few registers, sparse near promotion, dense, merged, converted; counted (cache written) or not.</summary>
    private static void Workload(RespClient c, string prefix, int round)
    {
        Assert.Equal(':', c.Call("PFADD", "hll:empty").Kind);
        Assert.False(c.Call("PFADD", "hll:few", $"{prefix}a{round}", $"{prefix}b{round}", $"{prefix}c{round}").IsError);
        Add(c, "hll:sparse", $"{prefix}s{round}-", 400);
        Add(c, "hll:dense", $"{prefix}d{round}-", 5000);
        RespAssert.Ok(c.Call("PFMERGE", "hll:merged", "hll:few", "hll:sparse", "hll:dense"));
        Add(c, "hll:todense", $"{prefix}t{round}-", 30);
        Assert.False(c.Call("PFDEBUG", "TODENSE", "hll:todense").IsError);
        Add(c, "hll:uncounted", $"{prefix}u{round}-", 100);
        Add(c, "hll:ttl", $"{prefix}x{round}-", 10);
        Assert.False(c.Call("PEXPIREAT", "hll:ttl", "4102444800000").IsError);
        foreach (string key in (string[])["hll:empty", "hll:few", "hll:sparse", "hll:dense", "hll:merged", "hll:todense", "hll:ttl"])
            Assert.Equal(':', c.Call("PFCOUNT", key).Kind);
    }

    private static void Add(RespClient c, string key, string prefix, int count)
    {
        string[] command = ["PFADD", key, .. Enumerable.Range(0, count).Select(i => prefix + i)];
        Assert.Equal(':', c.Call(command).Kind);
    }

    /// <summary>
    /// Each key's count, then its raw bytes (hex) and deadline. The counts come first: PFCOUNT
    /// writes the cache of "hll:uncounted", and that write must reach the files as well.
    /// </summary>
    private static Dictionary<string, string> Read(RespClient c)
    {
        var values = new Dictionary<string, string>();
        foreach (string key in Keys)
            values[key + " count"] = c.Call("PFCOUNT", key).ToString();
        values["union"] = c.Call(["PFCOUNT", .. Keys]).ToString();
        foreach (string key in Keys)
            values[key] = Convert.ToHexString(c.CallForBytes("GET", key)) + " expires " + c.Call("PEXPIRETIME", key).Integer;
        return values;
    }

    private static void AssertSame(Dictionary<string, string> expected, Dictionary<string, string> actual, string context)
    {
        foreach (var (key, value) in expected)
            Assert.True(actual[key] == value, $"{context}: {key} differs\n  expected {value[..Math.Min(200, value.Length)]}\n  actual   {actual[key][..Math.Min(200, actual[key].Length)]}");
    }

    [Fact]
    public void WrittenHereLoadsIntoRedisServerWithTheSameBytesAndCounts()
    {
        using var dir = new TempDirectory();
        Dictionary<string, string> expected;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            Workload(c, "ours", 0);
            // The rewrite writes the values themselves; what follows is logged as commands.
            Assert.StartsWith("Background append only file rewriting started", c.Call("BGREWRITEAOF").Text);
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0", "the rewrite to finish");
            Workload(c, "ours", 1);
            expected = Read(c);
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        // PFCOUNT's cache writes were logged: the bytes are back as they were, cache included.
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
            AssertSame(expected, Read(c), "this server after a restart");

        var check = ExternalTool.Run("redis-check-aof", "redis-tools", [Path.Combine(dir.AppendDirectory, "appendonly.aof.manifest")]);
        Assert.True(check.ExitCode == 0, $"redis-check-aof failed:\n{check.StandardOutput}{check.StandardError}");
        using var copy = new TempDirectory();
        Directory.CreateDirectory(copy.AppendDirectory);
        foreach (var file in Directory.GetFiles(dir.AppendDirectory))
            File.Copy(file, Path.Combine(copy.AppendDirectory, Path.GetFileName(file)));
        using var redis = RealRedisServer.StartIn(copy.Path, "--appendonly", "yes");
        using var rc = redis.Connect();
        AssertSame(expected, Read(rc), "redis-server loading our files");
    }

    [Theory]
    [InlineData("no")]
    [InlineData("yes")]
    public void WrittenByRedisServerLoadsHereWithTheSameBytesAndCounts(string rdbPreamble)
    {
        using var dir = new TempDirectory();
        Dictionary<string, string> expected;
        Dictionary<string, string> afterMoreAdds;
        using (var redis = RealRedisServer.Start("--appendonly", "yes", "--aof-use-rdb-preamble", rdbPreamble, "--appendfsync", "always"))
        using (var c = redis.Connect())
        {
            Workload(c, "redis", 0);
            Assert.StartsWith("Background append only file rewriting started", c.Call("BGREWRITEAOF").Text);
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0"
                && InfoFields.Get(c, "persistence", "aof_rewrite_scheduled") == "0", "redis-server's rewrite to finish");
            Workload(c, "redis", 1);
            expected = Read(c);
            Directory.CreateDirectory(dir.AppendDirectory);
            foreach (var file in Directory.GetFiles(Path.Combine(redis.Directory, "appendonlydir")))
                File.Copy(file, Path.Combine(dir.AppendDirectory, Path.GetFileName(file)));
            // What the same PFADDs and PFMERGE do next, to compare with this server's.
            Workload(c, "next", 2);
            afterMoreAdds = Read(c);
        }
        string baseSuffix = rdbPreamble == "yes" ? ".base.rdb" : ".base.aof";
        Assert.Single(Directory.GetFiles(dir.AppendDirectory, "*" + baseSuffix));

        using var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path);
        using var ours = server.Connect();
        AssertSame(expected, Read(ours), $"loading redis-server's files (aof-use-rdb-preamble {rdbPreamble})");
        Workload(ours, "next", 2);
        AssertSame(afterMoreAdds, Read(ours), "the same writes after loading");
    }
}
