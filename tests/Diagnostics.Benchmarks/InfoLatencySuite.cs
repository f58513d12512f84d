using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>
/// What a monitoring system's INFO costs under load, ours against redis-server: while
/// redis-benchmark runs SET at -P 30 (the throughput suite's -d/-r/-c), one more client sends
/// INFO (default sections) every 10 ms and times each reply from request to last byte. Each
/// server is first warmed by the same load for half the requests (a monitored server has been
/// up for a while: our first seconds include the JIT's tiering and the key table's growth),
/// then its statistics are reset. Reports INFO's client-side p50/p99/max, the server's own
/// view of INFO (INFO latencystats p50/p99 and commandstats usec_per_call: the time the
/// command took inside the server, without queueing), the managed bytes each INFO allocated
/// on ours (an idle server, so nothing else allocates), and SET's throughput; medians over
/// the rounds, servers alternating within each round.
/// </summary>
public sealed class InfoLatencySuite(BenchmarkOptions options, string redisServer, string redisBenchmark, TextWriter progress)
{
    public const int IntervalMillis = 10;

    public string Run()
    {
        var inv = CultureInfo.InvariantCulture;
        long requests = options.PipelinedRequests;
        var perServer = new Dictionary<string, List<InfoRound>>
        {
            [ServerUnderTest.Ours] = [],
            [ServerUnderTest.Redis] = [],
        };
        for (int round = 0; round < options.Rounds; round++)
        {
            foreach (bool oursFirst in round % 2 == 0 ? new[] { true, false } : [false, true])
            {
                using var server = oursFirst ? ServerUnderTest.StartOurs(options.ServerArgs) : ServerUnderTest.StartRedis(redisServer);
                RunLoad(server, Math.Max(1, requests / 2));
                using (var admin = server.Connect())
                    admin.Call("CONFIG", "RESETSTAT");
                var (latencies, sample) = RunLoad(server, requests);
                latencies.Sort();
                var (serverP50, serverP99, usecPerCall) = ServerView(server);
                var row = new InfoRound(Percentile(latencies, 0.50), Percentile(latencies, 0.99), latencies.Count == 0 ? double.NaN : latencies[^1],
                    serverP50, serverP99, usecPerCall, AllocatedPerInfo(server), sample.RequestsPerSecond, latencies.Count);
                perServer[server.Name].Add(row);
                progress.WriteLine(string.Create(inv, $"info round {round + 1} {server.Name}: INFO p50 {row.P50:0.000} ms p99 {row.P99:0.000} ms max {row.Max:0.000} ms over {row.Calls} calls; in the server p50 {row.ServerP50:0} us p99 {row.ServerP99:0} us, {row.UsecPerCall:0.0} us/call, {row.BytesPerCall:0} B/call; SET {row.Rps:0} rps"));
            }
        }

        var md = new StringBuilder();
        md.Append("\n## INFO under load\n\n");
        md.Append(string.Create(inv, $"`redis-benchmark -t set -P 30 -n {requests}` (same -d/-r/-c as the throughput suite) while one more client sends `INFO` every {IntervalMillis} ms and times each reply (request to last byte, client side); each server first warmed by the same load for {Math.Max(1, requests / 2)} requests, then CONFIG RESETSTAT; {options.Rounds} round(s), servers alternating, medians of each round's figures. \"In server\" is INFO latencystats and commandstats: the command's own time, without waiting for its turn. B/INFO: managed bytes one INFO allocates (ours, measured on the idle server after the run). redis-benchmark and both clients share the machine's cores with the server.\n\n"));
        md.Append("| Server | INFO p50 ms | INFO p99 ms | INFO max ms | in server p50 us | in server p99 us | us/call | B/INFO | INFO calls/round | SET rps |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        foreach (var (name, rows) in perServer)
        {
            md.Append(string.Create(inv, $"| {name} | {Statistics.Median(rows.Select(r => r.P50)):0.000} | {Statistics.Median(rows.Select(r => r.P99)):0.000} | {Statistics.Median(rows.Select(r => r.Max)):0.000} | {Statistics.Median(rows.Select(r => r.ServerP50)):0} | {Statistics.Median(rows.Select(r => r.ServerP99)):0} | {Statistics.Median(rows.Select(r => r.UsecPerCall)):0.0} | {FormatBytes(Statistics.Median(rows.Select(r => r.BytesPerCall)))} | {Statistics.Median(rows.Select(r => (double)r.Calls)):0} | {Statistics.Median(rows.Select(r => r.Rps)):0} |\n"));
        }
        return md.ToString();
    }

    private sealed record InfoRound(double P50, double P99, double Max, double ServerP50, double ServerP99, double UsecPerCall, double BytesPerCall, double Rps, int Calls);

    /// <summary>SET at -P 30 for <paramref name="requests"/> with the INFO watcher beside it.</summary>
    private (List<double> Latencies, BenchmarkSample Sample) RunLoad(ServerUnderTest server, long requests)
    {
        var latencies = new List<double>();
        using var stop = new ManualResetEventSlim();
        var watcher = new Thread(() => CallInfo(server, stop, latencies)) { IsBackground = true, Name = "info watcher" };
        watcher.Start();
        var sample = RedisBenchmark.Run(redisBenchmark, server.Port, "set", 30, requests);
        stop.Set();
        watcher.Join();
        return (latencies, sample);
    }

    /// <summary>INFO's p50/p99 from latencystats (microseconds) and usec_per_call from commandstats, as the server measured them.</summary>
    private static (double P50, double P99, double UsecPerCall) ServerView(ServerUnderTest server)
    {
        using var connection = server.Connect();
        double p50 = double.NaN, p99 = double.NaN, perCall = double.NaN;
        if (ServerInfo.Read(connection, "latencystats") is { } latency && latency.TryGetValue("latency_percentiles_usec_info", out string? percentiles))
        {
            p50 = SubField(percentiles, "p50");
            p99 = SubField(percentiles, "p99");
        }
        if (ServerInfo.Read(connection, "commandstats") is { } commands && commands.TryGetValue("cmdstat_info", out string? stats))
            perCall = SubField(stats, "usec_per_call");
        return (p50, p99, perCall);
    }

    /// <summary>Managed bytes per INFO on our idle server (NaN for redis-server, which has no managed heap).</summary>
    private static double AllocatedPerInfo(ServerUnderTest server)
    {
        if (!server.IsOurs)
            return double.NaN;
        const int Calls = 200;
        using var connection = server.Connect();
        for (int i = 0; i < Calls; i++)
            connection.Call("INFO");
        long? before = ServerInfo.ReadInt64(connection, "memory", ServerInfo.ManagedAllocatedBytes);
        for (int i = 0; i < Calls; i++)
            connection.Call("INFO");
        long? after = ServerInfo.ReadInt64(connection, "memory", ServerInfo.ManagedAllocatedBytes);
        return before is null || after is null ? double.NaN : (after.Value - before.Value) / (double)Calls;
    }

    /// <summary>"name=value" out of a "a=1,b=2" INFO value.</summary>
    private static double SubField(string value, string name)
    {
        foreach (string part in value.Split(','))
        {
            int equals = part.IndexOf('=');
            if (equals > 0 && part.AsSpan(0, equals).SequenceEqual(name)
                && double.TryParse(part.AsSpan(equals + 1), NumberStyles.Float, CultureInfo.InvariantCulture, out double parsed))
                return parsed;
        }
        return double.NaN;
    }

    private static string FormatBytes(double bytes) => double.IsNaN(bytes) ? "n/a" : bytes.ToString("0", CultureInfo.InvariantCulture);

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
