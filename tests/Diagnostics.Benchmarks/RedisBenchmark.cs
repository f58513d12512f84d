using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>What one redis-benchmark run reported for one test.</summary>
public sealed record BenchmarkSample(string Test, double RequestsPerSecond, double AverageMs, double P50Ms, double P95Ms, double P99Ms, double MaxMs);

/// <summary>Runs redis-benchmark for one test and reads its --csv output.</summary>
public static class RedisBenchmark
{
    public static BenchmarkSample Run(string tool, int port, string test, int pipeline, long requests)
        => RunTests(tool, port, [test], pipeline, requests)[0];

    /// <summary>
    /// One redis-benchmark run of several tests (-t a,b,c: each runs <paramref name="requests"/>
    /// requests, one after the other); a sample per test, in the order given.
    /// </summary>
    public static List<BenchmarkSample> RunTests(string tool, int port, IReadOnlyList<string> tests, int pipeline, long requests, IReadOnlyList<string>? extra = null)
    {
        string[] arguments =
        [
            "-h", "127.0.0.1", "-p", port.ToString(CultureInfo.InvariantCulture),
            "-t", string.Join(',', tests), "-d", BenchmarkOptions.DataSize.ToString(CultureInfo.InvariantCulture),
            "-r", BenchmarkOptions.KeySpace.ToString(CultureInfo.InvariantCulture),
            "-c", BenchmarkOptions.Clients.ToString(CultureInfo.InvariantCulture),
            "-n", requests.ToString(CultureInfo.InvariantCulture),
            "-P", pipeline.ToString(CultureInfo.InvariantCulture),
            "--csv",
            .. extra ?? [],
        ];
        // Generous: allows 500 requests/s, where LRANGE_600 at -P 30 runs at about 900 on redis-server
        // here (and 10k/s finishes 2M SETs in under 4 minutes).
        var timeout = TimeSpan.FromSeconds(Math.Max(120, tests.Count * requests / 500));
        var result = ExternalTools.Run(tool, arguments, timeout);
        string commandLine = "redis-benchmark " + string.Join(' ', arguments);
        if (result.ExitCode != 0)
            throw new HarnessException($"{commandLine} exited with code {result.ExitCode}:\n{result.StandardError}{result.StandardOutput}");
        var samples = ParseCsv(result.StandardOutput);
        var found = new List<BenchmarkSample>(tests.Count);
        foreach (string test in tests)
        {
            // MSET's row is named "MSET (10 keys)": match on the first word.
            var sample = samples.FirstOrDefault(s => s.Test.Split(' ')[0].Equals(test, StringComparison.OrdinalIgnoreCase));
            found.Add(sample ?? throw new HarnessException($"{commandLine} printed no CSV row for {test.ToUpperInvariant()}:\n{result.StandardOutput}\n{result.StandardError}"));
        }
        return found;
    }

    /// <summary>
    /// One redis-benchmark run of an arbitrary command (its arguments after the options, e.g.
    /// EVALSHA &lt;sha&gt; 1 key:__rand_int__); redis-benchmark puts a random number below
    /// <paramref name="keySpace"/> in place of every __rand_int__. A command the server answers
    /// with an error ends redis-benchmark with exit code 1, which fails the run here.
    /// </summary>
    public static BenchmarkSample RunCommand(string tool, int port, IReadOnlyList<string> command, int pipeline, long requests, long keySpace)
    {
        string[] arguments =
        [
            "-h", "127.0.0.1", "-p", port.ToString(CultureInfo.InvariantCulture),
            "-r", keySpace.ToString(CultureInfo.InvariantCulture),
            "-c", BenchmarkOptions.Clients.ToString(CultureInfo.InvariantCulture),
            "-n", requests.ToString(CultureInfo.InvariantCulture),
            "-P", pipeline.ToString(CultureInfo.InvariantCulture),
            "--csv",
            .. command,
        ];
        var timeout = TimeSpan.FromSeconds(Math.Max(120, requests / 500));
        var result = ExternalTools.Run(tool, arguments, timeout);
        string commandLine = "redis-benchmark " + string.Join(' ', arguments.Select(a => a.Length > 40 ? a[..12] + "..." : a));
        if (result.ExitCode != 0)
            throw new HarnessException($"{commandLine} exited with code {result.ExitCode}:\n{result.StandardError}{result.StandardOutput}");
        // The row is named after the command line itself: there is one row, whatever its name.
        var samples = ParseCsv(result.StandardOutput);
        if (samples.Count != 1)
            throw new HarnessException($"{commandLine} printed {samples.Count} CSV rows where one was expected:\n{result.StandardOutput}\n{result.StandardError}");
        return samples[0];
    }

    /// <summary>
    /// Parses Redis 7.0's CSV: a header ("test","rps","avg_latency_ms","min_latency_ms",
    /// "p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms") then one row per test.
    /// Columns are found by header name, so a reordered or extended header still parses.
    /// </summary>
    public static List<BenchmarkSample> ParseCsv(string csv)
    {
        var samples = new List<BenchmarkSample>();
        Dictionary<string, int>? columns = null;
        foreach (string raw in csv.Split('\n'))
        {
            string line = raw.Trim();
            if (!line.StartsWith('"'))
                continue;
            string[] cells = line.Split(',').Select(c => c.Trim().Trim('"')).ToArray();
            if (cells[0] == "test")
            {
                columns = new Dictionary<string, int>(StringComparer.Ordinal);
                for (int i = 0; i < cells.Length; i++)
                    columns[cells[i]] = i;
                continue;
            }
            if (columns is null)
                throw new HarnessException($"redis-benchmark CSV row before its header: {line}");
            samples.Add(new BenchmarkSample(
                cells[0],
                Number(cells, columns, "rps"),
                Number(cells, columns, "avg_latency_ms"),
                Number(cells, columns, "p50_latency_ms"),
                Number(cells, columns, "p95_latency_ms"),
                Number(cells, columns, "p99_latency_ms"),
                Number(cells, columns, "max_latency_ms")));
        }
        return samples;
    }

    private static double Number(string[] cells, Dictionary<string, int> columns, string column)
    {
        if (!columns.TryGetValue(column, out int index) || index >= cells.Length)
            throw new HarnessException($"redis-benchmark CSV has no '{column}' column (header: {string.Join(',', columns.Keys)}); Redis 7.0's CSV is expected");
        return double.Parse(cells[index], NumberStyles.Float, CultureInfo.InvariantCulture);
    }
}
