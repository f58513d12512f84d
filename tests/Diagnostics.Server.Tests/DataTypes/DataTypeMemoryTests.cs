using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Memory of hashes, lists, sets, sorted sets and streams as the server accounts it: MEMORY USAGE of a key
/// against the growth of used_memory (the tracked allocator's total, so the bytes really held)
/// when the key was built, the total back at its baseline once the key is gone, and the
/// per-thread rows still adding up to the total after several clients built values.
/// </summary>
public sealed class DataTypeMemoryTests
{
    private const int Elements = 20_000;

    public static IEnumerable<object[]> Types => [["hash"], ["list"], ["set"], ["zset"], ["stream"]];

    private static IEnumerable<string[]> Build(string key, string type, int from, int to, int step = 1)
    {
        for (int i = from; i < to; i += step)
        {
            string member = "member:" + i.ToString(CultureInfo.InvariantCulture);
            yield return type switch
            {
                "hash" => ["HSET", key, member, "value-" + i],
                "set" => ["SADD", key, member],
                "zset" => ["ZADD", key, (i * 0.5).ToString(CultureInfo.InvariantCulture), member],
                // Entries with the node's fields (values only stored) and, every 7th, fields of their own.
                "stream" => i % 7 == 0 ? ["XADD", key, $"{i + 1}-0", "other", member] : ["XADD", key, $"{i + 1}-0", "field", member, "n", i.ToString(CultureInfo.InvariantCulture)],
                // Short and long elements, some reading as integers (kept as integers in the list's listpack nodes).
                _ => ["RPUSH", key, i % 2 == 0 ? "v" + (i % 100) : member],
            };
        }
    }

    [Theory]
    [MemberData(nameof(Types))]
    public void MemoryUsageIsWithinTenPercentOfTheBytesHeld(string type)
    {
        using var server = ServerProcess.Start();
        using var observer = server.Connect();
        long baseline = UsedMemory(observer);
        // Built from a connection that is closed before measuring, so its request buffers are
        // not counted with the value.
        using (var loader = server.Connect())
            Pipeline.RunAll(loader, Build("mem:" + type, type, 0, Elements));
        Poll.Until(() => observer.Call("CLIENT", "LIST").Text!.Split('\n', StringSplitOptions.RemoveEmptyEntries).Length == 1, "the loader to disconnect");
        long held = UsedMemory(observer) - baseline;
        long usage = observer.Call("MEMORY", "USAGE", "mem:" + type).Integer;
        // A list's listpack nodes hold these elements in about 9 bytes each; the other types take more.
        Assert.True(held > Elements * (type == "list" ? 4L : 16L), $"{type}: building {Elements} elements grew used_memory by only {held} bytes");
        Assert.True(Math.Abs(usage - held) <= held / 10,
            $"{type}: MEMORY USAGE says {usage} bytes, used_memory grew by {held} ({(usage - held) * 100.0 / held:F1}% apart)");

        RespAssert.Integer(1, observer.Call("DEL", "mem:" + type));
        Poll.Until(() => UsedMemory(observer) - baseline < 16 * 1024,
            () => $"{type}: used_memory back within 16 KB of its baseline {baseline} after DEL (now {UsedMemory(observer)})");
    }

    [Theory]
    [MemberData(nameof(Types))]
    public void RemovingElementsGivesTheirMemoryBack(string type)
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        Pipeline.RunAll(c, Build("shrink:" + type, type, 0, Elements));
        long full = c.Call("MEMORY", "USAGE", "shrink:" + type).Integer;
        string[] removeAllButTen = type switch
        {
            "hash" => ["HDEL", "shrink:" + type, .. Enumerable.Range(10, Elements - 10).Select(i => "member:" + i)],
            "set" => ["SREM", "shrink:" + type, .. Enumerable.Range(10, Elements - 10).Select(i => "member:" + i)],
            "zset" => ["ZREMRANGEBYRANK", "shrink:" + type, "10", "-1"],
            "stream" => ["XTRIM", "shrink:" + type, "MAXLEN", "10"],
            _ => ["LTRIM", "shrink:" + type, "0", "9"],
        };
        Assert.False(c.Call(removeAllButTen).IsError);
        long small = c.Call("MEMORY", "USAGE", "shrink:" + type).Integer;
        Assert.True(small < full / 50, $"{type}: 10 of {Elements} elements left still use {small} bytes (full: {full})");
    }

    [Fact]
    public void PerThreadRowsAddUpAfterSeveralClientsBuiltValues()
    {
        using var server = ServerProcess.Start();
        Parallel.ForEach(new[] { "hash", "list", "set", "zset" }, type =>
        {
            using var c = server.Connect();
            Pipeline.RunAll(c, Build("threads:" + type, type, 0, 5000));
        });
        using var observer = server.Connect();
        var deadline = DateTime.UtcNow.AddSeconds(3);
        var (sum, used) = ThreadFigures(observer);
        while (sum != used && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(50);
            (sum, used) = ThreadFigures(observer);
        }
        Assert.Equal(used, sum);
        Assert.True(used > 4 * 5000L * 24, $"used_memory {used} is too small for 20,000 elements");
    }

    private static long UsedMemory(RespClient c) => InfoFields.GetInt64(c, "memory", "used_memory");

    private static (long Sum, long Used) ThreadFigures(RespClient c)
    {
        long sum = 0, used = 0;
        foreach (string line in c.Call("INFO", "threads", "memory").Text!.Split("\r\n"))
        {
            if (line.StartsWith("used_memory:", StringComparison.Ordinal))
                used = long.Parse(line["used_memory:".Length..], CultureInfo.InvariantCulture);
            if (!line.StartsWith("thread_", StringComparison.Ordinal))
                continue;
            foreach (string field in line[(line.IndexOf(':') + 1)..].Split(','))
                if (field.StartsWith("live_bytes=", StringComparison.Ordinal))
                    sum += long.Parse(field["live_bytes=".Length..], CultureInfo.InvariantCulture);
        }
        return (sum, used);
    }
}
