using System.Diagnostics;
using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>All rounds of one load: our server alone, with the monitor attached, and redis-server.</summary>
public sealed class MonitorResult(DiagnosticsLoad load)
{
    public DiagnosticsLoad Load { get; } = load;
    public List<DiagnosticsSample> Detached { get; } = [];
    public List<DiagnosticsSample> Attached { get; } = [];
    public List<DiagnosticsSample> Redis { get; } = [];
    /// <summary>Syscall tracepoint records the monitor decoded per second of each attached run.</summary>
    public List<double> EventsPerSecond { get; } = [];
    /// <summary>Events lost anywhere (kernel buffers, the monitor, undelivered batches) during each attached run.</summary>
    public List<long> Dropped { get; } = [];
    /// <summary>The monitor process's CPU time per second of each attached run, in ms.</summary>
    public List<double> MonitorCpuMillisPerSecond { get; } = [];

    public List<DiagnosticsSample> SamplesOf(string configuration) => configuration switch
    {
        MonitorSuite.Detached => Detached,
        MonitorSuite.Attached => Attached,
        _ => Redis,
    };
}

public sealed record MonitorSuiteResult(IReadOnlyList<MonitorResult> Loads, string OursCommandLine, string RedisCommandLine);

/// <summary>
/// The cost and the capacity of the monitor: our server's throughput and CPU per request under
/// redis-benchmark with the monitor attached (every I/O system call of the server traced) against
/// none, redis-server as the reference, rotating within each round; and during the attached runs,
/// the tracepoint records the monitor decoded per second and every event lost. The monitor
/// attaches before and detaches after each attached run, so the runs without it are clean.
/// </summary>
public sealed class MonitorSuite(BenchmarkOptions options, string redisServer, string redisBenchmark, TextWriter progress)
{
    public const string Detached = "detached";
    public const string Attached = "attached";
    public const string Redis = "redis";
    public static readonly string[] Configurations = [Detached, Attached, Redis];
    /// <summary>The targets: attached/detached throughput, and events per second with no drop.</summary>
    public const double ThroughputTarget = 0.90;
    public const double EventsTarget = 200_000;

    public MonitorSuiteResult Run()
    {
        long requests = options.StudioRequests;
        var results = new List<MonitorResult>
        {
            new(new DiagnosticsLoad("SET", ["set"], 1, requests)),
            new(new DiagnosticsLoad("GET", ["get"], 1, requests)),
            new(new DiagnosticsLoad("SET", ["set"], 30, requests * 10)),
            new(new DiagnosticsLoad("GET", ["get"], 30, requests * 10)),
        };
        using var ours = ServerUnderTest.StartOurs(options.ServerArgs);
        using var redis = ServerUnderTest.StartRedis(redisServer);
        progress.WriteLine($"monitor: ours on port {ours.Port} (HTTP {ours.HttpPort}), redis on port {redis.Port}");
        foreach (var result in results)
        {
            RedisBenchmark.RunTests(redisBenchmark, ours.Port, result.Load.Tests, result.Load.Pipeline, Math.Max(1_000, result.Load.RequestsPerTest / 5));
            RedisBenchmark.RunTests(redisBenchmark, redis.Port, result.Load.Tests, result.Load.Pipeline, Math.Max(1_000, result.Load.RequestsPerTest / 5));
        }

        for (int round = 1; round <= options.Rounds; round++)
        {
            foreach (var result in results)
            {
                for (int i = 0; i < Configurations.Length; i++)
                {
                    string configuration = Configurations[(round - 1 + i) % Configurations.Length];
                    DiagnosticsSample sample;
                    string extra = "";
                    if (configuration == Attached)
                    {
                        using var monitor = MonitorAttachment.Attach(ours);
                        (long Events, long Dropped) before = default;
                        TimeSpan cpuBefore = default;
                        var clock = new Stopwatch();
                        sample = LoadRun.Measure(redisBenchmark, ours, result.Load,
                            () => { before = monitor.Counts(); cpuBefore = monitor.CpuTime(); clock.Start(); },
                            () => clock.Stop());
                        // The last second's batch arrives after the run: wait for it before counting.
                        Thread.Sleep(2500);
                        var after = monitor.Counts();
                        double seconds = clock.Elapsed.TotalSeconds;
                        double events = (after.Events - before.Events) / seconds;
                        result.EventsPerSecond.Add(events);
                        result.Dropped.Add(after.Dropped - before.Dropped);
                        result.MonitorCpuMillisPerSecond.Add((monitor.CpuTime() - cpuBefore).TotalMilliseconds / (seconds + 2.5));
                        extra = string.Create(CultureInfo.InvariantCulture, $"  {events,10:N0} events/s  {after.Dropped - before.Dropped} dropped");
                    }
                    else
                    {
                        sample = LoadRun.Measure(redisBenchmark, configuration == Redis ? redis : ours, result.Load);
                    }
                    result.SamplesOf(configuration).Add(sample);
                    progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"round {round}/{options.Rounds}  {result.Load.Name,-5} -P {result.Load.Pipeline,-2}  {configuration,-8} {sample.RequestsPerSecond,12:N0} rps  {sample.CpuMicrosPerRequest,7:0.000} us CPU/req{extra}"));
                }
            }
        }
        ours.EnsureRunning();
        return new MonitorSuiteResult(results, ours.DisplayCommandLine, redis.DisplayCommandLine);
    }
}
