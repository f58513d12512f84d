using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>What one server had on disk and reported after all runs of one appendfsync policy.</summary>
public sealed record AofDiskUse(long Bytes, long? Rewrites);

/// <summary>All rounds of SET -P 30 under one appendfsync policy, for both servers.</summary>
public sealed class AofWriteResult(string fsync, long requests)
{
    public string Fsync { get; } = fsync;
    public long Requests { get; } = requests;
    public List<BenchmarkSample> Ours { get; } = [];
    public List<BenchmarkSample> Redis { get; } = [];
    /// <summary>SETs each server received, warm-up included: what its AOF holds unless rewritten.</summary>
    public long SetsSent { get; set; }
    public AofDiskUse? OursDisk { get; set; }
    public AofDiskUse? RedisDisk { get; set; }
    public string OursCommandLine { get; set; } = "";
    public string RedisCommandLine { get; set; } = "";
}

/// <summary>
/// AOF write throughput: for each appendfsync policy both servers start side by side with
/// --appendonly yes, each in a fresh scratch --dir, get an unmeasured warm-up, then R rounds of
/// redis-benchmark SET -P 30 alternating ours/redis. After every run the harness waits for any
/// background AOF rewrite to end, so a rewrite one server started never eats into the other's
/// run. The servers stop (and their directories go) before the next policy.
/// </summary>
public sealed class AofWriteSuite(BenchmarkOptions options, string redisServer, string redisBenchmark, TextWriter progress)
{
    public const int Pipeline = 30;
    /// <summary>The directory Redis 7 keeps its multi-part AOF in, under --dir (appenddirname's default).</summary>
    public const string AofDirectoryName = "appendonlydir";

    /// <summary>
    /// Bytes one redis-benchmark SET takes in an AOF: the command as RESP, with redis-benchmark's
    /// key ("key:" and 12 digits, from -r) and a -d byte value.
    /// </summary>
    public static long AofBytesPerSet => AofGenerator.RespCommandLength(["SET", "key:000000000000", new string('x', BenchmarkOptions.DataSize)]);

    public List<AofWriteResult> Run()
    {
        var results = new List<AofWriteResult>();
        foreach (string fsync in BenchmarkOptions.AofFsyncPolicies)
            results.Add(RunPolicy(fsync));
        return results;
    }

    private AofWriteResult RunPolicy(string fsync)
    {
        var result = new AofWriteResult(fsync, options.AofRequests);
        string[] common = ["--appendonly", "yes", "--appendfsync", fsync];
        // The preamble only shapes the base file a rewrite writes; "no" keeps Redis's files
        // RESP like ours, which makes the sizes comparable and costs no throughput.
        string[] redisOnly = ["--aof-use-rdb-preamble", "no"];
        using var ours = ServerUnderTest.StartOurs(options.ServerArgs, common, ScratchDirectory.Create("diagnostics-bench-aof-ours-"));
        using var redis = ServerUnderTest.StartRedis(redisServer, [.. common, .. redisOnly], ScratchDirectory.Create("diagnostics-bench-aof-redis-"));
        result.OursCommandLine = ours.DisplayCommandLine;
        result.RedisCommandLine = redis.DisplayCommandLine;
        using var oursConnection = ours.Connect();
        using var redisConnection = redis.Connect();

        progress.WriteLine($"aof-write: appendfsync {fsync}, warm-up (not measured)...");
        long warmUp = Math.Max(1_000, options.AofRequests / 4);
        foreach (var (server, connection) in new[] { (ours, oursConnection), (redis, redisConnection) })
        {
            RedisBenchmark.Run(redisBenchmark, server.Port, "set", Pipeline, warmUp);
            server.EnsureRunning();
            WaitForRewrites(server, connection);
        }
        result.SetsSent = warmUp + options.Rounds * options.AofRequests;

        for (int round = 1; round <= options.Rounds; round++)
        {
            foreach (var (server, connection) in new[] { (ours, oursConnection), (redis, redisConnection) })
            {
                var sample = RedisBenchmark.Run(redisBenchmark, server.Port, "set", Pipeline, options.AofRequests);
                server.EnsureRunning();
                WaitForRewrites(server, connection);
                (server.IsOurs ? result.Ours : result.Redis).Add(sample);
                progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"round {round}/{options.Rounds}  SET -P {Pipeline} appendfsync {fsync,-8}  {server.Name,-5} {sample.RequestsPerSecond,12:N0} rps  p50 {sample.P50Ms:0.000} ms  p99 {sample.P99Ms:0.000} ms"));
            }
        }

        result.OursDisk = DiskUse(ours, oursConnection);
        result.RedisDisk = DiskUse(redis, redisConnection);
        progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"aof-write: appendfsync {fsync}: AOF on disk ours {MarkdownReport.Bytes(result.OursDisk.Bytes)}, redis {MarkdownReport.Bytes(result.RedisDisk.Bytes)} ({result.SetsSent:N0} SETs = {MarkdownReport.Bytes(result.SetsSent * AofBytesPerSet)} unrewritten)"));
        return result;
    }

    private static AofDiskUse DiskUse(ServerUnderTest server, RespConnection connection)
        => new(server.DataDirectory!.SizeOf(AofDirectoryName), ServerInfo.ReadInt64(connection, "persistence", "aof_rewrites"));

    /// <summary>
    /// Waits until INFO persistence shows no AOF rewrite running or scheduled. A server whose INFO
    /// lacks those fields has nothing to wait for.
    /// </summary>
    private static void WaitForRewrites(ServerUnderTest server, RespConnection connection)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromMinutes(5);
        while (true)
        {
            var fields = ServerInfo.Read(connection, "persistence");
            bool busy = fields is not null
                && (fields.GetValueOrDefault("aof_rewrite_in_progress") is "1" || fields.GetValueOrDefault("aof_rewrite_scheduled") is "1");
            if (!busy)
                return;
            server.EnsureRunning();
            if (DateTime.UtcNow >= deadline)
                throw new HarnessException($"{server.Name} server was still rewriting its AOF 5 minutes after a run");
            Thread.Sleep(50);
        }
    }
}
