using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>
/// Our server on each C allocator the tracked allocator can sit on (the <c>allocator</c> setting),
/// side by side in one run with redis-server as reference: (1) redis-benchmark's
/// set,get,lpush,lpop,sadd,hset,zadd,zpopmin at -P 30 -r 100000, rounds alternating the servers,
/// medians; (2) used_memory, RSS and the allocator's figures after loading --keys 256-byte strings,
/// one fresh server at a time; (3) the tracked allocator's microbenchmark from two threads, in a
/// child process per allocator. jemalloc is started with the spare static TLS its library needs
/// when loaded after start (README, Memory allocator).
/// </summary>
public sealed class AllocatorSuite(BenchmarkOptions options, string redisServer, string redisBenchmark, string redisCli, TextWriter progress)
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;
    private static readonly string[] Tests = ["set", "get", "lpush", "lpop", "sadd", "hset", "zadd", "zpopmin"];
    private static readonly string[] Allocators = ["glibc", "jemalloc", "mimalloc"];
    private const string Redis = "redis-server";
    private const long KeySpace = 100_000;

    /// <summary>What jemalloc's library needs to be loaded after start (dlopen) under glibc.</summary>
    public static readonly IReadOnlyDictionary<string, string> JemallocEnvironment =
        new Dictionary<string, string> { ["GLIBC_TUNABLES"] = "glibc.rtld.optional_static_tls=4096" };

    public string Run()
    {
        string[] servers = [.. Allocators, Redis];
        var rps = new Dictionary<(string Server, string Test), List<double>>();
        var p99 = new Dictionary<(string Server, string Test), List<double>>();
        for (int round = 0; round < options.Rounds; round++)
        {
            // Rotate the order each round so no server always runs right after the same one.
            for (int k = 0; k < servers.Length; k++)
            {
                string server = servers[(k + round) % servers.Length];
                using var running = Start(server);
                Throughput(running.Port, options.PipelinedRequests / 10); // warm-up: JIT tiers, pools, first growth of every table
                var samples = Throughput(running.Port, options.PipelinedRequests);
                foreach (var sample in samples)
                {
                    string test = sample.Test.Split(' ')[0].ToLowerInvariant();
                    Add(rps, (server, test), sample.RequestsPerSecond);
                    Add(p99, (server, test), sample.P99Ms);
                }
                progress.WriteLine($"allocator round {round + 1} {server}: " + string.Join(", ", samples.Select(s => string.Create(Inv, $"{s.Test} {s.RequestsPerSecond:0}"))));
            }
        }

        var memory = new Dictionary<string, (long Used, long? Rss, Dictionary<string, string>? Info)>();
        foreach (string server in servers)
        {
            using var running = Start(server);
            using var connection = running.Connect();
            progress.WriteLine(string.Create(Inv, $"allocator memory: loading {options.MemoryKeys:N0} keys into {server}..."));
            MemoryComparison.Load(redisCli, running.Port, options.MemoryKeys);
            var info = ServerInfo.Read(connection, "memory");
            long used = long.Parse(info?["used_memory"] ?? "0", Inv);
            memory[server] = (used, running.ResidentBytes(), info);
            progress.WriteLine(string.Create(Inv, $"allocator memory: {server} used_memory {used / 1048576.0:0.0} MiB, RSS {running.ResidentBytes() / 1048576.0:0.0} MiB"));
        }

        var micro = new Dictionary<string, string>();
        foreach (string allocator in Allocators)
            micro[allocator] = Microbenchmark(allocator);

        var md = new StringBuilder();
        md.Append("\n## C allocators under the tracked allocator\n\n");
        md.Append(string.Create(Inv, $"Our server with `--allocator glibc|jemalloc|mimalloc` (jemalloc started with `GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096`) beside redis-server (its own jemalloc). Throughput: `redis-benchmark -t {string.Join(',', Tests)} -P 30 -r {KeySpace} -n {options.PipelinedRequests} -c {BenchmarkOptions.Clients}`, a fresh server per run warmed by a tenth of the load first, {options.Rounds} round(s) in rotating order; medians, requests per second (p99 ms).\n\n"));
        md.Append("| Test | " + string.Join(" | ", servers) + " |\n|" + string.Concat(Enumerable.Repeat(" --- |", servers.Length + 1)) + "\n");
        foreach (string test in Tests)
        {
            md.Append("| ").Append(test.ToUpperInvariant());
            foreach (string server in servers)
                md.Append(string.Create(Inv, $" | {Statistics.Median(rps[(server, test)]):0} ({Statistics.Median(p99[(server, test)]):0.00})"));
            md.Append(" |\n");
        }
        md.Append(string.Create(Inv, $"\nMemory after loading {options.MemoryKeys:N0} keys of 256 bytes (`redis-cli --pipe`), a fresh server each:\n\n"));
        md.Append("| Server | used_memory | RSS | allocator_allocated | allocator_active | allocator_resident | allocator_frag_ratio | mem_fragmentation_ratio | mem_allocator |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        foreach (string server in servers)
        {
            var (used, rss, info) = memory[server];
            string Field(string name) => info is not null && info.TryGetValue(name, out var v) ? v : "n/a";
            md.Append(string.Create(Inv, $"| {server} | {used / 1048576.0:0.0} MiB | {(rss ?? 0) / 1048576.0:0.0} MiB | {Field("allocator_allocated")} | {Field("allocator_active")} | {Field("allocator_resident")} | {Field("allocator_frag_ratio")} | {Field("mem_fragmentation_ratio")} | {Field("mem_allocator")} |\n"));
        }
        md.Append("\nThe tracked allocator alone, two threads at once, nanoseconds per allocation and its free (16-527 bytes, batches of 64; `own`: freed by the allocating thread, `exchange`: freed by the other thread), best of 5 passes:\n\n");
        md.Append("| Allocator | own | exchange |\n| --- | --- | --- |\n");
        foreach (string allocator in Allocators)
        {
            string[] parts = micro[allocator].Split('\t');
            md.Append(parts.Length == 3 ? $"| {parts[0]} | {parts[1]} | {parts[2]} |\n" : $"| {allocator} | {micro[allocator]} | |\n");
        }
        return md.ToString();
    }

    private ServerUnderTest Start(string server) => server == Redis
        ? ServerUnderTest.StartRedis(redisServer)
        : ServerUnderTest.StartOurs([.. options.ServerArgs, "--allocator", server], environment: server == "jemalloc" ? JemallocEnvironment : null);

    private List<BenchmarkSample> Throughput(int port, long requests)
    {
        string[] arguments =
        [
            "-h", "127.0.0.1", "-p", port.ToString(Inv), "-t", string.Join(',', Tests),
            "-P", "30", "-r", KeySpace.ToString(Inv), "-n", requests.ToString(Inv),
            "-c", BenchmarkOptions.Clients.ToString(Inv), "--csv",
        ];
        var result = ExternalTools.Run(redisBenchmark, arguments, TimeSpan.FromSeconds(Math.Max(300, Tests.Length * options.PipelinedRequests / 2000)));
        if (result.ExitCode != 0)
            throw new HarnessException($"redis-benchmark {string.Join(' ', arguments)} exited with code {result.ExitCode}:\n{result.StandardError}{result.StandardOutput}");
        return RedisBenchmark.ParseCsv(result.StandardOutput);
    }

    /// <summary>Runs the microbenchmark in a child process of this harness (its dll, mode allocator-micro).</summary>
    private string Microbenchmark(string allocator)
    {
        string harness = Path.Combine(AppContext.BaseDirectory, "Diagnostics.Benchmarks.dll");
        var info = new System.Diagnostics.ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        info.ArgumentList.Add(harness);
        info.ArgumentList.Add("allocator-micro");
        info.ArgumentList.Add(allocator);
        if (allocator == "jemalloc")
            foreach (var (name, value) in JemallocEnvironment)
                info.Environment[name] = value;
        using var process = System.Diagnostics.Process.Start(info) ?? throw new HarnessException("could not start the allocator microbenchmark");
        string output = process.StandardOutput.ReadToEnd();
        string error = process.StandardError.ReadToEnd();
        process.WaitForExit();
        if (process.ExitCode != 0)
            throw new HarnessException($"allocator microbenchmark on {allocator} failed: {error}{output}");
        progress.WriteLine($"allocator microbenchmark: {output.Trim()}");
        return output.Trim();
    }

    private static void Add(Dictionary<(string, string), List<double>> into, (string, string) key, double value)
        => (into.TryGetValue(key, out var list) ? list : into[key] = []).Add(value);
}
