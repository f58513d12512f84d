using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The <c>allocator</c> setting (this server's own, startup only): each C allocator serves the
/// data and is named in INFO's mem_allocator with its figures in INFO memory, MEMORY STATS and
/// MEMORY MALLOC-STATS; jemalloc needs the spare static TLS given at process start, and without
/// it (or without its library) the server falls back to glibc, says why, and works.
/// Needs Debian's libjemalloc2 and libmimalloc2.0 (.ci/run installs them).
/// </summary>
public sealed class AllocatorSettingTests
{
    private static readonly Dictionary<string, string> JemallocTls = new() { ["GLIBC_TUNABLES"] = "glibc.rtld.optional_static_tls=4096" };

    [Theory]
    [InlineData("glibc", "^libc$")]
    [InlineData("mimalloc", @"^mimalloc-\d+\.\d+\.\d+$")]
    [InlineData("jemalloc", @"^jemalloc-\d+\.\d+\.\d+$")]
    public void EachAllocatorServesTheDataAndReportsItself(string allocator, string name)
    {
        using var server = ServerProcess.StartWithEnvironment(allocator == "jemalloc" ? JemallocTls : [], "--allocator", allocator);
        using var c = server.Connect();
        Assert.Equal(allocator, c.Call("CONFIG", "GET", "allocator").ToMap()["allocator"].Text);
        Pipeline.RunAll(c, Enumerable.Range(0, 5000).Select(i => new[] { "SET", $"alloc:{i}", new string('v', 200 + i % 100) }));
        Pipeline.RunAll(c, Enumerable.Range(0, 5000).Where(i => i % 3 == 0).Select(i => new[] { "DEL", $"alloc:{i}" }));
        Assert.Equal(new string('v', 200 + 4 % 100), c.Call("GET", "alloc:4").Text);

        var memory = InfoFields.Read(c, "memory");
        Assert.Matches(name, memory["mem_allocator"]);
        long used = long.Parse(memory["used_memory"], CultureInfo.InvariantCulture);
        long rss = long.Parse(memory["used_memory_rss"], CultureInfo.InvariantCulture);
        long allocated = long.Parse(memory["allocator_allocated"], CultureInfo.InvariantCulture);
        long active = long.Parse(memory["allocator_active"], CultureInfo.InvariantCulture);
        long resident = long.Parse(memory["allocator_resident"], CultureInfo.InvariantCulture);
        Assert.True(allocated >= used * 9 / 10, $"{allocator}: allocator_allocated {allocated} against used_memory {used}");
        Assert.True(active >= allocated && resident > 0, $"{allocator}: active {active}, allocated {allocated}, resident {resident}");
        // Redis's formulas: the ratios are the figures divided, to two decimals.
        Assert.Equal(((float)active / allocated).ToString("0.00", CultureInfo.InvariantCulture), memory["allocator_frag_ratio"]);
        Assert.Equal((active - allocated).ToString(CultureInfo.InvariantCulture), memory["allocator_frag_bytes"]);
        Assert.Equal((resident - active).ToString(CultureInfo.InvariantCulture), memory["allocator_rss_bytes"]);
        double fragmentation = double.Parse(memory["mem_fragmentation_ratio"], CultureInfo.InvariantCulture);
        Assert.InRange(fragmentation, (double)rss / used * 0.8, (double)rss / used * 1.25); // RSS moves between the reads
        Assert.Contains("mem_fragmentation_bytes", memory.Keys);

        var stats = c.Call("MEMORY", "STATS").ToMap();
        Assert.True(stats["allocator.allocated"].Integer >= stats["total.allocated"].Integer * 9 / 10);
        Assert.True(stats["allocator.active"].Integer >= stats["allocator.allocated"].Integer);

        string report = c.Call("MEMORY", "MALLOC-STATS").Text!;
        Assert.Contains("Allocator: " + memory["mem_allocator"], report);
        if (allocator == "jemalloc")
            Assert.Contains("___ Begin jemalloc statistics ___", report); // jemalloc's own malloc_stats_print, as Redis shows it
        if (allocator == "mimalloc")
            Assert.Contains("committed", report);
        Assert.Contains("mallinfo2", report); // glibc's heap (the runtime's) is reported beside it
        RespAssert.Ok(c.Call("MEMORY", "PURGE"));
        Assert.Equal(new string('v', 200 + 4 % 100), c.Call("GET", "alloc:4").Text);

        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'allocator') - can't set immutable config",
            c.Call("CONFIG", "SET", "allocator", "glibc"));
    }

    [Fact]
    public void JemallocWithoutItsStaticTlsFallsBackToGlibcAndSaysWhy()
    {
        using var server = ServerProcess.StartWithEnvironment(new Dictionary<string, string> { ["GLIBC_TUNABLES"] = "" }, "--allocator", "jemalloc");
        using var c = server.Connect();
        Assert.Equal("libc", InfoFields.Get(c, "memory", "mem_allocator"));
        RespAssert.Ok(c.Call("SET", "fallback", "works"));
        Assert.Equal("works", c.Call("GET", "fallback").Text);
        Poll.Until(() => server.Output.Contains("allocator jemalloc is not available", StringComparison.Ordinal), "the log says why jemalloc is not used");
        Assert.Contains("GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096", server.Output);
    }

    [Fact]
    public void AnUnknownAllocatorIsAConfigError()
    {
        var (exitCode, output) = ServerProcess.RunUntilExit("--allocator", "tcmalloc");
        Assert.NotEqual(0, exitCode);
        Assert.Contains("FATAL CONFIG ERROR", output);
        Assert.Contains("allocator", output);
    }
}
