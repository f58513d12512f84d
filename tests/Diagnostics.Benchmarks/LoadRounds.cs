using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>
/// Every round of one load in each configuration of a suite (ours as shipped or switched off, with
/// dashboards open or the monitor attached, redis-server): what the diagnostics, studio and monitor
/// suites record per load, and how they run it.
/// </summary>
public abstract class LoadRounds
{
    private readonly Dictionary<string, List<DiagnosticsSample>> _samples = new(StringComparer.Ordinal);

    protected LoadRounds(DiagnosticsLoad load, IReadOnlyList<string> configurations)
    {
        Load = load;
        foreach (string configuration in configurations)
            _samples[configuration] = [];
    }

    public DiagnosticsLoad Load { get; }

    public List<DiagnosticsSample> SamplesOf(string configuration) => _samples[configuration];

    /// <summary>SET and GET at pipeline 1, then at pipeline 30 with ten times the requests.</summary>
    public static DiagnosticsLoad[] SetAndGet(long requests) =>
    [
        new("SET", ["set"], 1, requests),
        new("GET", ["get"], 1, requests),
        new("SET", ["set"], 30, requests * 10),
        new("GET", ["get"], 30, requests * 10),
    ];

    /// <summary>
    /// An unmeasured fifth of every load (at least 1,000 requests a test) on one server: the JIT
    /// reaches its optimized tier and every key space holds keys before the first measured GET.
    /// </summary>
    public static void WarmUp(string redisBenchmark, int port, IEnumerable<LoadRounds> results)
    {
        foreach (var result in results)
            RedisBenchmark.RunTests(redisBenchmark, port, result.Load.Tests, result.Load.Pipeline, Math.Max(1_000, result.Load.RequestsPerTest / 5));
    }

    /// <summary>
    /// Every load in every configuration, round after round, the order rotating from round to round
    /// (each round starts one configuration further along), so drift on the shared machine lands on
    /// all alike. <paramref name="measure"/> runs one load in one configuration and returns its
    /// sample and any text for the end of its progress line; the sample is recorded here.
    /// </summary>
    public static void RunRotating<T>(int rounds, IReadOnlyList<T> results, IReadOnlyList<string> configurations, TextWriter progress,
        Func<T, string, (DiagnosticsSample Sample, string Extra)> measure) where T : LoadRounds
    {
        int width = 0;
        foreach (string configuration in configurations)
            width = Math.Max(width, configuration.Length);
        for (int round = 1; round <= rounds; round++)
        {
            foreach (var result in results)
            {
                for (int i = 0; i < configurations.Count; i++)
                {
                    string configuration = configurations[(round - 1 + i) % configurations.Count];
                    var (sample, extra) = measure(result, configuration);
                    result.SamplesOf(configuration).Add(sample);
                    progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"round {round}/{rounds}  {result.Load.Name,-5} -P {result.Load.Pipeline,-2}  {configuration.PadRight(width)} {sample.RequestsPerSecond,12:N0} rps  {sample.CpuMicrosPerRequest,7:0.000} us CPU/req{extra}"));
                }
            }
        }
    }
}
