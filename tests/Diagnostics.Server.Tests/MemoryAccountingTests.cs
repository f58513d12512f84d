using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The running server's per-thread memory view (INFO threads) against its total (INFO memory's
/// used_memory): one source of truth, so the rows must add up to the total, and deleting the
/// data must give the memory back.
/// </summary>
public sealed class MemoryAccountingTests
{
    [Fact]
    public void PerThreadLiveBytesAddUpToUsedMemory()
    {
        using var server = ServerProcess.Start();
        LoadFromSeveralClients(server, keys: 20_000);

        using var c = server.Connect();
        var (_, used, rows) = Figures(c);
        Assert.True(rows >= 2, $"expected several threads in INFO threads, got {rows}");
        Assert.True(used > 20_000L * 100, $"used_memory {used} is too small for 20,000 keys of 100 bytes");
        AssertRowsAddUp(c);
    }

    [Fact]
    public void DeletingEverythingReturnsTheMemory()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        long baseline = Figures(c).Used;
        LoadFromSeveralClients(server, keys: 20_000);
        long loaded = Figures(c).Used;
        Assert.True(loaded - baseline > 20_000L * 100, $"loading grew used_memory by only {loaded - baseline} bytes");

        RespAssert.Ok(c.Call("FLUSHALL", "SYNC"));
        // Buckets shrink in the shard cron; give it a few periods.
        Poll.Until(() => Figures(c).Used - baseline < 64 * 1024, "used_memory is back within 64 KB of its baseline");
        AssertRowsAddUp(c);
    }

    /// <summary>
    /// The two figures are read a moment apart, and the shard cron may resize a table in between,
    /// so a mismatch must persist to count; an accounting error would never go away.
    /// </summary>
    private static void AssertRowsAddUp(RespClient c)
    {
        var deadline = DateTime.UtcNow.AddSeconds(3);
        var last = Figures(c);
        while (last.ThreadSum != last.Used && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(50);
            last = Figures(c);
        }
        Assert.Equal(last.Used, last.ThreadSum);
    }

    private static void LoadFromSeveralClients(ServerProcess server, int keys)
    {
        const int clients = 4;
        Parallel.For(0, clients, n =>
        {
            using var c = server.Connect();
            var request = new MemoryStream();
            for (int i = n; i < keys; i += clients)
                request.Write(RespClient.Encode("SET", $"acct:{i}", new string('v', 100)));
            c.SendRaw(request.ToArray());
            for (int i = n; i < keys; i += clients)
                RespAssert.Ok(c.Read());
        });
    }

    private static (long ThreadSum, long Used, int Rows) Figures(RespClient c)
    {
        long sum = 0;
        int rows = 0;
        string info = c.Call("INFO", "threads", "memory").Text!;
        foreach (string line in info.Split("\r\n"))
        {
            if (!line.StartsWith("thread_", StringComparison.Ordinal))
                continue;
            rows++;
            foreach (string field in line[(line.IndexOf(':') + 1)..].Split(','))
                if (field.StartsWith("live_bytes=", StringComparison.Ordinal))
                    sum += long.Parse(field["live_bytes=".Length..], CultureInfo.InvariantCulture);
        }
        long used = 0;
        foreach (string line in info.Split("\r\n"))
            if (line.StartsWith("used_memory:", StringComparison.Ordinal))
                used = long.Parse(line["used_memory:".Length..], CultureInfo.InvariantCulture);
        return (sum, used, rows);
    }
}
