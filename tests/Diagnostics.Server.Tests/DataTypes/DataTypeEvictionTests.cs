using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// maxmemory with hashes, lists, sets and sorted sets: eviction counts their whole structures
/// (not just the key's entry), so memory stays at the limit, every key written is either there
/// or counted as evicted, and what is left reads back whole.
/// </summary>
public sealed class DataTypeEvictionTests
{
    private const long Limit = 4 * 1024 * 1024;
    private const long Slack = 64 * 1024;

    [Theory]
    [InlineData("allkeys-lru")]
    [InlineData("allkeys-random")]
    public void AggregatesAreEvictedWholeAndMemoryStaysAtTheLimit(string policy)
    {
        using var server = ServerProcess.Start("--maxmemory", Limit.ToString(), "--maxmemory-policy", policy);
        using var c = server.Connect();
        string[] types = ["hash", "list", "set", "zset"];
        const int keys = 4000;
        long highest = 0;
        for (int from = 0; from < keys; from += 200)
        {
            var commands = new List<string[]>();
            for (int k = from; k < from + 200; k++)
            {
                string key = $"agg:{k}";
                for (int i = 0; i < 10; i++)
                {
                    string element = $"element-{i}-" + new string('x', 80);
                    commands.Add(types[k % 4] switch
                    {
                        "hash" => ["HSET", key, element, "value"],
                        "list" => ["RPUSH", key, element],
                        "set" => ["SADD", key, element],
                        _ => ["ZADD", key, i.ToString(), element],
                    });
                }
            }
            Pipeline.RunAll(c, commands);
            highest = Math.Max(highest, InfoFields.GetInt64(c, "memory", "used_memory"));
        }

        Assert.True(highest <= Limit + Slack, $"used_memory reached {highest} bytes with maxmemory {Limit} ({policy})");
        long evicted = InfoFields.GetInt64(c, "stats", "evicted_keys");
        Assert.True(evicted > 0, $"nothing was evicted ({policy})");
        // A key evicted while still being filled is created again by its next element, so keys
        // left plus evictions can exceed the keys written, never fall short of them.
        Poll.Until(() => c.Call("DBSIZE").Integer + InfoFields.GetInt64(c, "stats", "evicted_keys") >= keys, "every key written to be present or evicted");
        var survivor = c.Call("SCAN", "0", "COUNT", "1000").Array[1].Array[0].Text!;
        string type = c.Call("TYPE", survivor).Text!;
        Assert.Contains(type, new[] { "hash", "list", "set", "zset" });
    }
}
