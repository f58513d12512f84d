using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>
/// One load of the diagnostics suite: one redis-benchmark run of <see cref="Tests"/> (one after
/// the other, <see cref="RequestsPerTest"/> each) at one pipeline depth.
/// </summary>
public sealed record DiagnosticsLoad(string Name, IReadOnlyList<string> Tests, int Pipeline, long RequestsPerTest)
{
    public long Requests => Tests.Count * RequestsPerTest;
    public bool IsMixed => Tests.Count > 1;
}

/// <summary>
/// One run of a load on one server. Latencies are null for a mixed load (redis-benchmark reports
/// them per command); CPU time is the server process's, over the run.
/// </summary>
public sealed record DiagnosticsSample(double RequestsPerSecond, double? P50Ms, double? P99Ms, double CpuMicrosPerRequest);

/// <summary>All rounds of one load in the four configurations.</summary>
public sealed class DiagnosticsResult(DiagnosticsLoad load) : LoadRounds(load, DiagnosticsSuite.Configurations)
{
    public List<DiagnosticsSample> Shipped => SamplesOf(DiagnosticsSuite.Shipped);
    public List<DiagnosticsSample> SwitchedOff => SamplesOf(DiagnosticsSuite.SwitchedOff);
    public List<DiagnosticsSample> Off => SamplesOf(DiagnosticsSuite.Off);
    public List<DiagnosticsSample> Redis => SamplesOf(DiagnosticsSuite.Redis);
}

/// <summary>
/// CPU time our servers used per second of wall time with no load, in milliseconds (thousandths
/// of a core): the fixed cost of the sampler, and of answering the scrapes.
/// </summary>
public sealed record IdleCost(double Seconds, double OffMillisPerSecond, double ShippedMillisPerSecond, double ShippedScrapedMillisPerSecond);

/// <summary>What the diagnostics suite measured, with the settings each of our servers reported.</summary>
public sealed record DiagnosticsSuiteResult(
    IReadOnlyList<DiagnosticsResult> Loads, IdleCost Idle,
    string ShippedCommandLine, string OffCommandLine, string RedisCommandLine,
    IReadOnlyDictionary<string, string> ShippedSettings, IReadOnlyDictionary<string, string> OffSettings,
    IReadOnlyList<ScrapeTally> Scrapes, bool Watched,
    string LoadAverageBefore, string LoadAverageAfter);

/// <summary>
/// The cost of the always-on diagnostics, measured two ways with redis-server as the reference.
/// Same process: the shipped server runs each load once as shipped and once with the switchable
/// parts turned off by CONFIG SET just before the run (and on again after), so the pair differs in
/// nothing but the switches (not in heap layout, thread placement or JIT decisions, which differ
/// from process to process by a few percent). Two processes: a second server started with
/// <see cref="StartedOff"/>, which is what an operator who turns them off gets. Every round runs
/// every load in the four configurations back to back, the order rotating from round to round, so
/// drift on the shared machine lands on all alike. While the shipped
/// server runs a load, a <see cref="MonitoringScraper"/> watches it, so its figures include the
/// cost of being watched. Besides redis-benchmark's throughput, each run reads the server
/// process's CPU time before and after, which gives CPU time per request: steadier than
/// throughput when client and servers share two cores.
/// </summary>
public sealed class DiagnosticsSuite(BenchmarkOptions options, string redisServer, string redisBenchmark, TextWriter progress)
{
    public const string Shipped = "shipped";
    /// <summary>The shipped server's own process with the switches turned off by CONFIG SET.</summary>
    public const string SwitchedOff = "switched-off";
    public const string Off = "off";
    public const string Redis = "redis";
    /// <summary>The order of the first round; each later round starts one further along.</summary>
    public static readonly string[] Configurations = [Shipped, SwitchedOff, Off, Redis];
    /// <summary>
    /// The switchable diagnostics and their "off" values: Redis's own latency-tracking switch, our
    /// sampler's (which also stops the history growing), and the hot-key sampling.
    /// </summary>
    public static readonly (string Name, string Off)[] Switches = [("latency-tracking", "no"), ("diagnostics-sampler", "no"), ("hotkey-sample-period", "0")];
    public static readonly string[] StartedOff = [.. Switches.SelectMany(s => new[] { "--" + s.Name, s.Off })];
    /// <summary>The settings the report shows for both of our servers, read back with CONFIG GET.</summary>
    public static readonly string[] SwitchSettings = [.. Switches.Select(s => s.Name)];
    /// <summary>The redis-benchmark tests of the mixed load: the string commands our server has.</summary>
    public static readonly string[] MixedTests = ["set", "get", "incr", "mset"];
    public const int MixedPipeline = 30;
    /// <summary>The target for shipped/off requests per second.</summary>
    public const double ThroughputTarget = 0.98;
    /// <summary>How long each idle measurement lasts: 600 ticks of 10 ms, so 1.7 ms/s resolution.</summary>
    public const int IdleSeconds = 6;

