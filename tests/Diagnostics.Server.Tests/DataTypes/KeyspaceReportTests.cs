using System.IO.Compression;
using System.Text.Json;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// GET /api/keyspace and keyspace.json in the debug package: keys, elements and bytes by type,
/// and the biggest keys, matching what the server says key by key (TYPE, MEMORY USAGE).
/// </summary>
public sealed class KeyspaceReportTests
{
    [Fact]
    public async Task TheReportCountsEveryTypeAndNamesTheBiggestKeys()
    {
        using var server = ServerProcess.Start("--shards", "4");
        using var c = server.Connect();
        Pipeline.RunAll(c, Enumerable.Range(0, 100).Select(i => new[] { "SET", "s:" + i, "v" }));
        Pipeline.RunAll(c, Enumerable.Range(0, 3000).Select(i => new[] { "HSET", "big:hash", "f" + i, new string('x', 50) }));
        Pipeline.RunAll(c, Enumerable.Range(0, 10).Select(i => new[] { "RPUSH", "small:list", "e" + i }));
        Pipeline.RunAll(c, Enumerable.Range(0, 500).Select(i => new[] { "SADD", "mid:set", "m" + i }));
        Pipeline.RunAll(c, Enumerable.Range(0, 200).Select(i => new[] { "ZADD", "mid:zset", i.ToString(), "m" + i }));
        RespAssert.Ok(c.Call("SELECT", "5"));
        c.Call("RPUSH", "db5:list\r\n", "x");

        using var api = new ApiClient(server.HttpPort);
        var report = api.Get("/api/keyspace", ContractsJson.Default.KeyspaceReport);
        Assert.True(report.Complete);
        Assert.Equal(105, report.KeysTotal);
        Assert.Equal(105, report.KeysWalked);
        var byType = report.Types.ToDictionary(t => t.Type);
        Assert.Equal(100, byType["string"].Keys);
        Assert.Equal(1, byType["hash"].Keys);
        Assert.Equal(3000, byType["hash"].Elements);
        Assert.Equal(2, byType["list"].Keys);
        Assert.Equal(11, byType["list"].Elements);
        Assert.Equal(500, byType["set"].Elements);
        Assert.Equal(200, byType["zset"].Elements);

        // The biggest key comes first, with the bytes MEMORY USAGE gives (less its table share).
        var first = report.Biggest[0];
        Assert.Equal("big:hash", first.Key);
        Assert.Equal("hash", first.Type);
        RespAssert.Ok(c.Call("SELECT", "0"));
        long usage = c.Call("MEMORY", "USAGE", "big:hash").Integer;
        Assert.InRange(first.Bytes, usage * 9 / 10, usage);
        Assert.Equal(byType["hash"].Bytes, first.Bytes);
        Assert.Contains(report.Biggest, k => k.Database == 5 && k.Key == "db5:list\\x0d\\x0a");

        // The same report is in the debug package.
        byte[] zip = await api.Http.GetByteArrayAsync("/api/debug/package");
        using var archive = new ZipArchive(new MemoryStream(zip));
        using var stream = archive.GetEntry("keyspace.json")!.Open();
        var packaged = JsonSerializer.Deserialize(stream, ContractsJson.Default.KeyspaceReport)!;
        Assert.Equal(105, packaged.KeysTotal);
        Assert.Equal("big:hash", packaged.Biggest[0].Key);
    }
}
