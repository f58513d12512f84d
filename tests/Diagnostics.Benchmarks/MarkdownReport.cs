using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>What one harness run measured; a suite that did not run is null.</summary>
public sealed record BenchmarkRun(
    string OursCommandLine, string OursSettings, string? RedisCommandLine,
    IReadOnlyList<ThroughputResult>? Throughput, AllocationProbe? Probe,
    MemoryResult? Memory, bool OursHasUsedMemory,
    IReadOnlyList<AofWriteResult>? AofWrite, AofLoadResult? AofLoad,
    DiagnosticsSuiteResult? Diagnostics, StudioSuiteResult? Studio, MonitorSuiteResult? Monitor, ScriptSuiteResult? Scripts,
    DataModelSuiteResult? DataModel, DataMemoryResult? DataMemory = null, string? GarnetCommandLine = null,
    IReadOnlyList<GarnetCapability>? GarnetCapabilities = null);

/// <summary>The results as Markdown: machine, settings, then one section per suite that ran (throughput, memory, AOF write, AOF load, diagnostics, studio, monitor, scripts, data model).</summary>
public static class MarkdownReport
{
    public static string Build(MachineInfo machine, BenchmarkOptions options, BenchmarkRun run)
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
        if (machine.Garnet is not null)
            Line($"| garnet-server | {machine.Garnet} |");
        Line($"| Our server | `{run.OursCommandLine}` ({run.OursSettings}) |");
        if (run.RedisCommandLine is not null)
            Line($"| Redis | `{run.RedisCommandLine}` |");
        if (run.GarnetCommandLine is not null)
            Line($"| Garnet | `{run.GarnetCommandLine}` |");
        if (run.Throughput is { } throughput)
            Throughput(md, options, throughput, run.Probe);
        if (run.Memory is { } memory)
            Memory(md, memory, run.OursHasUsedMemory);
        if (run.AofWrite is { } aofWrite)
            AofWrite(md, options, aofWrite);
        if (run.AofLoad is { } aofLoad)
            AofLoad(md, options, aofLoad);
        if (run.Diagnostics is { } diagnostics)
            Diagnostics(md, options, diagnostics);
        if (run.Studio is { } studio)
            Studio(md, options, studio);
        if (run.Monitor is { } monitor)
            Monitor(md, options, monitor);
        if (run.Scripts is { } scripts)
            Scripts(md, options, scripts);
        if (run.DataModel is { } dataModel)
            DataModel(md, options, dataModel);
        if (run.DataMemory is { } dataMemory)
            DataMemoryReport.Write(md, dataMemory);
        if (run.GarnetCapabilities is { } garnetCapabilities)
            GarnetProbe.Write(md, garnetCapabilities, options.Suites);
        return md.ToString();
    }

    private static void Throughput(StringBuilder md, BenchmarkOptions options, IReadOnlyList<ThroughputResult> throughput, AllocationProbe? probe)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        Line();
        Line(string.Create(inv, $"Load: `redis-benchmark -t <test> -d {BenchmarkOptions.DataSize} -r {BenchmarkOptions.KeySpace} -c {BenchmarkOptions.Clients} -n <requests> -P <pipeline> --csv`, ") +
             string.Create(inv, $"{options.Rounds} round(s) per row, servers alternating ours/redis{(throughput.Any(r => r.Garnet.Count > 0) ? "/garnet" : "")} within each round, after an unmeasured warm-up; ") +
             "every figure is the median over the rounds. redis-benchmark runs on the same machine, so client and server share the cores.");
        Line();
        bool garnet = throughput.Any(r => r.Garnet.Count > 0);
        if (garnet)
        {
            Line("| Test | Pipeline | Requests | Ours rps | Redis rps | Garnet rps | Ours/Redis | Ours/Garnet | Ours p50 ms | Redis p50 ms | Garnet p50 ms | Ours p99 ms | Redis p99 ms | Garnet p99 ms | Ours managed B/op |");
            Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        }
        else
        {
            Line("| Test | Pipeline | Requests | Ours rps | Redis rps | Ours/Redis | Ours p50 ms | Redis p50 ms | Ours p99 ms | Redis p99 ms | Ours managed B/op |");
            Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        }
        foreach (var row in throughput)
        {
            double oursRps = Statistics.Median(row.Ours.Select(s => s.RequestsPerSecond));
            double redisRps = Statistics.Median(row.Redis.Select(s => s.RequestsPerSecond));
            string allocation = row.OursBytesPerOperation.Count > 0
                ? Statistics.Median(row.OursBytesPerOperation).ToString("0.0", inv)
                : "n/a";
            if (garnet)
            {
                double garnetRps = Statistics.Median(row.Garnet.Select(s => s.RequestsPerSecond));
                Line(string.Create(inv,
                    $"| {row.Test.ToUpperInvariant()} | {row.Pipeline} | {row.Requests:N0} | {oursRps:N0} | {redisRps:N0} | {garnetRps:N0} | {oursRps / redisRps:0.00} | {oursRps / garnetRps:0.00} | " +
                    $"{Statistics.Median(row.Ours.Select(s => s.P50Ms)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P50Ms)):0.000} | {Statistics.Median(row.Garnet.Select(s => s.P50Ms)):0.000} | " +
                    $"{Statistics.Median(row.Ours.Select(s => s.P99Ms)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P99Ms)):0.000} | {Statistics.Median(row.Garnet.Select(s => s.P99Ms)):0.000} | {allocation} |"));
                continue;
            }
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
    }

    private static void Memory(StringBuilder md, MemoryResult memory, bool oursHasUsedMemory)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        Line();
        Line(string.Create(inv, $"### Memory: {memory.Keys:N0} distinct keys, {memory.ValueSize}-byte values"));
        Line();
        Line(string.Create(inv, $"Each server started fresh and loaded `SET key:%07d <{memory.ValueSize} bytes>` for {memory.Keys:N0} keys through `redis-cli --pipe`."));
        Line();
        if (memory.Garnet is { } garnet)
        {
            string garnetUsed = garnet.UsedMemoryAfter is null ? "n/a (no used_memory in its INFO memory)" : Bytes(garnet.UsedMemoryAfter);
            Line("| | Ours | Redis | Garnet | Ours/Redis | Ours/Garnet |");
            Line("| --- | ---: | ---: | ---: | ---: | ---: |");
            Line($"| used_memory after load | {Bytes(memory.Ours.UsedMemoryAfter)} | {Bytes(memory.Redis.UsedMemoryAfter)} | {garnetUsed} | {Ratio(memory.Ours.UsedMemoryAfter, memory.Redis.UsedMemoryAfter)} | {Ratio(memory.Ours.UsedMemoryAfter, garnet.UsedMemoryAfter)} |");
            Line($"| used_memory per key (growth / keys) | {PerKey(memory.Ours.UsedMemoryGrowth, memory.Keys)} | {PerKey(memory.Redis.UsedMemoryGrowth, memory.Keys)} | {PerKey(garnet.UsedMemoryGrowth, memory.Keys)} | {Ratio(memory.Ours.UsedMemoryGrowth, memory.Redis.UsedMemoryGrowth)} | {Ratio(memory.Ours.UsedMemoryGrowth, garnet.UsedMemoryGrowth)} |");
            Line($"| process RSS after load | {Bytes(memory.Ours.ResidentAfter)} | {Bytes(memory.Redis.ResidentAfter)} | {Bytes(garnet.ResidentAfter)} | {Ratio(memory.Ours.ResidentAfter, memory.Redis.ResidentAfter)} | {Ratio(memory.Ours.ResidentAfter, garnet.ResidentAfter)} |");
            Line($"| RSS per key (growth / keys) | {PerKey(memory.Ours.ResidentGrowth, memory.Keys)} | {PerKey(memory.Redis.ResidentGrowth, memory.Keys)} | {PerKey(garnet.ResidentGrowth, memory.Keys)} | {Ratio(memory.Ours.ResidentGrowth, memory.Redis.ResidentGrowth)} | {Ratio(memory.Ours.ResidentGrowth, garnet.ResidentGrowth)} |");
            Line(string.Create(inv, $"| load time (redis-cli --pipe) | {memory.Ours.LoadTime.TotalSeconds:0.0} s | {memory.Redis.LoadTime.TotalSeconds:0.0} s | {garnet.LoadTime.TotalSeconds:0.0} s | {memory.Ours.LoadTime.TotalSeconds / memory.Redis.LoadTime.TotalSeconds:0.00} | {memory.Ours.LoadTime.TotalSeconds / garnet.LoadTime.TotalSeconds:0.00} |"));
            if (garnet.UsedMemoryAfter is null)
            {
                Line();
                Line($"Garnet's used_memory: n/a, because its INFO memory (read after the load) has no `{ServerInfo.UsedMemory}` field; its RSS rows compare with ours instead.");
            }
        }
        else
        {
            Line("| | Ours | Redis | Ours/Redis |");
            Line("| --- | ---: | ---: | ---: |");
            Line($"| used_memory after load | {Bytes(memory.Ours.UsedMemoryAfter)} | {Bytes(memory.Redis.UsedMemoryAfter)} | {Ratio(memory.Ours.UsedMemoryAfter, memory.Redis.UsedMemoryAfter)} |");
            Line($"| used_memory per key (growth / keys) | {PerKey(memory.Ours.UsedMemoryGrowth, memory.Keys)} | {PerKey(memory.Redis.UsedMemoryGrowth, memory.Keys)} | {Ratio(memory.Ours.UsedMemoryGrowth, memory.Redis.UsedMemoryGrowth)} |");
            Line($"| process RSS after load | {Bytes(memory.Ours.ResidentAfter)} | {Bytes(memory.Redis.ResidentAfter)} | {Ratio(memory.Ours.ResidentAfter, memory.Redis.ResidentAfter)} |");
            Line(string.Create(inv, $"| load time (redis-cli --pipe) | {memory.Ours.LoadTime.TotalSeconds:0.0} s | {memory.Redis.LoadTime.TotalSeconds:0.0} s | {memory.Ours.LoadTime.TotalSeconds / memory.Redis.LoadTime.TotalSeconds:0.00} |"));
        }
        if (!oursHasUsedMemory)
        {
            Line();
            Line($"Our used_memory: n/a, because our server's INFO memory has no `{ServerInfo.UsedMemory}` field; compare RSS instead.");
        }
    }

    private static void AofWrite(StringBuilder md, BenchmarkOptions options, IReadOnlyList<AofWriteResult> results)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        Line();
        Line($"### AOF write: SET -P {AofWriteSuite.Pipeline} with appendonly yes");
        Line();
        Line("Each appendfsync policy starts both servers side by side, each in a fresh empty `--dir` (deleted afterwards):");
        Line();
        foreach (var result in results)
        {
            Line($"    {result.OursCommandLine}");
            Line($"    {result.RedisCommandLine}");
        }
        Line();
        Line(string.Create(inv, $"Load: `redis-benchmark -t set -d {BenchmarkOptions.DataSize} -r {BenchmarkOptions.KeySpace} -c {BenchmarkOptions.Clients} -n {options.AofRequests} -P {AofWriteSuite.Pipeline} --csv`, ") +
             string.Create(inv, $"{options.Rounds} round(s) per policy, servers alternating ours/redis, after an unmeasured warm-up of {Math.Max(1_000, options.AofRequests / 4):N0} SETs each; ") +
             "after every run the harness waits until INFO persistence shows no AOF rewrite in progress or scheduled, so one server's rewrite does not run during the other's turn. Figures are medians over the rounds.");
        Line();
        Line("| appendfsync | Requests | Ours rps | Redis rps | Ours/Redis | Ours p50 ms | Redis p50 ms | Ours p99 ms | Redis p99 ms |");
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var row in results)
        {
            double oursRps = Statistics.Median(row.Ours.Select(s => s.RequestsPerSecond));
            double redisRps = Statistics.Median(row.Redis.Select(s => s.RequestsPerSecond));
            Line(string.Create(inv,
                $"| {row.Fsync} | {row.Requests:N0} | {oursRps:N0} | {redisRps:N0} | {oursRps / redisRps:0.00} | " +
                $"{Statistics.Median(row.Ours.Select(s => s.P50Ms)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P50Ms)):0.000} | " +
                $"{Statistics.Median(row.Ours.Select(s => s.P99Ms)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P99Ms)):0.000} |"));
        }
        Line();
        Line("AOF left in `<dir>/appendonlydir` after all runs of a policy, beside what the SETs take as RESP commands if the file is never rewritten, and the AOF rewrites each server reports (`aof_rewrites`, INFO persistence):");
        Line();
        Line("| appendfsync | SETs sent (warm-up included) | Unrewritten size | Ours AOF | Redis AOF | Ours/Redis | Ours rewrites | Redis rewrites |");
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var row in results)
        {
            Line(string.Create(inv,
                $"| {row.Fsync} | {row.SetsSent:N0} | {Bytes(row.SetsSent * AofWriteSuite.AofBytesPerSet)} | {Bytes(row.OursDisk?.Bytes)} | {Bytes(row.RedisDisk?.Bytes)} | " +
                $"{Ratio(row.OursDisk?.Bytes, row.RedisDisk?.Bytes)} | {Count(row.OursDisk?.Rewrites)} | {Count(row.RedisDisk?.Rewrites)} |"));
        }
        Line();
        Line(string.Create(inv, $"A SET from redis-benchmark is {AofWriteSuite.AofBytesPerSet} bytes of AOF. Redis rewrites its AOF whenever it has grown 100% past the last rewrite and is over 64 MB (its defaults, `auto-aof-rewrite-percentage 100`, `auto-aof-rewrite-min-size 64mb`); after a rewrite the files hold the live keys (at most {BenchmarkOptions.KeySpace:N0}) plus what came after, so sizes match the unrewritten figure only for a server that did not rewrite."));
    }

    private static void AofLoad(StringBuilder md, BenchmarkOptions options, AofLoadResult result)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        Line();
        Line(string.Create(inv, $"### AOF load: {Bytes(result.Bytes)}, {result.Keys:N0} keys"));
        Line();
        Line(string.Create(inv, $"One AOF in Redis 7's multi-part layout, generated in {result.GenerationTime.TotalSeconds:0.0} s: `appendonlydir/{AofGenerator.ManifestName}` listing `{AofGenerator.BaseName}` (type b) and an empty `{AofGenerator.IncrName}` (type i). ") +
             string.Create(inv, $"The base file is RESP commands: `SELECT 0`, then `SET key:<n> <value>` for n = 0..{result.Keys - 1:N0}, values of {AofGenerator.MinValueLength}-{AofGenerator.MaxValueLength} printable bytes from a PRNG seeded with {AofGenerator.Seed}, ") +
             string.Create(inv, $"{result.KeysWithExpiry:N0} of them (1 in {AofGenerator.ExpiryEvery}) with `PXAT {AofGenerator.ExpireAtMs}`. `redis-check-aof` passed on its manifest."));
        Line();
        Line("Each round copies it to a fresh `--dir` and starts each server on the copy, one at a time (the other is stopped, so they never hold the data set together):");
        Line();
        Line($"    {result.OursCommandLine}");
        Line($"    {result.RedisCommandLine}");
        Line();
        Line(string.Create(inv, $"Ready: wall time from just before the process starts until PING answers `+PONG` (not `-LOADING`) and `DBSIZE` is {result.Keys:N0}, polled every 10 ms. ") +
             string.Create(inv, $"Logged: the server's own `DB loaded from append only file: <seconds>` line. {options.Rounds} round(s), ours then redis in each; medians."));
        Line();
        Line("| | Ours | Redis | Ours/Redis |");
        Line("| --- | ---: | ---: | ---: |");
        // A server that answered without the data has a start-up time, not a load time: no ratio, no rate.
        bool oursLoaded = result.Ours.All(s => s.Complete), redisLoaded = result.Redis.All(s => s.Complete);
        double oursReady = Statistics.Median(result.Ours.Select(s => s.UntilReady.TotalSeconds));
        double redisReady = Statistics.Median(result.Redis.Select(s => s.UntilReady.TotalSeconds));
        string readyRatio = oursLoaded && redisLoaded ? (oursReady / redisReady).ToString("0.00", inv) : "n/a";
        Line(string.Create(inv, $"| Start until ready | {oursReady:0.000} s{(oursLoaded ? "" : " (without the data)")} | {redisReady:0.000} s{(redisLoaded ? "" : " (without the data)")} | {readyRatio} |"));
        double? oursLogged = MedianOrNull(result.Ours.Select(s => s.LoggedSeconds));
        double? redisLogged = MedianOrNull(result.Redis.Select(s => s.LoggedSeconds));
        Line($"| Logged load time | {Seconds(oursLogged)} | {Seconds(redisLogged)} | {(oursLogged is { } o && redisLogged is { } r && r > 0 ? (o / r).ToString("0.00", inv) : "n/a")} |");
        Line(string.Create(inv, $"| Keys after load (DBSIZE, last round) | {result.Ours[^1].KeysLoaded:N0} | {result.Redis[^1].KeysLoaded:N0} | |"));
        string Rate(bool loaded, double seconds) => loaded ? Bytes((long)(result.Bytes / seconds)) + "/s" : "n/a";
        Line($"| Load rate (AOF bytes / ready time) | {Rate(oursLoaded, oursReady)} | {Rate(redisLoaded, redisReady)} | |");
        foreach (var (name, samples) in new[] { ("Ours", result.Ours), ("Redis", result.Redis) })
        {
            int incomplete = samples.Count(s => !s.Complete);
            if (incomplete > 0)
            {
                Line();
                Line(string.Create(inv, $"{name}: in {incomplete} of {samples.Count} round(s) the server answered PING but DBSIZE stayed at {samples.First(s => !s.Complete).KeysLoaded:N0} instead of {result.Keys:N0}: it did not load the AOF, so its ready time is plain start-up, not a load time."));
            }
            if (samples.Any(s => s.LoggedSeconds is null))
            {
                Line();
                Line($"{name}: no `DB loaded from append only file` line in its output in {samples.Count(s => s.LoggedSeconds is null)} of {samples.Count} round(s); the logged figure is the median of the others (n/a when none).");
            }
        }
    }

    private static void Diagnostics(StringBuilder md, BenchmarkOptions options, DiagnosticsSuiteResult result)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        static string Settings(IReadOnlyDictionary<string, string> settings) => string.Join(", ", settings.Select(s => $"`{s.Key} {s.Value}`"));
        Line();
        Line("### Diagnostics cost: as shipped against switched off");
        Line();
        Line($"The switchable diagnostics (per-command latency histograms, the 1 Hz sampler and so the history) compared two ways, with redis-server as the reference: " +
             $"**same process**, our shipped server running each load once as shipped and once right after `CONFIG SET` turned them off (`{string.Join(' ', DiagnosticsSuite.Switches.Select(s => s.Name + " " + s.Off))}`, on again after the run), " +
             "so the pair differs in nothing but the switches; and **two processes**, a second server started with them off, which is what an operator who turns them off gets " +
             "(it also differs in heap layout, thread placement and JIT decisions, a few percent either way from one process to the next):");
        Line();
        Line($"    {result.ShippedCommandLine}");
        Line($"    {result.OffCommandLine}");
        Line($"    {result.RedisCommandLine}");
        Line();
        Line($"Read back with CONFIG GET: shipped {Settings(result.ShippedSettings)}; off {Settings(result.OffSettings)}; the switched-off runs read back `no` after their CONFIG SET. " +
             "On in all, having no switch: the per-thread in-flight slots, the per-thread network and per-command counters, and the HTTP listener (nobody calls the off server's).");
        Line();
        if (result.Watched)
            Line($"**The shipped figures include the cost of being watched:** for the whole of every shipped run the harness GETs `{MonitoringScraper.MetricsPath}` and `{MonitoringScraper.HistoryPath}` " +
                 "from that server's HTTP port once a second, as a Prometheus scrape and a live one-minute chart would, reading every response to its end over keep-alive connections. " +
                 "The scraper runs in the harness, on the same cores as the servers and redis-benchmark. The switched-off and off runs are not scraped.");
        else
            Line("**Unwatched (`--diagnostics-unwatched`):** no run is scraped, so the shipped figures are the switches' cost alone (latency tracking, the sampler and its history); the warm-up and the idle measurement still scrape.");
        Line();
        Line(string.Create(inv, $"Load: `redis-benchmark -t <tests> -d {BenchmarkOptions.DataSize} -r {BenchmarkOptions.KeySpace} -c {BenchmarkOptions.Clients} -n <requests per test> -P <pipeline> --csv`; ") +
             string.Create(inv, $"{options.Rounds} round(s) after an unmeasured warm-up (a fifth of every load, the shipped server scraped). Each round runs every load in the four configurations back to back, ") +
             $"the order rotating from round to round ({string.Join(", ", DiagnosticsSuite.Configurations)}; then starting one further along; ...), so drift on the shared machine falls on all alike. " +
             "The mixed load is one redis-benchmark run of " + string.Join(", ", DiagnosticsSuite.MixedTests.Select(t => t.ToUpperInvariant())) +
             " (MSET with 10 keys), one after the other; its rate is all its requests over the sum of their run times, and redis-benchmark gives no latency for it as a whole. Figures are medians over the rounds; " +
             "a per-round ratio compares the two runs of one round, seconds apart.");
        Line();
        Line(string.Create(inv, $"| Load | Pipeline | Requests | Shipped rps | Switched-off rps | **Shipped/Switched-off** (same process) | per round: median (range) | ≥ {DiagnosticsSuite.ThroughputTarget:0.00} | Off rps | Shipped/Off (two processes) per round: median (range) | Redis rps | Shipped/Redis | p99 ms shipped / switched-off / off / redis |"));
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: |");
        int throughputMet = 0, cpuMet = 0;
        foreach (var row in result.Loads)
        {
            double shipped = Statistics.Median(row.Shipped.Select(s => s.RequestsPerSecond));
            double switchedOff = Statistics.Median(row.SwitchedOff.Select(s => s.RequestsPerSecond));
            double off = Statistics.Median(row.Off.Select(s => s.RequestsPerSecond));
            double redis = Statistics.Median(row.Redis.Select(s => s.RequestsPerSecond));
            double ratio = shipped / switchedOff;
            bool met = ratio >= DiagnosticsSuite.ThroughputTarget;
            if (met)
                throughputMet++;
            string p99 = row.Load.IsMixed
                ? "n/a"
                : string.Join(" / ", DiagnosticsSuite.Configurations.Select(c => Statistics.Median(row.SamplesOf(c).Select(s => s.P99Ms!.Value)).ToString("0.000", inv)));
            Line(string.Create(inv,
                $"| {LoadName(row.Load)} | {row.Load.Pipeline} | {LoadRequests(row.Load)} | {shipped:N0} | {switchedOff:N0} | **{ratio:0.000}** | {PairedRatios(row.Shipped, row.SwitchedOff, s => s.RequestsPerSecond)} | {(met ? "yes" : "no")} | " +
                $"{off:N0} | {PairedRatios(row.Shipped, row.Off, s => s.RequestsPerSecond)} | {redis:N0} | {shipped / redis:0.00} | {p99} |"));
        }
        Line();
        Line("CPU time per request: the server process's utime + stime (`/proc/<pid>/stat`, all threads, in 10 ms ticks) read just before and just after each redis-benchmark run, divided by the requests of the run. " +
             "It counts everything the server did meanwhile (the shipped runs' sampler and the scrapes they answered included) and, unlike requests per second, not the time it waited for a core. " +
             string.Create(inv, $"A ratio above 1 is the extra CPU the diagnostics take per request; the throughput target of {DiagnosticsSuite.ThroughputTarget:0.00} corresponds to at most {1 / DiagnosticsSuite.ThroughputTarget:0.000}."));
        Line();
        Line(string.Create(inv, $"| Load | Pipeline | Shipped µs/req | Switched-off µs/req | **Shipped/Switched-off** | per round: median (range) | ≤ {1 / DiagnosticsSuite.ThroughputTarget:0.000} | Off µs/req | Shipped/Off per round: median (range) | Redis µs/req | Shipped/Redis |"));
        Line("| --- | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: |");
        foreach (var row in result.Loads)
        {
            double shipped = Statistics.Median(row.Shipped.Select(s => s.CpuMicrosPerRequest));
            double switchedOff = Statistics.Median(row.SwitchedOff.Select(s => s.CpuMicrosPerRequest));
            double off = Statistics.Median(row.Off.Select(s => s.CpuMicrosPerRequest));
            double redis = Statistics.Median(row.Redis.Select(s => s.CpuMicrosPerRequest));
            double ratio = shipped / switchedOff;
            bool met = ratio <= 1 / DiagnosticsSuite.ThroughputTarget;
            if (met)
                cpuMet++;
            Line(string.Create(inv,
                $"| {LoadName(row.Load)} | {row.Load.Pipeline} | {shipped:0.000} | {switchedOff:0.000} | **{ratio:0.000}** | {PairedRatios(row.Shipped, row.SwitchedOff, s => s.CpuMicrosPerRequest)} | {(met ? "yes" : "no")} | " +
                $"{off:0.000} | {PairedRatios(row.Shipped, row.Off, s => s.CpuMicrosPerRequest)} | {redis:0.000} | {shipped / redis:0.00} |"));
        }
        Line();
        Line(string.Create(inv, $"Target Shipped/Switched-off ≥ {DiagnosticsSuite.ThroughputTarget:0.00} in requests per second: met by {throughputMet} of {result.Loads.Count} loads; ") +
             string.Create(inv, $"CPU per request Shipped/Switched-off ≤ {1 / DiagnosticsSuite.ThroughputTarget:0.000}: met by {cpuMet} of {result.Loads.Count}. ") +
             "Over all loads and rounds, the per-round ratios' median: " +
             string.Create(inv, $"same process {Statistics.Median(result.Loads.SelectMany(l => Ratios(l.Shipped, l.SwitchedOff, s => s.RequestsPerSecond))):0.000} in requests/s and {Statistics.Median(result.Loads.SelectMany(l => Ratios(l.Shipped, l.SwitchedOff, s => s.CpuMicrosPerRequest))):0.000} in CPU/request; ") +
             string.Create(inv, $"two processes {Statistics.Median(result.Loads.SelectMany(l => Ratios(l.Shipped, l.Off, s => s.RequestsPerSecond))):0.000} and {Statistics.Median(result.Loads.SelectMany(l => Ratios(l.Shipped, l.Off, s => s.CpuMicrosPerRequest))):0.000}."));
        Line();
        Line("Noise: round-to-round spread, (max − min) / median per load, lowest to highest over the loads: " +
             string.Join("; ", DiagnosticsSuite.Configurations.Select(c =>
                 $"{c} {Spread(result.Loads.Select(l => l.SamplesOf(c).Select(s => s.RequestsPerSecond)))} in requests/s, {Spread(result.Loads.Select(l => l.SamplesOf(c).Select(s => s.CpuMicrosPerRequest)))} in CPU/request")) +
             $". Load average (`/proc/loadavg`, 1/5/15 min) {result.LoadAverageBefore} before the suite, {result.LoadAverageAfter} after.");
        Line();
        var idle = result.Idle;
        Line(string.Create(inv, $"Fixed costs, with no load (after the rounds, when the JIT is done and the history's minute is full): CPU time per second of wall time over {idle.Seconds:0} s, in ms (thousandths of a core), ") +
             "the two servers side by side unwatched, then the shipped one alone while scraped as above:");
        Line();
        Line("| Off | Shipped | Shipped, scraped |");
        Line("| ---: | ---: | ---: |");
        Line(string.Create(inv, $"| {idle.OffMillisPerSecond:0.0} ms/s | {idle.ShippedMillisPerSecond:0.0} ms/s | {idle.ShippedScrapedMillisPerSecond:0.0} ms/s |"));
        Line();
        if (!result.Watched)
            return;
        Line("Scrapes of the shipped server during its measured runs:");
        Line();
        Line("| Endpoint | Answered | Failed | Median body | Largest body | Median time | Slowest |");
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var tally in result.Scrapes)
        {
            Line(string.Create(inv,
                $"| `{tally.Path}` | {tally.Succeeded:N0} | {tally.Failed:N0} | {Statistics.Median(tally.Bytes) / 1024:N1} KiB | {tally.Bytes.Max() / 1024:N1} KiB | " +
                $"{Statistics.Median(tally.Milliseconds):0.0} ms | {tally.Milliseconds.Max():0.0} ms |"));
        }
    }

    private static void Studio(StringBuilder md, BenchmarkOptions options, StudioSuiteResult result)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        Line();
        Line("### Studio cost: dashboards open against none");
        Line();
        Line(string.Create(inv, $"Our server (`{result.OursCommandLine}`) under redis-benchmark with {result.Tabs} windows of a real headless chromium {result.BrowserVersion} on the studio's dashboard (ten live charts, figures and findings refreshed every second), ") +
             $"against the same server with none open, and redis-server (`{result.RedisCommandLine}`) as the reference. The windows open before each run with them and close after it; " +
             string.Create(inv, $"the load starts {StudioSuite.SettleMillis / 1000} s after every chart drew, so page loads are not what is measured. The browser runs on the same two cores as the server and redis-benchmark, so its drawing competes with both. ") +
             string.Create(inv, $"Load: `redis-benchmark -t <test> -d {BenchmarkOptions.DataSize} -r {BenchmarkOptions.KeySpace} -c {BenchmarkOptions.Clients} -n <requests> -P <pipeline>`; {options.Rounds} round(s) after a warm-up, the three configurations rotating; medians."));
        Line();
        Line(string.Create(inv, $"| Load | Pipeline | Requests | No tabs rps | {result.Tabs} tabs rps | **Tabs/No tabs** | per round: median (range) | ≥ {StudioSuite.ThroughputTarget:0.00} | CPU µs/req no tabs / tabs | Redis rps | Tabs/Redis | Browser main thread per window, ms/s | Whole browser, ms/s (share of {Environment.ProcessorCount} cores) |"));
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: |");
        int met = 0;
        foreach (var row in result.Loads)
        {
            double none = Statistics.Median(row.NoTabs.Select(s => s.RequestsPerSecond));
            double tabs = Statistics.Median(row.WithTabs.Select(s => s.RequestsPerSecond));
            double redis = Statistics.Median(row.Redis.Select(s => s.RequestsPerSecond));
            double ratio = tabs / none;
            if (ratio >= StudioSuite.ThroughputTarget)
                met++;
            Line(string.Create(inv,
                $"| {row.Load.Name} | {row.Load.Pipeline} | {row.Load.Requests:N0} | {none:N0} | {tabs:N0} | **{ratio:0.000}** | {PairedRatios(row.WithTabs, row.NoTabs, s => s.RequestsPerSecond)} | {(ratio >= StudioSuite.ThroughputTarget ? "yes" : "no")} | ") +
                string.Create(inv, $"{Statistics.Median(row.NoTabs.Select(s => s.CpuMicrosPerRequest)):0.000} / {Statistics.Median(row.WithTabs.Select(s => s.CpuMicrosPerRequest)):0.000} | {redis:N0} | {tabs / redis:0.00} | {Statistics.Median(row.BrowserUnderLoad.Select(c => c.TaskMillisPerSecond)):0.0} | {BrowserShare(Statistics.Median(row.BrowserCpuUnderLoad))} |"));
        }
        Line();
        Line(string.Create(inv, $"Target Tabs/No tabs ≥ {StudioSuite.ThroughputTarget:0.00} in requests per second: met by {met} of {result.Loads.Count} loads. ") +
             string.Create(inv, $"Over all loads and rounds, the per-round ratios' median: {Statistics.Median(result.Loads.SelectMany(l => Ratios(l.WithTabs, l.NoTabs, s => s.RequestsPerSecond))):0.000}."));
        Line();
        Line("The whole browser is chromedriver and every process it started (browser, one renderer per window, GPU, utility), utime + stime from /proc over the run: CPU the server and redis-benchmark could not have, which the server itself does not spend. " +
             "On a production host the browser runs on the operator's machine, not the server's; the server's own cost is its CPU per request with and without the tabs.");
        Line();
        Line(string.Create(inv, $"With no load, over {result.IdleSeconds:0} s: our server used {result.IdleServerNoTabsMillisPerSecond:0.0} ms of CPU per second with no dashboard open and {result.IdleServerMillisPerSecond:0.0} ms/s with {result.Tabs} open; the whole browser {BrowserShare(result.IdleBrowserCpuMillisPerSecond)}. ") +
             "Each window's renderer main thread (Chrome's Performance domain: TaskDuration, ScriptDuration, LayoutDuration + RecalcStyleDuration), in ms per second of wall time:");
        Line();
        Line("| Window | Main thread busy | Script | Layout and style |");
        Line("| ---: | ---: | ---: | ---: |");
        for (int i = 0; i < result.IdleBrowser.Count; i++)
        {
            var cost = result.IdleBrowser[i];
            Line(string.Create(inv, $"| {i + 1} | {cost.TaskMillisPerSecond:0.0} ms/s | {cost.ScriptMillisPerSecond:0.0} ms/s | {cost.LayoutAndStyleMillisPerSecond:0.0} ms/s |"));
        }
    }

    private static void Monitor(StringBuilder md, BenchmarkOptions options, MonitorSuiteResult result)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        Line();
        Line("### Monitor: cost and capacity");
        Line();
        Line($"Our server (`{result.OursCommandLine}`) under redis-benchmark with the monitor attached (`Diagnostics.Monitor --pid`, as root: every I/O system call of the server traced, enter and exit, plus its disk's block requests, pushed once a second) against the same server alone, and redis-server (`{result.RedisCommandLine}`) as the reference. " +
             "The monitor attaches before each attached run and leaves after it. Events/s are the syscall tracepoint records the monitor read and decoded per second of the run; dropped counts every event lost anywhere (kernel ring-buffer overruns, pages with missed events, unpaired enters or exits, batches not delivered). " +
             string.Create(inv, $"Load: `redis-benchmark -t <test> -d {BenchmarkOptions.DataSize} -r {BenchmarkOptions.KeySpace} -c {BenchmarkOptions.Clients} -n <requests> -P <pipeline>`; {options.Rounds} round(s) after a warm-up, the three configurations rotating; medians."));
        Line();
        Line(string.Create(inv, $"| Load | Pipeline | Requests | Alone rps | Attached rps | **Attached/Alone** | per round: median (range) | ≥ {MonitorSuite.ThroughputTarget:0.00} | CPU µs/req alone / attached | Events/s (median, max) | Dropped (all runs) | Monitor CPU ms/s | Redis rps | Attached/Redis |"));
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var row in result.Loads)
        {
            double alone = Statistics.Median(row.Detached.Select(s => s.RequestsPerSecond));
            double attached = Statistics.Median(row.Attached.Select(s => s.RequestsPerSecond));
            double redis = Statistics.Median(row.Redis.Select(s => s.RequestsPerSecond));
            double ratio = attached / alone;
            Line(string.Create(inv,
                $"| {row.Load.Name} | {row.Load.Pipeline} | {row.Load.Requests:N0} | {alone:N0} | {attached:N0} | **{ratio:0.000}** | {PairedRatios(row.Attached, row.Detached, s => s.RequestsPerSecond)} | {(ratio >= MonitorSuite.ThroughputTarget ? "yes" : "no")} | ") +
                string.Create(inv, $"{Statistics.Median(row.Detached.Select(s => s.CpuMicrosPerRequest)):0.000} / {Statistics.Median(row.Attached.Select(s => s.CpuMicrosPerRequest)):0.000} | {Statistics.Median(row.EventsPerSecond):N0} ({row.EventsPerSecond.Max():N0}) | {row.Dropped.Sum():N0} | {Statistics.Median(row.MonitorCpuMillisPerSecond):0} | {redis:N0} | {attached / redis:0.00} |"));
        }
        var clean = result.Loads.SelectMany(l => l.EventsPerSecond.Zip(l.Dropped)).Where(p => p.Second == 0).Select(p => p.First).ToList();
        Line();
        Line(string.Create(inv, $"Highest events/s sustained by a run with no event dropped: {(clean.Count > 0 ? clean.Max().ToString("N0", inv) : "none")} (target ≥ {MonitorSuite.EventsTarget:N0}). ") +
             string.Create(inv, $"Over all loads and rounds, the per-round Attached/Alone ratios' median: {Statistics.Median(result.Loads.SelectMany(l => Ratios(l.Attached, l.Detached, s => s.RequestsPerSecond))):0.000} (target ≥ {MonitorSuite.ThroughputTarget:0.00})."));
    }

    private static void Scripts(StringBuilder md, BenchmarkOptions options, ScriptSuiteResult result)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        Line();
        Line("### Scripts: EVALSHA of a small read and write script");
        Line();
        if (result.GarnetCommandLine is { } garnetLine)
            Line($"Our server (`{result.OursCommandLine}`), redis-server (`{result.RedisCommandLine}`) and Garnet (`{garnetLine}`) side by side. Each script was loaded with `SCRIPT LOAD` on every server (same SHA1 on all):");
        else
            Line($"Our server (`{result.OursCommandLine}`) and redis-server (`{result.RedisCommandLine}`) side by side. Each script was loaded with `SCRIPT LOAD` on both servers (same SHA1 on both):");
        Line();
        foreach (var (body, digest) in result.Digests)
            Line($"    {digest}  {body}");
        Line();
        Line(string.Create(inv, $"Load: `redis-benchmark -r {ScriptSuite.KeySpace} -c {BenchmarkOptions.Clients} -n <requests> -P <pipeline> --csv EVALSHA <sha> 1 <key>`, with the read script on `{ScriptSuite.ReadKeys}` ") +
             string.Create(inv, $"(filled first by {ScriptSuite.FillRequests:N0} random SETs of {BenchmarkOptions.DataSize}-byte values: {result.OursKeys:N0} keys on ours, {result.RedisKeys:N0} on redis{(result.GarnetKeys is { } gk ? $", {gk:N0} on garnet" : "")}) and the write script on `{ScriptSuite.WriteKeys}`. ") +
             string.Create(inv, $"{options.Rounds} round(s) after an unmeasured warm-up, the servers alternating which goes first; medians. CPU µs/req is the server process's user + system time over the run (/proc/<pid>/stat) divided by the requests."));
        Line();
        Line("| Script | Pipeline | Requests | Ours rps | Redis rps | **Ours/Redis** | per round: median (range) | Ours CPU µs/req | Redis CPU µs/req | Ours p50 ms | Redis p50 ms | Ours p99 ms | Redis p99 ms |");
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var row in result.Loads)
        {
            double ours = Statistics.Median(row.Ours.Select(s => s.RequestsPerSecond));
            double redis = Statistics.Median(row.Redis.Select(s => s.RequestsPerSecond));
            Line(string.Create(inv,
                $"| `{row.Load.Body}` | {row.Load.Pipeline} | {row.Load.Requests:N0} | {ours:N0} | {redis:N0} | **{ours / redis:0.00}** | {PairedRatios(row.Ours, row.Redis, s => s.RequestsPerSecond)} | ") +
                string.Create(inv, $"{Statistics.Median(row.Ours.Select(s => s.CpuMicrosPerRequest)):0.00} | {Statistics.Median(row.Redis.Select(s => s.CpuMicrosPerRequest)):0.00} | ") +
                string.Create(inv, $"{Statistics.Median(row.Ours.Select(s => s.P50Ms!.Value)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P50Ms!.Value)):0.000} | ") +
                string.Create(inv, $"{Statistics.Median(row.Ours.Select(s => s.P99Ms!.Value)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P99Ms!.Value)):0.000} |"));
        }
        if (result.Loads.Any(r => r.Garnet.Count > 0))
        {
            Line();
            Line("Garnet in the same rounds (the same loads; each round starts one server further along: ours, redis, garnet; then redis, garnet, ours; ...):");
            Line();
            Line("| Script | Pipeline | Garnet rps | **Ours/Garnet** | per round: median (range) | Garnet CPU µs/req | Garnet p50 ms | Garnet p99 ms |");
            Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
            foreach (var row in result.Loads)
            {
                double ours = Statistics.Median(row.Ours.Select(s => s.RequestsPerSecond));
                double garnet = Statistics.Median(row.Garnet.Select(s => s.RequestsPerSecond));
                Line(string.Create(inv,
                    $"| `{row.Load.Body}` | {row.Load.Pipeline} | {garnet:N0} | **{ours / garnet:0.00}** | {PairedRatios(row.Ours, row.Garnet, s => s.RequestsPerSecond)} | ") +
                    string.Create(inv, $"{Statistics.Median(row.Garnet.Select(s => s.CpuMicrosPerRequest)):0.00} | {Statistics.Median(row.Garnet.Select(s => s.P50Ms!.Value)):0.000} | {Statistics.Median(row.Garnet.Select(s => s.P99Ms!.Value)):0.000} |"));
            }
        }
    }

    private static void DataModel(StringBuilder md, BenchmarkOptions options, DataModelSuiteResult result)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        Line();
        Line("### Data model: streams, bitmaps, HyperLogLogs and geo sets");
        Line();
        string serverArgs = options.ServerArgs.Count > 0 ? $" --server-args \"{string.Join(' ', options.ServerArgs)}\"" : "";
        Line(string.Create(inv, $"Reproduce: `dotnet run -c Release --project tests/Diagnostics.Benchmarks -- --suites datamodel --rounds {options.Rounds} --datamodel-requests {options.DataModelRequests} --datamodel-stream-entries {options.DataModelStreamEntries}{serverArgs}`."));
        Line();
        Line($"Our server (`{result.OursCommandLine}`) and redis-server (`{result.RedisCommandLine}`) side by side, each filled first with the same data (not measured):");
        Line();
        foreach (string fill in result.Fills)
            Line($"- {fill}");
        Line();
        Line(string.Create(inv, $"Load: `redis-benchmark -r {DataModelSuite.KeySpace} -c {BenchmarkOptions.Clients} -n <requests> -P <pipeline> --csv <command>`; redis-benchmark puts a random number below {DataModelSuite.KeySpace}, as 12 zero-padded digits, in place of every `__rand_int__`, each drawn on its own. ") +
             string.Create(inv, $"{options.Rounds} round(s) after an unmeasured warm-up (a fifth of every load), the servers alternating which goes first; medians. CPU µs/req is the server process's user + system time over the run (/proc/<pid>/stat) divided by the requests; the per-round ratio is ours/redis of the two runs of one round, seconds apart."));
        Line();
        Line("| Load | Command |");
        Line("| --- | --- |");
        foreach (var load in result.Loads.Select(r => r.Load).DistinctBy(l => l.Name))
            Line($"| {load.Name} | `{load.CommandText}` |");
        Line();
        Line("Shaped by redis-benchmark's padding: both servers reject a zero-padded bit offset (`ERR bit offset is not an integer or out of range`), so SETBIT sets one fixed bit of a random bitmap (a bit the fill already set or cleared: no bitmap grows); " +
             "coordinates are `__rand_int__e-2`, 0.00 to 0.99 degrees, the square the geo sets fill (about 0.4 points per km², so a 5 km circle holds about 30 and GEOSEARCH sorts them and returns the nearest 10); " +
             "GEOADD moves one of the 100 members the fill already placed, so the sets keep their size; PFADD adds one of the 100 elements every HyperLogLog already holds (the steady state: no register changes, the odd keys stay sparse), and PFCOUNT reads one HyperLogLog.");
        Line();
        Line(string.Create(inv, $"The consumer group (XREADGROUP, XACK): the streams `q:<k>` hold {result.StreamLength:N0} entries each with explicit IDs (10^12 + j / 100)-(j % 100). ") +
             "Before every XREADGROUP run (warm-up included) the harness destroys and recreates group `g` at 0 on every stream, so each run starts from the same state on both servers and every `XREADGROUP ... >` delivers the next 10 entries of a random stream, creating their pending entries; " +
             "the streams hold the reads one stream expects in the longest run plus six standard deviations, times 10, so no read comes back short (checked: the pending count after each run is read back, 10 per call below). " +
             string.Create(inv, $"Before every XACK run the harness recreates the groups and delivers the first {DataModelSuite.AckIdsPerStream:N0} entries of every stream, exactly the {DataModelSuite.AckPairs:N0} (stream, ID) pairs `XACK q:__rand_int__ g 1__rand_int__-__rand_int__` can name, so all of them are pending when the run starts; ") +
             string.Create(inv, $"a run of R requests acks about 10^6 (1 − e^(−R/10^6)) distinct ones and the rest name an entry already acked (a lookup in the pending list that finds nothing); the acks each run made (pending before less after) are read back and shown below for both servers."));
        Line();
        Line("Each load's command was sent once by hand to both servers before the runs (with `__rand_int__` filled in as redis-benchmark does) and its reply checked; the servers' answers on the same data:");
        Line();
        foreach (string check in result.Checks)
            Line($"- {check}");
        Line();
        Line($"HyperLogLog: {result.HyperLogLogNote}.");
        Line();
        Line("| Load | Pipeline | Requests | Ours rps | Redis rps | **Ours/Redis** | per round: median (range) | Ours CPU µs/req | Redis CPU µs/req | Ours p50 ms | Redis p50 ms | Ours p99 ms | Redis p99 ms |");
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var row in result.Loads)
        {
            double ours = Statistics.Median(row.Ours.Select(s => s.RequestsPerSecond));
            double redis = Statistics.Median(row.Redis.Select(s => s.RequestsPerSecond));
            Line(string.Create(inv,
                $"| {row.Load.Name} | {row.Load.Pipeline} | {row.Load.Requests:N0} | {ours:N0} | {redis:N0} | **{ours / redis:0.00}** | {PairedRatios(row.Ours, row.Redis, s => s.RequestsPerSecond)} | ") +
                string.Create(inv, $"{Statistics.Median(row.Ours.Select(s => s.CpuMicrosPerRequest)):0.00} | {Statistics.Median(row.Redis.Select(s => s.CpuMicrosPerRequest)):0.00} | ") +
                string.Create(inv, $"{Statistics.Median(row.Ours.Select(s => s.P50Ms!.Value)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P50Ms!.Value)):0.000} | ") +
                string.Create(inv, $"{Statistics.Median(row.Ours.Select(s => s.P99Ms!.Value)):0.000} | {Statistics.Median(row.Redis.Select(s => s.P99Ms!.Value)):0.000} |"));
        }
        var groupRows = result.Loads.Where(r => r.OursEntriesPerCall.Count > 0).ToList();
        if (groupRows.Count > 0)
        {
            Line();
            Line("What the consumer group's runs did, read back from each server after every run (median, lowest–highest over the rounds): entries delivered per XREADGROUP call (10 when no read came back short), entries acked per XACK call. " +
                 "Calls are counted by the server (INFO commandstats): at -P 30 redis-benchmark sends a few pipelines beyond -n.");
            Line();
            Line("| Load | Pipeline | Requests | Ours entries/call | Redis entries/call |");
            Line("| --- | ---: | ---: | ---: | ---: |");
            static string Spread(List<double> values) => string.Create(CultureInfo.InvariantCulture, $"{Statistics.Median(values):0.000} ({values.Min():0.000}–{values.Max():0.000})");
            foreach (var row in groupRows)
                Line(string.Create(inv, $"| {row.Load.Name} | {row.Load.Pipeline} | {row.Load.Requests:N0} | {Spread(row.OursEntriesPerCall)} | {Spread(row.RedisEntriesPerCall)} |"));
        }
        Line();
        Line("#### Data model memory");
        Line();
        Line("Each data set loaded through `redis-cli --pipe` into a fresh instance of each server, one server at a time (ours stopped before redis starts); used_memory (INFO memory) and the process's RSS (/proc) read just before and just after. " +
             "RSS after includes each process's start-up footprint (the .NET runtime's is about 100 MiB, redis-server's about 10 MiB), so for the data itself compare the growths.");
        Line();
        foreach (var set in result.Memory)
            Line($"- {set.Name}: {set.Description}; read back: ours {set.OursCheck}, redis {set.RedisCheck}");
        Line();
        Line("| Data set | Ours used_memory growth | Redis used_memory growth | **Ours/Redis** | Ours RSS after | Redis RSS after | **Ours/Redis** | Ours RSS growth | Redis RSS growth | Ours/Redis | Load time ours / redis |");
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var set in result.Memory)
        {
            long? oursRssGrowth = set.Ours.ResidentAfter - set.Ours.ResidentBefore, redisRssGrowth = set.Redis.ResidentAfter - set.Redis.ResidentBefore;
            Line(string.Create(inv,
                $"| {set.Name} | {Bytes(set.Ours.UsedMemoryGrowth)} | {Bytes(set.Redis.UsedMemoryGrowth)} | **{Ratio(set.Ours.UsedMemoryGrowth, set.Redis.UsedMemoryGrowth)}** | ") +
                string.Create(inv, $"{Bytes(set.Ours.ResidentAfter)} | {Bytes(set.Redis.ResidentAfter)} | **{Ratio(set.Ours.ResidentAfter, set.Redis.ResidentAfter)}** | {Bytes(oursRssGrowth)} | {Bytes(redisRssGrowth)} | {Ratio(oursRssGrowth, redisRssGrowth)} | ") +
                string.Create(inv, $"{set.Ours.LoadTime.TotalSeconds:0.0} s / {set.Redis.LoadTime.TotalSeconds:0.0} s |"));
        }
    }

    private static string BrowserShare(double millisPerSecond)
        => string.Create(CultureInfo.InvariantCulture, $"{millisPerSecond:0} ({millisPerSecond / 10 / Environment.ProcessorCount:0.0}%)");

    private static string LoadName(DiagnosticsLoad load)
        => load.IsMixed ? $"mixed ({string.Join(", ", load.Tests.Select(t => t.ToUpperInvariant()))})" : load.Name;

    private static string LoadRequests(DiagnosticsLoad load)
        => load.IsMixed
            ? string.Create(CultureInfo.InvariantCulture, $"{load.Tests.Count} × {load.RequestsPerTest:N0}")
            : load.Requests.ToString("N0", CultureInfo.InvariantCulture);

    /// <summary>The ratio of each round's two runs (seconds apart): median, lowest and highest.</summary>
    private static string PairedRatios(List<DiagnosticsSample> a, List<DiagnosticsSample> b, Func<DiagnosticsSample, double> figure)
    {
        var ratios = Ratios(a, b, figure);
        return string.Create(CultureInfo.InvariantCulture, $"{Statistics.Median(ratios):0.000} ({ratios.Min():0.000}–{ratios.Max():0.000})");
    }

    private static double[] Ratios(List<DiagnosticsSample> a, List<DiagnosticsSample> b, Func<DiagnosticsSample, double> figure)
        => a.Zip(b, (x, y) => figure(x) / figure(y)).ToArray();

    /// <summary>(max − min) / median of each series, as the lowest and highest percentage over the series.</summary>
    private static string Spread(IEnumerable<IEnumerable<double>> series)
    {
        var spreads = series.Select(values =>
        {
            var v = values.ToArray();
            return (v.Max() - v.Min()) / Statistics.Median(v) * 100;
        }).ToArray();
        return string.Create(CultureInfo.InvariantCulture, $"{spreads.Min():0.0}–{spreads.Max():0.0}%");
    }

    private static double? MedianOrNull(IEnumerable<double?> values)
    {
        var present = values.Where(v => v is not null).Select(v => v!.Value).ToArray();
        return present.Length == 0 ? null : Statistics.Median(present);
    }

    private static string Seconds(double? seconds)
        => seconds is { } s ? string.Create(CultureInfo.InvariantCulture, $"{s:0.000} s") : "n/a";

    private static string Count(long? count)
        => count is { } c ? c.ToString("N0", CultureInfo.InvariantCulture) : "n/a";

    public static string Bytes(long? bytes)
        => bytes is { } b ? string.Create(CultureInfo.InvariantCulture, $"{b / 1048576.0:N1} MiB") : "n/a";

    public static string PerKey(long? bytes, long keys)
        => bytes is { } b ? string.Create(CultureInfo.InvariantCulture, $"{b / (double)keys:N1} B") : "n/a";

    public static string Ratio(long? ours, long? redis)
        => ours is { } o && redis is { } r && r != 0 ? string.Create(CultureInfo.InvariantCulture, $"{o / (double)r:0.00}") : "n/a";
}
