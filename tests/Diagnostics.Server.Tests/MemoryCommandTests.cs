using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The MEMORY family over TCP: USAGE measures what a key really holds (checked against the growth
/// of used_memory), STATS has Redis's fields in Redis's order (checked against a real
/// redis-server) with values that agree with INFO, MALLOC-STATS reports the tracked allocator per
/// thread, PURGE and HELP answer, and every error is worded as Redis words it.
/// </summary>
public sealed class MemoryCommandTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void UsageIsWithinTenPercentOfTheMemoryEachKeyAddsToUsedMemory(bool withTtl)
    {
        // A server of its own: nothing else may allocate while the growth is measured.
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        const int keys = 20_000;
        string value = new('u', 100);
        // The connection's request arena grows to the pipeline's size once: let it, before measuring.
        Pipeline.RunAll(c, Enumerable.Range(0, 1000).Select(_ => new[] { "SET", "usage-warmup", value, "EX", "100000" }));
        RespAssert.Integer(1, c.Call("DEL", "usage-warmup"));
        long before = SteadyUsedMemory(c);
        var commands = Enumerable.Range(0, keys).Select(i => withTtl
            ? new[] { "SET", $"usage:{i}", value, "EX", "100000" }
            : new[] { "SET", $"usage:{i}", value });
        Pipeline.RunAll(c, commands);
        double perKey = (double)(SteadyUsedMemory(c) - before) / keys;

        long reported = 0;
        const int sampled = 2000;
        foreach (var reply in Pipeline.Run(c, Enumerable.Range(0, sampled).Select(i => new[] { "MEMORY", "USAGE", $"usage:{i * (keys / sampled)}" })))
            reported += reply.Integer;
        double usage = (double)reported / sampled;
        Assert.True(Math.Abs(usage - perKey) <= perKey * 0.10,
            $"MEMORY USAGE averages {usage:0.0} bytes, used_memory grew by {perKey:0.0} bytes per key");
        Assert.True(usage > 100 + "usage:0".Length, $"MEMORY USAGE of {usage:0.0} cannot hold a 100-byte value");
    }

    [Fact]
    public void UsageAnswersNullForAMissingKeyAndChecksItsOptionsAsRedis()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "usage-options", "value"));
        long plain = c.Call("MEMORY", "USAGE", "usage-options").Integer;
        Assert.True(plain > 0);
        RespAssert.Integer(plain, c.Call("MEMORY", "USAGE", "usage-options", "SAMPLES", "0"));
        RespAssert.Integer(plain, c.Call("MEMORY", "usage", "usage-options", "samples", "50"));
        RespAssert.Null(c.Call("MEMORY", "USAGE", "usage-missing"));
        RespAssert.Error("ERR syntax error", c.Call("MEMORY", "USAGE", "usage-options", "SAMPLES", "-1"));
        RespAssert.Error("ERR value is not an integer or out of range", c.Call("MEMORY", "USAGE", "usage-options", "SAMPLES", "many"));
        RespAssert.Error("ERR syntax error", c.Call("MEMORY", "USAGE", "usage-options", "SAMPLES"));
        RespAssert.Error("ERR syntax error", c.Call("MEMORY", "USAGE", "usage-options", "FAST"));
        RespAssert.Error("ERR wrong number of arguments for 'memory|usage' command", c.Call("MEMORY", "USAGE"));
        RespAssert.Error("ERR wrong number of arguments for 'memory' command", c.Call("MEMORY"));
        RespAssert.Error("ERR unknown subcommand 'NOTHING'. Try MEMORY HELP.", c.Call("MEMORY", "NOTHING"));
        RespAssert.Error("ERR wrong number of arguments for 'memory|stats' command", c.Call("MEMORY", "STATS", "extra"));
        // A longer value holds more.
        RespAssert.Ok(c.Call("SET", "usage-options", new string('x', 5000)));
        Assert.True(c.Call("MEMORY", "USAGE", "usage-options").Integer > plain + 4900);
    }

    [Fact]
    public void StatsHasTheFieldsOfRealRedisInItsOrder()
    {
        using var redis = RealRedisServer.Start();
        using var real = new RespClient(redis.Port);
        RespAssert.Ok(real.Call("SET", "stats-shape", "value"));
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "stats-shape", "value"));

        Assert.Equal(FieldNames(real.Call("MEMORY", "STATS")), FieldNames(c.Call("MEMORY", "STATS")));
    }

    [Fact]
    public void StatsValuesAgreeWithInfoAndTheKeyspace()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        Pipeline.RunAll(c, Enumerable.Range(0, 1000).Select(i => new[] { "SET", $"stats:{i}", new string('s', 200), "EX", "100000" }));
        RespAssert.Ok(c.Call("SELECT", "3"));
        Pipeline.RunAll(c, Enumerable.Range(0, 10).Select(i => new[] { "SET", $"stats:{i}", "v" }));

        var stats = c.Call("MEMORY", "STATS").ToMap();
        long used = UsedMemory(c);
        long total = stats["total.allocated"].Integer;
        Assert.True(Math.Abs(total - used) < 64 * 1024, $"total.allocated {total} against used_memory {used}");
        Assert.True(stats["peak.allocated"].Integer >= total);
        Assert.Equal(1010, stats["keys.count"].Integer);
        Assert.Equal(0, stats["replication.backlog"].Integer);
        Assert.True(stats["clients.normal"].Integer > 0, "the connection's request arena is client memory");

        var db0 = stats["db.0"].ToMap();
        Assert.True(db0["overhead.hashtable.main"].Integer >= 1000 * 40, "every entry's header is overhead");
        Assert.True(db0["overhead.hashtable.expires"].Integer >= 1000 * 8, "every key with a TTL has a slot in the expires vector");
        var db3 = stats["db.3"].ToMap();
        Assert.Equal(0, db3["overhead.hashtable.expires"].Integer);
        Assert.False(stats.ContainsKey("db.1"), "databases without keys are left out");

        long overhead = stats["overhead.total"].Integer;
        long dataset = stats["dataset.bytes"].Integer;
        Assert.True(dataset >= 1000 * 200, $"dataset.bytes {dataset} is less than the values written");
        Assert.True(overhead + dataset == total || dataset == 0, $"overhead.total {overhead} plus dataset.bytes {dataset} is not total.allocated {total}");
        Assert.InRange(double.Parse(stats["dataset.percentage"].Text!, System.Globalization.CultureInfo.InvariantCulture), 1, 100);
        Assert.InRange(double.Parse(stats["peak.percentage"].Text!, System.Globalization.CultureInfo.InvariantCulture), 1, 100);
        Assert.True(stats["allocator.allocated"].Integer >= total, "the C allocator has handed out at least what is tracked");
        Assert.True(stats["allocator.active"].Integer >= stats["allocator.allocated"].Integer);
        Assert.True(stats["fragmentation.bytes"].Integer > 0, "the process's RSS exceeds its tracked memory (the runtime lives there too)");

        var info = InfoFields.Read(c, "memory");
        Assert.True(Math.Abs(long.Parse(info["used_memory_overhead"]) - overhead) < 64 * 1024);
    }

    [Fact]
    public void StatsIsAMapWithDoublesUnderResp3()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "resp3-stats", "value"));
        c.Call("HELLO", "3");
        var reply = c.Call("MEMORY", "STATS");
        Assert.Equal('%', reply.Kind);
        var stats = reply.ToMap();
        Assert.Equal(',', stats["dataset.percentage"].Kind);
        Assert.Equal(',', stats["fragmentation"].Kind);
        Assert.Equal(':', stats["total.allocated"].Kind);
        Assert.Equal('%', stats["db.0"].Kind);
    }

    [Fact]
    public void MallocStatsReportsTheTrackedAllocatorPerThread()
    {
        using var c = shared.Connect();
        string report = c.Call("MEMORY", "MALLOC-STATS").Text!;
        Assert.StartsWith("___ Begin tracked allocator statistics ___", report);
        Assert.Contains("total.allocated: ", report);
        Assert.Contains("shard cron", report);
        Assert.Contains("live_bytes", report);
        Assert.EndsWith("___ End tracked allocator statistics ___\n", report);
        c.Call("HELLO", "3");
        Assert.Equal('=', c.Call("MEMORY", "MALLOC-STATS").Kind);
    }

    [Fact]
    public void PurgeGivesMemoryBackAndKeepsTheData()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "purge-kept", "value"));
        RespAssert.Ok(c.Call("MEMORY", "PURGE"));
        RespAssert.Bulk("value", c.Call("GET", "purge-kept"));
    }

    [Fact]
    public void HelpListsTheSubcommands()
    {
        using var c = shared.Connect();
        var lines = c.Call("MEMORY", "HELP").Array.Select(l => l.Text).ToArray();
        Assert.Equal("MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", lines[0]);
        Assert.Contains("USAGE <key> [SAMPLES <count>]", lines);
        Assert.Contains("MALLOC-STATS", lines);
        Assert.Contains("PURGE", lines);
        Assert.Contains("STATS", lines);
        Assert.Equal("    Prints this help.", lines[^1]);
    }

    [Fact]
    public void CommandInfoAndDocsDescribeTheFamily()
    {
        using var c = shared.Connect();
        var usage = c.Call("COMMAND", "INFO", "memory|usage").Array[0].Array;
        RespAssert.Bulk("memory|usage", usage[0]);
        RespAssert.Integer(-3, usage[1]);
        Assert.Equal(["readonly"], usage[2].Array.Select(f => f.Text!).ToArray());
        RespAssert.Integer(2, usage[3]);
        RespAssert.Integer(2, usage[4]);

        var docs = c.Call("COMMAND", "DOCS", "memory").ToMap()["memory"].ToMap();
        RespAssert.Bulk("server", docs["group"]);
        var subcommands = docs["subcommands"].ToMap();
        foreach (var name in new[] { "memory|help", "memory|malloc-stats", "memory|purge", "memory|stats", "memory|usage" })
            Assert.Contains(name, subcommands.Keys);
        var arguments = subcommands["memory|usage"].ToMap()["arguments"].Array.Select(a => a.ToMap()).ToArray();
        RespAssert.Bulk("key", arguments[0]["type"]);
        RespAssert.Bulk("SAMPLES", arguments[1]["token"]);
    }

    private static long UsedMemory(RespClient c) => InfoFields.GetInt64(c, "memory", "used_memory");

    /// <summary>used_memory once the cron has finished moving growing tables (both halves exist meanwhile).</summary>
    private static long SteadyUsedMemory(RespClient c)
    {
        long last = UsedMemory(c);
        for (int i = 0; i < 50; i++)
        {
            Thread.Sleep(200);
            long now = UsedMemory(c);
            if (now == last)
                return now;
            last = now;
        }
        return last;
    }

    /// <summary>The field names of a MEMORY STATS reply, nested maps included ("db.0.overhead.hashtable.main").</summary>
    private static string[] FieldNames(RespValue stats)
    {
        var names = new List<string>();
        var items = stats.Array;
        for (int i = 0; i + 1 < items.Count; i += 2)
        {
            string name = items[i].Text!;
            if (items[i + 1].Items is { } nested)
            {
                for (int j = 0; j + 1 < nested.Count; j += 2)
                    names.Add(name + "." + nested[j].Text);
            }
            else
            {
                names.Add(name);
            }
        }
        return [.. names];
    }
}