    public DiagnosticsSuiteResult Run()
    {
        long requests = options.DiagnosticsRequests;
        string loadAverageBefore = LoadAverage();
        var results = LoadRounds.SetAndGet(requests).Append(new DiagnosticsLoad("mixed", MixedTests, MixedPipeline, requests))
            .Select(load => new DiagnosticsResult(load)).ToList();

        using var shipped = ServerUnderTest.StartOurs(options.ServerArgs);
        using var off = ServerUnderTest.StartOurs([.. options.ServerArgs, .. StartedOff]);
        using var redis = ServerUnderTest.StartRedis(redisServer);
        var shippedSettings = ReadSwitches(shipped);
        var offSettings = ReadSwitches(off);
        foreach (var (setting, offValue) in Switches)
        {
            if (offSettings[setting] != offValue)
                throw new HarnessException($"our server started with {string.Join(' ', StartedOff)} reports {setting} '{offSettings[setting]}', so the comparison would measure nothing");
        }
        var servers = new Dictionary<string, ServerUnderTest> { [Shipped] = shipped, [SwitchedOff] = shipped, [Off] = off, [Redis] = redis };
        int httpPort = shipped.HttpPort ?? throw new HarnessException("our server was started without an HTTP port");
        progress.WriteLine($"diagnostics: shipped on port {shipped.Port} (HTTP {httpPort}), off on port {off.Port}, redis on port {redis.Port}");

        WarmUp(results, servers, httpPort);
        using var scraper = new MonitoringScraper(httpPort);
        LoadRounds.RunRotating(options.Rounds, results, Configurations, progress, (result, configuration) =>
        {
            if (configuration == SwitchedOff)
                Switch(shipped, Switches.ToDictionary(s => s.Name, s => s.Off));
            var sample = Measure(servers[configuration], result.Load, configuration == Shipped && options.DiagnosticsWatched ? scraper : null);
            if (configuration == SwitchedOff)
                Switch(shipped, shippedSettings);
            string latency = sample.P50Ms is { } p50 && sample.P99Ms is { } p99
                ? string.Create(CultureInfo.InvariantCulture, $"  p50 {p50:0.000} ms  p99 {p99:0.000} ms")
                : "";
            return (sample, latency);
        });
        // After the rounds: the JIT has long finished with the scraped endpoints (right after the
        // warm-up it is still recompiling them, which shows as idle CPU) and the history's
        // one-minute window is full.
        var idle = MeasureIdle(shipped, off, httpPort);
        progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"diagnostics: idle CPU per second: off {idle.OffMillisPerSecond:0.0} ms, shipped {idle.ShippedMillisPerSecond:0.0} ms, shipped and scraped {idle.ShippedScrapedMillisPerSecond:0.0} ms"));
        foreach (var tally in options.DiagnosticsWatched ? scraper.Tallies : [])
        {
            if (tally.Succeeded == 0)
                throw new HarnessException($"not one scrape of {tally.Path} on our server's HTTP port {httpPort} succeeded: {tally.LastProblem}");
            if (tally.Failed > 0)
                progress.WriteLine($"note: {tally.Failed} of {tally.Failed + tally.Succeeded} scrapes of {tally.Path} failed, the last with: {tally.LastProblem}");
        }
        return new DiagnosticsSuiteResult(results, idle,
            shipped.DisplayCommandLine, off.DisplayCommandLine, redis.DisplayCommandLine,
            shippedSettings, offSettings, scraper.Tallies, options.DiagnosticsWatched, loadAverageBefore, LoadAverage());
    }

    private DiagnosticsSample Measure(ServerUnderTest server, DiagnosticsLoad load, MonitoringScraper? scraper)
        => LoadRun.Measure(redisBenchmark, server, load, scraper is null ? null : scraper.Start, scraper is null ? null : scraper.Stop);

    /// <summary>
    /// An unmeasured fifth of every load on each server (the shipped one scraped as in the measured
    /// runs): our servers' JIT reaches its optimized tier, the HTTP endpoints included, and every
    /// key space holds keys before the first measured GET.
    /// </summary>
    private void WarmUp(List<DiagnosticsResult> results, Dictionary<string, ServerUnderTest> servers, int httpPort)
    {
        progress.WriteLine("diagnostics: warm-up (not measured)...");
        using var scraper = new MonitoringScraper(httpPort);
        foreach (string configuration in (string[])[Shipped, Off, Redis])
        {
            var server = servers[configuration];
            if (configuration == Shipped)
                scraper.Start();
            LoadRounds.WarmUp(redisBenchmark, server.Port, results);
            scraper.Stop();
            server.EnsureRunning();
        }
    }

    /// <summary>
    /// Our two servers with no load: first both side by side, unwatched, for
    /// <see cref="IdleSeconds"/>; then the shipped one alone, scraped, as long again.
    /// </summary>
    private IdleCost MeasureIdle(ServerUnderTest shipped, ServerUnderTest off, int httpPort)
    {
        progress.WriteLine($"diagnostics: idle CPU, {IdleSeconds} s unwatched then {IdleSeconds} s scraped...");
        var wall = TimeSpan.FromSeconds(IdleSeconds);
        TimeSpan offBefore = off.CpuTime(), shippedBefore = shipped.CpuTime();
        Thread.Sleep(wall);
        TimeSpan offAfter = off.CpuTime(), shippedAfter = shipped.CpuTime();
        using var scraper = new MonitoringScraper(httpPort);
        TimeSpan scrapedBefore = shipped.CpuTime();
        scraper.Start();
        Thread.Sleep(wall);
        scraper.Stop();
        TimeSpan scrapedAfter = shipped.CpuTime();
        double PerSecond(TimeSpan before, TimeSpan after) => (after - before).TotalMilliseconds / IdleSeconds;
        return new IdleCost(IdleSeconds, PerSecond(offBefore, offAfter), PerSecond(shippedBefore, shippedAfter), PerSecond(scrapedBefore, scrapedAfter));
    }

    /// <summary>The 1, 5 and 15 minute load averages: how busy the shared machine was.</summary>
    private static string LoadAverage()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return "n/a";
        }
    }

    /// <summary>Sets every switch of <see cref="SwitchSettings"/> to its value in <paramref name="values"/> and reads them back.</summary>
    private static void Switch(ServerUnderTest server, IReadOnlyDictionary<string, string> values)
    {
        using var connection = server.Connect();
        foreach (string setting in SwitchSettings)
        {
            var reply = connection.Call("CONFIG", "SET", setting, values[setting]);
            if (reply.IsError)
                throw new HarnessException($"CONFIG SET {setting} {values[setting]} on our server failed: {reply.Text}");
        }
        foreach (var (setting, read) in ReadSwitches(server))
        {
            if (read != values[setting])
                throw new HarnessException($"our server reports {setting} '{read}' right after CONFIG SET {setting} {values[setting]}");
        }
    }

    private static Dictionary<string, string> ReadSwitches(ServerUnderTest server)
    {
        using var connection = server.Connect();
        var settings = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (string setting in SwitchSettings)
            settings[setting] = ServerInfo.ConfigGet(connection, setting)
                ?? throw new HarnessException($"our server does not answer CONFIG GET {setting}, which the diagnostics suite switches");
        return settings;
    }
}
