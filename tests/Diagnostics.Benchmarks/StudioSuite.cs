using System.Diagnostics;
using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>All rounds of one load: our server with no studio open, with <see cref="StudioSuite.Tabs"/> dashboards open, and redis-server.</summary>
public sealed class StudioResult(DiagnosticsLoad load) : LoadRounds(load, StudioSuite.Configurations)
{
    public List<DiagnosticsSample> NoTabs => SamplesOf(StudioSuite.NoTabs);
    public List<DiagnosticsSample> WithTabs => SamplesOf(StudioSuite.WithTabs);
    public List<DiagnosticsSample> Redis => SamplesOf(StudioSuite.Redis);
    /// <summary>Every dashboard window's main-thread cost during the runs with tabs, one per window per run.</summary>
    public List<BrowserCost> BrowserUnderLoad { get; } = [];
    /// <summary>All the browser's processes' CPU time per second of wall time during each run with tabs, in ms.</summary>
    public List<double> BrowserCpuUnderLoad { get; } = [];
}

public sealed record StudioSuiteResult(
    IReadOnlyList<StudioResult> Loads, int Tabs, string BrowserVersion,
    IReadOnlyList<BrowserCost> IdleBrowser, double IdleSeconds, double IdleServerMillisPerSecond, double IdleServerNoTabsMillisPerSecond, double IdleBrowserCpuMillisPerSecond,
    string OursCommandLine, string RedisCommandLine);

/// <summary>
/// The cost of the studio: our server's throughput and CPU per request under redis-benchmark with
/// <see cref="Tabs"/> browser windows on the dashboard (every chart live) against none, redis-server
/// as the reference, the three alternating within each round in a rotating order. Then, with no
/// load, what the open dashboards cost the server and each browser window's main thread.
/// </summary>
public sealed class StudioSuite(BenchmarkOptions options, string redisServer, string redisBenchmark, TextWriter progress)
{
    public const string NoTabs = "no-tabs";
    public const string WithTabs = "tabs";
    public const string Redis = "redis";
    public static readonly string[] Configurations = [NoTabs, WithTabs, Redis];
    public const int Tabs = 3;
    /// <summary>The target for with-tabs/no-tabs requests per second.</summary>
    public const double ThroughputTarget = 0.97;
    /// <summary>After the windows open, before the load starts: their page loads are not what is measured.</summary>
    public const int SettleMillis = 3000;
    public const int IdleSeconds = 20;

    public StudioSuiteResult Run()
    {
        var results = LoadRounds.SetAndGet(options.StudioRequests).Select(load => new StudioResult(load)).ToList();
        using var ours = ServerUnderTest.StartOurs(options.ServerArgs);
        using var redis = ServerUnderTest.StartRedis(redisServer);
        int httpPort = ours.HttpPort ?? throw new HarnessException("our server was started without an HTTP port");
        using var tabs = new StudioTabs(httpPort);
        progress.WriteLine($"studio: ours on port {ours.Port} (HTTP {httpPort}), redis on port {redis.Port}, chromium {tabs.BrowserVersion}");

        // Warm-up: the JIT reaches the studio's rendering and the RESP path, every key space fills.
        tabs.Open(Tabs);
        LoadRounds.WarmUp(redisBenchmark, ours.Port, results);
        tabs.CloseAll();
        LoadRounds.WarmUp(redisBenchmark, redis.Port, results);

        LoadRounds.RunRotating(options.Rounds, results, Configurations, progress, (result, configuration) =>
        {
            if (configuration != WithTabs)
                return (LoadRun.Measure(redisBenchmark, configuration == Redis ? redis : ours, result.Load), "");
            tabs.Open(Tabs);
            Thread.Sleep(SettleMillis);
            List<(double, double, double)>? before = null, after = null;
            TimeSpan browserBefore = default, browserAfter = default;
            var clock = new Stopwatch();
            var sample = LoadRun.Measure(redisBenchmark, ours, result.Load,
                () => { before = tabs.ReadDurations(); browserBefore = tabs.BrowserCpuTime(); clock.Start(); },
                () => { clock.Stop(); browserAfter = tabs.BrowserCpuTime(); after = tabs.ReadDurations(); });
            result.BrowserUnderLoad.AddRange(StudioTabs.Costs(before!, after!, clock.Elapsed.TotalSeconds));
            result.BrowserCpuUnderLoad.Add((browserAfter - browserBefore).TotalMilliseconds / clock.Elapsed.TotalSeconds);
            tabs.CloseAll();
            return (sample, "");
        });

        progress.WriteLine($"studio: idle, {IdleSeconds} s without then with {Tabs} dashboards open...");
        TimeSpan cpu0 = ours.CpuTime();
        Thread.Sleep(TimeSpan.FromSeconds(IdleSeconds));
        TimeSpan cpu1 = ours.CpuTime();
        tabs.Open(Tabs);
        Thread.Sleep(SettleMillis);
        var idleBefore = tabs.ReadDurations();
        TimeSpan browser0 = tabs.BrowserCpuTime();
        TimeSpan cpu2 = ours.CpuTime();
        var idleClock = Stopwatch.StartNew();
        Thread.Sleep(TimeSpan.FromSeconds(IdleSeconds));
        TimeSpan browser1 = tabs.BrowserCpuTime();
        var idleAfter = tabs.ReadDurations();
        TimeSpan cpu3 = ours.CpuTime();
        double idleSeconds = idleClock.Elapsed.TotalSeconds;
        var idleBrowser = StudioTabs.Costs(idleBefore, idleAfter, idleSeconds);
        tabs.CloseAll();
        ours.EnsureRunning();
        return new StudioSuiteResult(results, Tabs, tabs.BrowserVersion, idleBrowser, idleSeconds,
            (cpu3 - cpu2).TotalMilliseconds / idleSeconds, (cpu1 - cpu0).TotalMilliseconds / IdleSeconds, (browser1 - browser0).TotalMilliseconds / idleSeconds,
            ours.DisplayCommandLine, redis.DisplayCommandLine);
    }
}
