using System.Diagnostics;
using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>All rounds of one load: our server alone, with the monitor attached, and redis-server.</summary>
public sealed class MonitorResult(DiagnosticsLoad load) : LoadRounds(load, MonitorSuite.Configurations)
{
    public List<DiagnosticsSample> Detached => SamplesOf(MonitorSuite.Detached);
    public List<DiagnosticsSample> Attached => SamplesOf(MonitorSuite.Attached);
    public List<DiagnosticsSample> Redis => SamplesOf(MonitorSuite.Redis);
    /// <summary>Syscall tracepoint records the monitor decoded per second of each attached run.</summary>
    public List<double> EventsPerSecond { get; } = [];
    /// <summary>Events lost anywhere (kernel buffers, the monitor, undelivered batches) during each attached run.</summary>
    public List<long> Dropped { get; } = [];
    /// <summary>The monitor process's CPU time per second of each attached run, in ms.</summary>
    public List<double> MonitorCpuMillisPerSecond { get; } = [];
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
        var results = LoadRounds.SetAndGet(options.StudioRequests).Select(load => new MonitorResult(load)).ToList();
        using var ours = ServerUnderTest.StartOurs(options.ServerArgs);
        using var redis = ServerUnderTest.StartRedis(redisServer);
        progress.WriteLine($"monitor: ours on port {ours.Port} (HTTP {ours.HttpPort}), redis on port {redis.Port}");
        LoadRounds.WarmUp(redisBenchmark, ours.Port, results);
        LoadRounds.WarmUp(redisBenchmark, redis.Port, results);

        LoadRounds.RunRotating(options.Rounds, results, Configurations, progress, (result, configuration) =>
        {
            if (configuration != Attached)
                return (LoadRun.Measure(redisBenchmark, configuration == Redis ? redis : ours, result.Load), "");
            using var monitor = MonitorAttachment.Attach(ours);
            (long Events, long Dropped) before = default;
            TimeSpan cpuBefore = default;
            var clock = new Stopwatch();
            var sample = LoadRun.Measure(redisBenchmark, ours, result.Load,
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
            return (sample, string.Create(CultureInfo.InvariantCulture, $"  {events,10:N0} events/s  {after.Dropped - before.Dropped} dropped"));
        });
        ours.EnsureRunning();
        return new MonitorSuiteResult(results, ours.DisplayCommandLine, redis.DisplayCommandLine);
    }
}
