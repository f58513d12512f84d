namespace Diagnostics.Benchmarks;

/// <summary>One measured redis-benchmark run of a load, as the diagnostics and studio suites take them.</summary>
public static class LoadRun
{
    /// <summary>
    /// Runs <paramref name="load"/> with the server's CPU time read just before and just after;
    /// <paramref name="started"/> and <paramref name="stopping"/> bracket exactly the run (a scraper
    /// watching it, browser metrics read around it).
    /// </summary>
    public static DiagnosticsSample Measure(string redisBenchmark, ServerUnderTest server, DiagnosticsLoad load, Action? started = null, Action? stopping = null)
    {
        TimeSpan cpuBefore = server.CpuTime();
        started?.Invoke();
        List<BenchmarkSample> samples;
        try
        {
            samples = RedisBenchmark.RunTests(redisBenchmark, server.Port, load.Tests, load.Pipeline, load.RequestsPerTest);
        }
        finally
        {
            stopping?.Invoke();
        }
        TimeSpan cpuAfter = server.CpuTime();
        server.EnsureRunning();
        double cpuMicrosPerRequest = (cpuAfter - cpuBefore).TotalMicroseconds / load.Requests;
        if (!load.IsMixed)
            return new DiagnosticsSample(samples[0].RequestsPerSecond, samples[0].P50Ms, samples[0].P99Ms, cpuMicrosPerRequest);
        // redis-benchmark runs the tests one after the other: the load's rate is all its requests
        // over the sum of the tests' run times.
        double seconds = 0;
        foreach (var sample in samples)
            seconds += load.RequestsPerTest / sample.RequestsPerSecond;
        return new DiagnosticsSample(load.Requests / seconds, null, null, cpuMicrosPerRequest);
    }
}
