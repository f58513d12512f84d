using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>
/// Replication, ours against redis-server, each with replicas of its own kind on this machine:
/// (1) a master's SET throughput at -P 30 with no, one and two replicas attached (in sync before
/// the run), and how far the first replica trails while it runs (the master's offset less what
/// the replica applied, INFO replication of each, sampled every 50 ms); (2) the time a full sync
/// of about <see cref="BenchmarkOptions.ReplicationSyncMegabytes"/> MB takes, from REPLICAOF to the
/// replica's offset equal to its master's. Rounds alternate the servers; medians are reported.
/// Every process shares the machine's cores: replicas take CPU the master would have had, on both
/// sides alike.
/// </summary>
public sealed class ReplicationSuite(BenchmarkOptions options, string redisServer, string redisBenchmark, TextWriter progress)
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;
    private static readonly int[] ReplicaCounts = [0, 1, 2];

    private sealed record LoadRound(double Rps, double LagMedianBytes, double LagP99Bytes, double LagMaxBytes);

    public string Run()
    {
        long requests = options.PipelinedRequests;
        var loads = new Dictionary<(string, int), List<LoadRound>>();
        var syncs = new Dictionary<string, List<double>>();
        for (int round = 0; round < options.Rounds; round++)
        {
            foreach (bool oursFirst in round % 2 == 0 ? new[] { true, false } : [false, true])
            {
                string kind = oursFirst ? ServerUnderTest.Ours : ServerUnderTest.Redis;
                foreach (int replicas in ReplicaCounts)
                {
                    var row = RunLoad(kind, replicas, requests);
                    (loads.TryGetValue((kind, replicas), out var list) ? list : loads[(kind, replicas)] = []).Add(row);
                    progress.WriteLine(string.Create(Inv, $"replication round {round + 1} {kind} with {replicas} replica(s): SET -P 30 {row.Rps:0} rps, lag median {row.LagMedianBytes:0} B p99 {row.LagP99Bytes:0} B max {row.LagMaxBytes:0} B"));
                }
                double seconds = FullSync(kind);
                (syncs.TryGetValue(kind, out var s) ? s : syncs[kind] = []).Add(seconds);
                progress.WriteLine(string.Create(Inv, $"replication round {round + 1} {kind}: full sync of {options.ReplicationSyncMegabytes} MB in {seconds:0.00} s"));
            }
        }

        var md = new StringBuilder();
        md.Append("\n## Replication\n\n");
        md.Append(string.Create(Inv, $"A master and 0, 1 or 2 replicas of the same server on this machine, in sync before each run of `redis-benchmark -t set -P 30 -n {requests} -r {BenchmarkOptions.KeySpace} -d {BenchmarkOptions.DataSize}` against the master. Each server is warmed by the same load for half the requests first. Lag: the master's `master_repl_offset` less the first replica's `slave_repl_offset` (what it applied), read one after the other every 50 ms during the run. Full sync: the master filled with about {options.ReplicationSyncMegabytes} MB (1 KB values), then REPLICAOF on a fresh replica until its offset equals the master's. {options.Rounds} round(s), servers alternating; medians.\n\n"));
        md.Append("| Replicas | ours SET rps | redis SET rps | ratio | ours lag median / p99 / max | redis lag median / p99 / max |\n| --- | --- | --- | --- | --- | --- |\n");
        foreach (int replicas in ReplicaCounts)
        {
            var ours = loads[(ServerUnderTest.Ours, replicas)];
            var redis = loads[(ServerUnderTest.Redis, replicas)];
            double oursRps = Statistics.Median(ours.Select(r => r.Rps)), redisRps = Statistics.Median(redis.Select(r => r.Rps));
            md.Append(string.Create(Inv, $"| {replicas} | {oursRps:0} | {redisRps:0} | {oursRps / redisRps:0.00} | {Lag(ours, replicas)} | {Lag(redis, replicas)} |\n"));
        }
        double oursSync = Statistics.Median(syncs[ServerUnderTest.Ours]), redisSync = Statistics.Median(syncs[ServerUnderTest.Redis]);
        md.Append(string.Create(Inv, $"\nFull sync of {options.ReplicationSyncMegabytes} MB: ours {oursSync:0.00} s, redis {redisSync:0.00} s (ratio of times {oursSync / redisSync:0.00}; lower is faster).\n"));
        return md.ToString();
    }

    private static string Lag(List<LoadRound> rows, int replicas) => replicas == 0 ? "-"
        : string.Create(Inv, $"{FormatBytes(Statistics.Median(rows.Select(r => r.LagMedianBytes)))} / {FormatBytes(Statistics.Median(rows.Select(r => r.LagP99Bytes)))} / {FormatBytes(Statistics.Median(rows.Select(r => r.LagMaxBytes)))}");

    private static string FormatBytes(double bytes) => bytes >= 1 << 20 ? string.Create(Inv, $"{bytes / (1 << 20):0.0} MB") : bytes >= 1024 ? string.Create(Inv, $"{bytes / 1024:0.0} KB") : string.Create(Inv, $"{bytes:0} B");

    private ServerUnderTest Start(string kind) => kind == ServerUnderTest.Ours ? ServerUnderTest.StartOurs(options.ServerArgs) : ServerUnderTest.StartRedis(redisServer);

    private LoadRound RunLoad(string kind, int replicaCount, long requests)
    {
        using var master = Start(kind);
        var replicas = new List<ServerUnderTest>();
        try
        {
            for (int i = 0; i < replicaCount; i++)
            {
                var replica = Start(kind);
                replicas.Add(replica);
                Attach(replica, master);
            }
            // Warmed by the same load first (a fresh process's first seconds include the JIT's
            // tiering and the tables' growth), replicas included, then in sync again.
            RedisBenchmark.RunTests(redisBenchmark, master.Port, ["set"], 30, Math.Max(1, requests / 2));
            foreach (var replica in replicas)
                WaitInSync(master, replica, TimeSpan.FromSeconds(60));
            var lags = new List<double>();
            using var stop = new CancellationTokenSource();
            var sampler = replicaCount == 0 ? Task.CompletedTask : Task.Run(() =>
            {
                using var probe = master.Connect();
                using var follower = replicas[0].Connect();
                while (!stop.IsCancellationRequested)
                {
                    if (Lag(probe, follower) is { } lag)
                        lags.Add(lag);
                    Thread.Sleep(50);
                }
            });
            var sample = RedisBenchmark.RunTests(redisBenchmark, master.Port, ["set"], 30, requests)[0];
            stop.Cancel();
            sampler.Wait();
            foreach (var replica in replicas)
                WaitInSync(master, replica, TimeSpan.FromSeconds(60));
            lags.Sort();
            return new LoadRound(sample.RequestsPerSecond, Percentile(lags, 0.5), Percentile(lags, 0.99), lags.Count == 0 ? 0 : lags[^1]);
        }
        finally
        {
            foreach (var replica in replicas)
                replica.Dispose();
        }
    }

    /// <summary>Fills a fresh master, then times a fresh replica's full sync to the master's offset.</summary>
    private double FullSync(string kind)
    {
        using var master = Start(kind);
        long keys = options.ReplicationSyncMegabytes * 1024L;
        RedisBenchmark.RunCommand(redisBenchmark, master.Port, ["SET", "key:__rand_int__", new string('v', 1000)], 30, keys * 3, keys);
        using var replica = Start(kind);
        var clock = Stopwatch.StartNew();
        Attach(replica, master);
        WaitInSync(master, replica, TimeSpan.FromMinutes(10));
        return clock.Elapsed.TotalSeconds;
    }

    private static void Attach(ServerUnderTest replica, ServerUnderTest master)
    {
        using var c = replica.Connect();
        var reply = c.Call("REPLICAOF", "127.0.0.1", master.Port.ToString(Inv));
        if (reply.IsError)
            throw new HarnessException($"REPLICAOF on {replica.Name} failed: {reply.Text}");
    }

    private static void WaitInSync(ServerUnderTest master, ServerUnderTest replica, TimeSpan timeout)
    {
        using var m = master.Connect();
        using var r = replica.Connect();
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < timeout)
        {
            var info = ServerInfo.Read(r, "replication");
            long? masterOffset = ServerInfo.ReadInt64(m, "replication", "master_repl_offset");
            if (info is not null && info.GetValueOrDefault("master_link_status") == "up"
                && info.GetValueOrDefault("slave_repl_offset") == masterOffset?.ToString(Inv))
                return;
            Thread.Sleep(20);
        }
        throw new HarnessException($"the {replica.Name} replica did not catch up with its master within {timeout.TotalSeconds:0} s");
    }

    /// <summary>The master's offset less what the replica applied (its own slave_repl_offset, read right after).</summary>
    private static double? Lag(RespConnection master, RespConnection replica)
    {
        long? offset = ServerInfo.ReadInt64(master, "replication", "master_repl_offset");
        long? applied = ServerInfo.ReadInt64(replica, "replication", "slave_repl_offset");
        return offset is null || applied is null ? null : Math.Max(0, offset.Value - applied.Value);
    }

    private static double Percentile(List<double> sorted, double p) => sorted.Count == 0 ? 0 : sorted[Math.Min(sorted.Count - 1, (int)(p * sorted.Count))];
}
