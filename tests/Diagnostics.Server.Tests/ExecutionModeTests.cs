using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The same behaviour whichever way commands reach the shards: executor threads or inline under
/// the shard lock, with one shard or several. Cross-shard commands must stay atomic against
/// concurrent clients, and concurrent updates of one key must never be lost.
/// </summary>
public sealed class ExecutionModeTests
{
    public static TheoryData<string, string> Modes => new()
    {
        { "executor", "3" },
        { "inline", "3" },
        { "executor", "1" },
        { "inline", "1" },
    };

    [Theory]
    [MemberData(nameof(Modes))]
    public void PipelinedReadsAndWritesAreAnsweredInOrder(string mode, string shards)
    {
        using var server = ServerProcess.Start("--execution-mode", mode, "--shards", shards);
        using var c = server.Connect();
        var request = new MemoryStream();
        for (int i = 0; i < 2000; i++)
        {
            request.Write(RespClient.Encode("SET", $"order:{i}", $"v{i}"));
            request.Write(RespClient.Encode("GET", $"order:{i}"));
        }
        c.SendRaw(request.ToArray());
        for (int i = 0; i < 2000; i++)
        {
            RespAssert.Ok(c.Read());
            RespAssert.Bulk($"v{i}", c.Read());
        }
        RespAssert.Integer(2000, c.Call("DBSIZE"));
        Assert.Equal(2000, c.Call("KEYS", "order:*").Array.Count);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public void ConcurrentIncrementsOfOneKeyAreNeverLost(string mode, string shards)
    {
        using var server = ServerProcess.Start("--execution-mode", mode, "--shards", shards);
        AssertConcurrentIncrements(server);
    }

    [Fact]
    public void ASingleIoThreadServesConcurrentClients()
    {
        using var server = ServerProcess.Start("--io-threads", "1");
        using (var c = server.Connect())
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "io-threads"), "io-threads", "1");
        AssertConcurrentIncrements(server);
    }

    private static void AssertConcurrentIncrements(ServerProcess server)
    {
        const int clients = 8, increments = 500;
        Parallel.For(0, clients, new ParallelOptions { MaxDegreeOfParallelism = clients }, _ =>
        {
            using var c = server.Connect();
            var request = new MemoryStream();
            for (int i = 0; i < increments; i++)
                request.Write(RespClient.Encode("INCR", "counter"));
            c.SendRaw(request.ToArray());
            for (int i = 0; i < increments; i++)
                Assert.Equal(':', c.Read().Kind);
        });
        using var check = server.Connect();
        RespAssert.Bulk((clients * increments).ToString(), check.Call("GET", "counter"));
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task MultiKeyWritesAreSeenWholeOrNotAtAll(string mode, string shards)
    {
        using var server = ServerProcess.Start("--execution-mode", mode, "--shards", shards);
        // Sixteen key pairs: with several shards most pairs straddle two of them.
        string[] keys = Enumerable.Range(0, 16).SelectMany(n => new[] { $"pair:{n}:x", $"pair:{n}:y" }).ToArray();
        using var writer = server.Connect();
        using var reader = server.Connect();
        var stop = DateTime.UtcNow.AddSeconds(2);
        var write = Task.Run(() =>
        {
            for (int round = 0; DateTime.UtcNow < stop; round++)
            {
                var args = new List<string> { "MSET" };
                foreach (var key in keys)
                {
                    args.Add(key);
                    args.Add(round.ToString());
                }
                RespAssert.Ok(writer.Call(args.ToArray()));
            }
        });
        int reads = 0;
        while (!write.IsCompleted)
        {
            var values = reader.Call(["MGET", .. keys]).Array;
            string? first = values[0].Text;
            foreach (var value in values)
                Assert.Equal(first, value.Text);
            reads++;
        }
        await write;
        Assert.True(reads > 10, $"only {reads} reads overlapped the writes");
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public void RenameAcrossShardsMovesValueAndTtl(string mode, string shards)
    {
        using var server = ServerProcess.Start("--execution-mode", mode, "--shards", shards);
        using var c = server.Connect();
        for (int i = 0; i < 50; i++)
        {
            RespAssert.Ok(c.Call("SET", $"from:{i}", $"value{i}", "EX", "1000"));
            RespAssert.Ok(c.Call("RENAME", $"from:{i}", $"to:{i}"));
            RespAssert.Bulk($"value{i}", c.Call("GET", $"to:{i}"));
            RespAssert.Integer(0, c.Call("EXISTS", $"from:{i}"));
            long ttl = c.Call("TTL", $"to:{i}").Integer;
            Assert.InRange(ttl, 990, 1000);
        }
        RespAssert.Ok(c.Call("FLUSHALL"));
        RespAssert.Integer(0, c.Call("DBSIZE"));
    }
}
