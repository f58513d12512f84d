using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Every disk operation is counted per thread and per purpose, exactly: the bytes recorded for
/// AOF appends are the bytes the incremental file grew by.
/// </summary>
public sealed class DiskIoAccountingTests
{
    [Fact]
    public void AppendBytesEqualTheGrowthOfTheFile()
    {
        using var dir = new TempDirectory();
        using var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path, "--appendfsync", "always", "--auto-aof-rewrite-percentage", "0");
        using var c = server.Connect();
        string incr = Path.Combine(dir.AppendDirectory, "appendonly.aof.1.incr.aof");
        RespAssert.Ok(c.Call("SET", "io:warmup", "x"));

        long fileBefore = new FileInfo(incr).Length;
        var before = InfoFields.Parts(InfoFields.Get(c, "diskio", "io_aof_write"));
        long sizeBefore = InfoFields.GetInt64(c, "persistence", "aof_current_size");
        for (int i = 0; i < 500; i++)
            RespAssert.Ok(c.Call("SET", $"io:key:{i}", new string('z', i)));
        RespAssert.Integer(3, c.Call("DEL", "io:key:1", "io:key:2", "io:key:3"));
        // appendfsync always: each reply above left after its bytes were written and synced.
        long fileAfter = new FileInfo(incr).Length;
        var after = InfoFields.Parts(InfoFields.Get(c, "diskio", "io_aof_write"));
        long sizeAfter = InfoFields.GetInt64(c, "persistence", "aof_current_size");

        long recorded = long.Parse(after["bytes"]) - long.Parse(before["bytes"]);
        Assert.True(fileAfter > fileBefore);
        Assert.Equal(fileAfter - fileBefore, recorded);
        Assert.Equal(fileAfter - fileBefore, sizeAfter - sizeBefore);
        Assert.True(long.Parse(after["count"]) > long.Parse(before["count"]));

        var fsync = InfoFields.Parts(InfoFields.Get(c, "diskio", "io_aof_fsync"));
        Assert.True(long.Parse(fsync["count"]) >= 1);
        Assert.Equal("0", fsync["errors"]);
        Assert.True(long.Parse(fsync["p99_usec"]) >= long.Parse(fsync["p50_usec"]));
    }

    [Fact]
    public void OperationsAreListedPerThreadAndPurpose()
    {
        using var dir = new TempDirectory();
        using (var first = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = first.Connect())
        {
            for (int i = 0; i < 100; i++)
                RespAssert.Ok(c.Call("SET", $"io:{i}", "v"));
            c.Send("SHUTDOWN");
            Assert.True(first.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        using var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path, "--appendfsync", "always");
        using var client = server.Connect();
        RespAssert.Ok(client.Call("SET", "io:more", "v"));
        Assert.StartsWith("Background append only file rewriting started", client.Call("BGREWRITEAOF").Text);
        Poll.Until(() => InfoFields.Get(client, "persistence", "aof_rewrite_in_progress") == "0", "the rewrite to finish");

        var info = InfoFields.Read(client, "diskio");
        var rows = info.Where(f => f.Key.StartsWith("io_thread_", StringComparison.Ordinal))
            .Select(f => (Field: f.Key, Parts: InfoFields.Parts(f.Value))).ToList();
        Assert.Contains(rows, r => r.Field.EndsWith("_aof_write", StringComparison.Ordinal) && r.Parts["name"] == "aof writer");
        Assert.Contains(rows, r => r.Field.EndsWith("_aof_fsync", StringComparison.Ordinal) && r.Parts["name"] == "aof writer");
        Assert.Contains(rows, r => r.Field.EndsWith("_rewrite_read", StringComparison.Ordinal) && r.Parts["name"] == "aof rewrite");
        Assert.Contains(rows, r => r.Field.EndsWith("_rewrite_write", StringComparison.Ordinal) && r.Parts["name"] == "aof rewrite");
        Assert.Contains(rows, r => r.Field.EndsWith("_load_read", StringComparison.Ordinal) && long.Parse(r.Parts["bytes"]) > 0);

        // Totals are the sums of the thread rows.
        foreach (var purpose in new[] { "aof_write", "aof_fsync", "rewrite_read", "rewrite_write", "load_read", "open", "close" })
        {
            var total = InfoFields.Parts(info["io_" + purpose]);
            long count = rows.Where(r => r.Field.EndsWith("_" + purpose, StringComparison.Ordinal)).Sum(r => long.Parse(r.Parts["count"]));
            long bytes = rows.Where(r => r.Field.EndsWith("_" + purpose, StringComparison.Ordinal)).Sum(r => long.Parse(r.Parts["bytes"]));
            Assert.Equal(long.Parse(total["count"]), count);
            Assert.Equal(long.Parse(total["bytes"]), bytes);
        }
        // The load read the files whole, plus the 5-byte look at the incr file's start that tells an
        // RDB base from commands (the base was empty, so it was not looked at).
        long loaded = long.Parse(InfoFields.Parts(info["io_load_read"])["bytes"]);
        Assert.Equal(InfoFields.GetInt64(client, "persistence", "aof_last_load_bytes") + 5, loaded);
    }
}
