using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.Tests.Infrastructure;
using Diagnostics.Server.UnitTests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The HyperLogLog commands' registration as Redis 7.0.15's COMMAND INFO and DOCS report it (the
/// router relies on the key positions), hll-sparse-max-bytes as a real setting, and PFADD and
/// PFCOUNT run in process through the executor without allocating on the managed heap.
/// </summary>
[Collection(InProcessServerCollection.Name)]
public sealed class HyperLogLogCommandTests
{
    private static readonly CommandTable Table = new();

    [Theory]
    [InlineData("pfadd", -2, Write | DenyOom | Fast, 1, 1, 1, "key element")]
    [InlineData("pfcount", -2, ReadOnly | MayReplicate, 1, -1, 1, "key")]
    [InlineData("pfmerge", -2, Write | DenyOom, 1, -1, 1, "destkey sourcekey")]
    [InlineData("pfdebug", 3, Write | DenyOom | Admin, 2, 2, 1, "subcommand key")]
    [InlineData("pfselftest", 1, Admin, 0, 0, 0, "")]
    public void RegisteredLikeRedis(string name, int arity, CommandFlags flags, int firstKey, int lastKey, int keyStep, string arguments)
    {
        var spec = Table.Find(name);
        Assert.NotNull(spec);
        Assert.Equal(arity, spec.Arity);
        Assert.Equal(flags, spec.Flags);
        Assert.Equal((firstKey, lastKey, keyStep), (spec.FirstKey, spec.LastKey, spec.KeyStep));
        Assert.Equal("hyperloglog", spec.Group);
        Assert.Equal("2.8.9", spec.Since);
        Assert.NotNull(spec.Handler);
        Assert.False(string.IsNullOrWhiteSpace(spec.Summary));
        Assert.Equal(arguments, string.Join(' ', spec.Arguments.Select(a => a.Name)));
        Assert.Contains("@hyperloglog", CommandMetadata.CategoryList(CommandMetadata.Categories(spec)));
    }

    [Fact]
    public void PfaddAndPfmergeRaisePfaddForTheKeyTheyWrite()
    {
        Assert.Equal("pfadd", Encoding.ASCII.GetString(Table.Find("pfadd")!.Event!));
        Assert.Equal("pfadd", Encoding.ASCII.GetString(Table.Find("pfmerge")!.Event!));
        Assert.Equal(1, Table.Find("pfmerge")!.WrittenKey);
        Assert.Null(Table.Find("pfcount")!.Event);
        Assert.Null(Table.Find("pfdebug")!.Event);
        Assert.Equal(["@write", "@hyperloglog", "@admin", "@slow", "@dangerous"], CommandMetadata.CategoryList(CommandMetadata.Categories(Table.Find("pfdebug")!)));
        Assert.Equal(["@read", "@hyperloglog", "@slow"], CommandMetadata.CategoryList(CommandMetadata.Categories(Table.Find("pfcount")!)));
    }

    [Fact]
    public void SparseMaxBytesIsARealSettingWithRedisRange()
    {
        var config = new ServerConfig();
        Assert.Equal(3000, config.HllSparseMaxBytes);
        Assert.Equal("3000", config.Find("hll-sparse-max-bytes")!.Get());
        Assert.Null(config.Set("hll-sparse-max-bytes", "0", atStartup: false));
        Assert.Equal(0, config.HllSparseMaxBytes);
        Assert.Null(config.Set("hll-sparse-max-bytes", "9223372036854775807", atStartup: false));
        Assert.Equal(long.MaxValue, config.HllSparseMaxBytes);
        Assert.Null(config.Set("hll-sparse-max-bytes", "2kb", atStartup: false));
        Assert.Equal(2048, config.HllSparseMaxBytes);
        Assert.NotNull(config.Set("hll-sparse-max-bytes", "-1", atStartup: false));
        Assert.NotNull(config.Set("hll-sparse-max-bytes", "lots", atStartup: false));
        Assert.Equal(2048, config.HllSparseMaxBytes);
    }

    [Fact]
    public void AddingAndCountingThroughTheExecutorDoNotAllocate()
    {
        using var dir = new TempDirectory("hll-commands-");
        var config = new ServerConfig();
        Assert.Null(config.Set("dir", dir.Path, atStartup: true));
        Assert.Null(config.Set("appendonly", "no", atStartup: true));
        using var server = new DataServer(config);
        using var client = LocalClient.For(server);

        // Warm up every path (sparse edits with the block growing, promotion, dense, both counts) once.
        for (int round = 0; round < 2; round++)
        {
            Run(server, client, "DEL", "s", "d");
            for (int i = 0; i < 200; i++)
                Run(server, client, "PFADD", "s", "w" + i, "x" + i);
            for (int i = 0; i < 3000; i += 100)
                Run(server, client, "PFADD", "d", "y" + i);
            Run(server, client, ["PFADD", "d", .. Enumerable.Range(0, 3000).Select(i => "z" + i)]);
            Run(server, client, "PFCOUNT", "s");
            Run(server, client, "PFCOUNT", "s", "d");
        }
        Assert.Equal("+dense\r\n", Run(server, client, "PFDEBUG", "ENCODING", "d"));

        // Sparse (the block grows in place or moves: native memory only), dense, and both counts.
        long sparse = Allocated(server, client, 300, i => ["PFADD", "fresh", "a" + i, "b" + i]);
        long dense = Allocated(server, client, 300, i => ["PFADD", "d", "c" + i]);
        long count = Allocated(server, client, 300, i => i % 2 == 0 ? ["PFADD", "fresh", "n" + i] : ["PFCOUNT", "fresh"]);
        long union = Allocated(server, client, 100, _ => ["PFCOUNT", "fresh", "d"]);
        Assert.Equal("+sparse\r\n", Run(server, client, "PFDEBUG", "ENCODING", "fresh"));
        Assert.Equal((0L, 0L, 0L, 0L), (sparse, dense, count, union));
    }

    /// <summary>Managed bytes allocated by the executor running <paramref name="count"/> commands (parsed beforehand).</summary>
    private static long Allocated(DataServer server, LocalClient client, int count, Func<int, string[]> command)
    {
        var batches = new List<RequestBatch>();
        for (int i = 0; i < count; i++)
            batches.Add(Parse(server, command(i)));
        long total = 0;
        foreach (var batch in batches)
        {
            total += RunParsed(server, client, batch, measure: true);
            client.TakeReplies();
            batch.Dispose();
        }
        return total;
    }

    private static string Run(DataServer server, LocalClient client, params string[] command)
    {
        using var batch = Parse(server, command);
        RunParsed(server, client, batch, measure: false);
        return client.TakeReplies();
    }

    private static RequestBatch Parse(DataServer server, string[] command)
    {
        var batch = new RequestBatch();
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(RespClient.Encode(command)));
        Assert.Equal(ParseStatus.Parsed, RespRequestParser.TryParse(ref reader, batch, server.Config.Limits, authenticated: true, out string? error));
        Assert.Null(error);
        return batch;
    }

    /// <summary>Runs the command holding every shard, as CommandExecutorTests does; returns the bytes the executor allocated when measuring.</summary>
    private static long RunParsed(DataServer server, LocalClient client, RequestBatch batch, bool measure)
    {
        var shards = server.Keyspace.Shards;
        foreach (var shard in shards)
        {
            shard.EnterInline();
            shard.Effects = client.Effects;
        }
        try
        {
            var executor = server.Executor;
            var spec = executor.Find(batch[0]);
            long before = GC.GetAllocatedBytesForCurrentThread();
            executor.Execute(client, batch[0], spec);
            long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            executor.CommitLoggedWrites(client);
            return measure ? allocated : 0;
        }
        finally
        {
            for (int s = shards.Length - 1; s >= 0; s--)
            {
                shards[s].Effects = null;
                shards[s].ExitInline();
            }
        }
    }
}
