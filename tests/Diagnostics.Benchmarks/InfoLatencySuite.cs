using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>
/// What a monitoring system's INFO costs under load, ours against redis-server: while
/// redis-benchmark runs SET at -P 30 (the throughput suite's -d/-r/-c), one more client sends
/// INFO (default sections) every 10 ms and times each reply from request to last byte. Reports
/// INFO's p50/p99/max and SET's throughput per server, medians over the rounds, servers
/// alternating within each round. INFO must not hold the data path: its own latency and the SET
/// throughput beside it are both in the table.
/// </summary>
public sealed class InfoLatencySuite(BenchmarkOptions options, string redisServer, string redisBenchmark, TextWriter progress)
{
    public const int IntervalMillis = 10;

    public string Run()
    {
        var inv = CultureInfo.InvariantCulture;
        long requests = options.PipelinedRequests;
        var perServer = new Dictionary<string, List<(double P50, double P99, double Max, double Rps, int Calls)>>
        {
            [ServerUnderTest.Ours] = [],
            [ServerUnderTest.Redis] = [],
        };
        for (int round = 0; round < options.Rounds; round++)
        {
            foreach (bool oursFirst in round % 2 == 0 ? new[] { true, false } : [false, true])
            {
                using var server = oursFirst ? ServerUnderTest.StartOurs(options.ServerArgs) : ServerUnderTest.StartRedis(redisServer);
                var latencies = new List<double>();
                using var stop = new ManualResetEventSlim();
                var watcher = new Thread(() => CallInfo(server, stop, latencies)) { IsBackground = true, Name = "info watcher" };
                watcher.Start();
                var sample = RedisBenchmark.Run(redisBenchmark, server.Port, "set", 30, requests);
                stop.Set();
                watcher.Join();
                latencies.Sort();
                var row = (Percentile(latencies, 0.50), Percentile(latencies, 0.99), latencies.Count == 0 ? double.NaN : latencies[^1], sample.RequestsPerSecond, latencies.Count);
                perServer[server.Name].Add(row);
                progress.WriteLine(string.Create(inv, $"info round {round + 1} {server.Name}: INFO p50 {row.Item1:0.000} ms p99 {row.Item2:0.000} ms max {row.Item3:0.000} ms over {row.Item5} calls; SET {row.Item4:0} rps"));
            }
        }

        var md = new StringBuilder();
        md.Append("\n## INFO under load\n\n");
        md.Append(string.Create(inv, $"`redis-benchmark -t set -P 30 -n {requests}` (same -d/-r/-c as the throughput suite) while one more client sends `INFO` every {IntervalMillis} ms and times each reply (request to last byte, client side); {options.Rounds} round(s), servers alternating, medians of each round's figures. redis-benchmark and both clients share the machine's cores with the server.\n\n"));
        md.Append("| Server | INFO p50 ms | INFO p99 ms | INFO max ms | INFO calls/round | SET rps |\n| --- | --- | --- | --- | --- | --- |\n");
        foreach (var (name, rows) in perServer)
        {
            md.Append(string.Create(inv, $"| {name} | {Statistics.Median(rows.Select(r => r.P50)):0.000} | {Statistics.Median(rows.Select(r => r.P99)):0.000} | {Statistics.Median(rows.Select(r => r.Max)):0.000} | {Statistics.Median(rows.Select(r => (double)r.Calls)):0} | {Statistics.Median(rows.Select(r => r.Rps)):0} |\n"));
        }
        return md.ToString();
    }

    private static void CallInfo(ServerUnderTest server, ManualResetEventSlim stop, List<double> latencies)
    {
        using var connection = server.Connect();
        while (!stop.Wait(IntervalMillis))
        {
            long started = Stopwatch.GetTimestamp();
            var reply = connection.Call("INFO");
            if (reply.IsError)
                throw new HarnessException($"{server.Name} answered INFO with {reply.Text}");
            latencies.Add(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
        }
    }

    private static double Percentile(List<double> sorted, double p)
        => sorted.Count == 0 ? double.NaN : sorted[Math.Min(sorted.Count - 1, (int)Math.Ceiling(p * sorted.Count) - 1)];
}
