using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>All rounds of one redis-benchmark test at one pipeline depth, for both servers.</summary>
public sealed class ThroughputResult(string test, int pipeline, long requests)
{
    public string Test { get; } = test;
    public int Pipeline { get; } = pipeline;
    public long Requests { get; } = requests;
    public List<BenchmarkSample> Ours { get; } = [];
    public List<BenchmarkSample> Redis { get; } = [];
    /// <summary>Garnet's samples, one per round; empty without --garnet.</summary>
    public List<BenchmarkSample> Garnet { get; } = [];
    /// <summary>Managed bytes allocated per operation by our server, one per round; empty when INFO lacks the field.</summary>
    public List<double> OursBytesPerOperation { get; } = [];
}

/// <summary>
/// The throughput comparison: both servers (with --garnet, all three) run side by side; every test
/// and pipeline depth runs R rounds, each round ours then redis (then garnet), so machine noise
/// (other processes, thermal, page cache) lands on all alike. Medians are reported.
/// </summary>
public sealed class ThroughputSuite(BenchmarkOptions options, string redisBenchmark, TextWriter progress)
{
    public List<ThroughputResult> Run(ServerUnderTest ours, ServerUnderTest redis, ServerUnderTest? garnet, AllocationProbe? probe)
    {
        ServerUnderTest[] servers = garnet is null ? [ours, redis] : [ours, redis, garnet];
        var results = new List<ThroughputResult>();
        foreach (int pipeline in BenchmarkOptions.Pipelines)
            foreach (string test in options.Tests)
                results.Add(new ThroughputResult(test, pipeline, options.RequestsFor(pipeline)));

        WarmUp(servers);
        for (int round = 1; round <= options.Rounds; round++)
        {
            foreach (var result in results)
            {
                foreach (var server in servers)
                {
                    long before = server.IsOurs && probe is not null ? probe.Read() : 0;
                    var sample = RedisBenchmark.Run(redisBenchmark, server.Port, result.Test, result.Pipeline, result.Requests);
                    server.EnsureRunning();
                    string allocation = "";
                    if (server.IsOurs)
                    {
                        result.Ours.Add(sample);
                        if (probe is not null)
                        {
                            double perOperation = probe.PerOperation(before, probe.Read(), result.Requests);
                            result.OursBytesPerOperation.Add(perOperation);
                            allocation = string.Create(CultureInfo.InvariantCulture, $"  {perOperation:0.0} managed B/op");
                        }
                    }
                    else
                    {
                        (server.IsGarnet ? result.Garnet : result.Redis).Add(sample);
                    }
                    progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"round {round}/{options.Rounds}  {result.Test.ToUpperInvariant(),-3} -P {result.Pipeline,-2}  {server.Name,-5} {sample.RequestsPerSecond,12:N0} rps  p50 {sample.P50Ms:0.000} ms  p99 {sample.P99Ms:0.000} ms{allocation}"));
                }
            }
        }
        return results;
    }

    /// <summary>
    /// One short untimed pass per server: our server's JIT reaches its optimized tier and both
    /// key spaces hold keys, so the first measured GET is not a run of misses.
    /// </summary>
    private void WarmUp(ServerUnderTest[] servers)
    {
        progress.WriteLine("warm-up (not measured)...");
        foreach (var server in servers)
        {
            foreach (int pipeline in BenchmarkOptions.Pipelines)
            {
                long requests = Math.Max(1_000, options.RequestsFor(pipeline) / 4);
                foreach (string test in new[] { "set", "get" })
                    RedisBenchmark.Run(redisBenchmark, server.Port, test, pipeline, requests);
            }
            server.EnsureRunning();
        }
    }
}
