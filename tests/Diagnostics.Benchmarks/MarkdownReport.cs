using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>The results as Markdown: machine, settings, throughput table, memory table, notes.</summary>
public static class MarkdownReport
{
    public static string Build(MachineInfo machine, BenchmarkOptions options, string oursCommandLine, string oursSettings, string redisCommandLine,
        IReadOnlyList<ThroughputResult> throughput, AllocationProbe? probe, MemoryResult? memory, bool oursHasUsedMemory)
    {
        var md = new StringBuilder();
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;

        Line("## Benchmark results");
        Line();
        Line("| Machine | |");
        Line("| --- | --- |");
        Line($"| Date | {machine.DateUtc.ToString("yyyy-MM-dd HH:mm 'UTC'", inv)} |");
        Line($"| CPU | {machine.Cpu} |");
        Line($"| Cores | {machine.Cores} |");
        Line($"| OS | {machine.OperatingSystem} |");
        Line($"| .NET | {machine.DotnetRuntime}, {machine.DotnetSdk} |");
        Line($"| redis-server | {machine.RedisServer} |");
        Line($"| redis-benchmark | {machine.RedisBenchmark} |");
        Line($"| Our server | `{oursCommandLine}` ({oursSettings}) |");
        Line($"| Redis | `{redisCommandLine}` |");
        Line();
        Line(string.Create(inv, $"Load: `redis-benchmark -t <test> -d {BenchmarkOptions.DataSize} -r {BenchmarkOptions.KeySpace} -c {BenchmarkOptions.Clients} -n <requests> -P <pipeline> --csv`, ") +
             string.Create(inv, $"{options.Rounds} round(s) per row, servers alternating ours/redis within each round, after an unmeasured warm-up; ") +
             "every figure is the median over the rounds. redis-benchmark runs on the same machine, so client and server share the cores.");
        Line();
        Line("| Test | Pipeline | Requests | Ours rps | Redis rps | Ours/Redis | Ours p50 ms | Redis p50 ms | Ours p99 ms | Redis p99 ms | Ours managed B/op |");
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var row in throughput)
        {
            double oursRps = Statistics.Median(row.Ours.Select(s => s.RequestsPerSecond));
            double redisRps = Statistics.Median(row.Redis.Select(s => s.RequestsPerSecond));
            string allocation = row.OursBytesPerOperation.Count > 0
                ? Statistics.Median(row.OursBytesPerOperation).ToString("0.0", inv)
                : "n/a";
            Line(string.Create(inv,
                $"| {row.Test.ToUpperInvariant()} | {row.Pipeline} | {row.Requests:N0} | {oursRps:N0} | {redisRps:N0} | {oursRps / redisRps:0.00} | " +
                $"{Statistics.Median(row.Ours.Select(s => s.P50Ms)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P50Ms)):0.000} | " +
                $"{Statistics.Median(row.Ours.Select(s => s.P99Ms)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P99Ms)):0.000} | {allocation} |"));
        }
        Line();
        if (probe is not null)
            Line(string.Create(inv, $"Ours managed B/op: growth of `{ServerInfo.ManagedAllocatedBytes}` (INFO memory, GC.GetTotalAllocatedBytes) across the run, less the {probe.ProbeCost:N0} bytes one INFO probe allocates, divided by the requests; it includes accepting redis-benchmark's {BenchmarkOptions.Clients} connections."));
        else
            Line($"Ours managed B/op: n/a, because our server's INFO memory has no `{ServerInfo.ManagedAllocatedBytes}` field (the harness expects `{ServerInfo.ManagedAllocatedBytes}:<GC.GetTotalAllocatedBytes(false)>`).");

        if (memory is not null)
        {
            Line();
            Line(string.Create(inv, $"### Memory: {memory.Keys:N0} distinct keys, {memory.ValueSize}-byte values"));
            Line();
            Line(string.Create(inv, $"Each server started fresh and loaded `SET key:%07d <{memory.ValueSize} bytes>` for {memory.Keys:N0} keys through `redis-cli --pipe`."));
            Line();
            Line("| | Ours | Redis | Ours/Redis |");
            Line("| --- | ---: | ---: | ---: |");
            Line($"| used_memory after load | {Bytes(memory.Ours.UsedMemoryAfter)} | {Bytes(memory.Redis.UsedMemoryAfter)} | {Ratio(memory.Ours.UsedMemoryAfter, memory.Redis.UsedMemoryAfter)} |");
            Line($"| used_memory per key (growth / keys) | {PerKey(memory.Ours.UsedMemoryGrowth, memory.Keys)} | {PerKey(memory.Redis.UsedMemoryGrowth, memory.Keys)} | {Ratio(memory.Ours.UsedMemoryGrowth, memory.Redis.UsedMemoryGrowth)} |");
            Line($"| process RSS after load | {Bytes(memory.Ours.ResidentAfter)} | {Bytes(memory.Redis.ResidentAfter)} | {Ratio(memory.Ours.ResidentAfter, memory.Redis.ResidentAfter)} |");
            Line(string.Create(inv, $"| load time (redis-cli --pipe) | {memory.Ours.LoadTime.TotalSeconds:0.0} s | {memory.Redis.LoadTime.TotalSeconds:0.0} s | {memory.Ours.LoadTime.TotalSeconds / memory.Redis.LoadTime.TotalSeconds:0.00} |"));
            if (!oursHasUsedMemory)
            {
                Line();
                Line($"Our used_memory: n/a, because our server's INFO memory has no `{ServerInfo.UsedMemory}` field; compare RSS instead.");
            }
        }
        return md.ToString();
    }

    private static string Bytes(long? bytes)
        => bytes is { } b ? string.Create(CultureInfo.InvariantCulture, $"{b / 1048576.0:N1} MiB") : "n/a";

    private static string PerKey(long? bytes, long keys)
        => bytes is { } b ? string.Create(CultureInfo.InvariantCulture, $"{b / (double)keys:N1} B") : "n/a";

    private static string Ratio(long? ours, long? redis)
        => ours is { } o && redis is { } r && r != 0 ? string.Create(CultureInfo.InvariantCulture, $"{o / (double)r:0.00}") : "n/a";
}
