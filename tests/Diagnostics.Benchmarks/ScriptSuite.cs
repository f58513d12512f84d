using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>
/// One load of the scripts suite: <c>EVALSHA &lt;sha1 of Body&gt; 1 &lt;KeyPattern&gt;</c> at one
/// pipeline depth, where redis-benchmark fills in the key's __rand_int__.
/// </summary>
public sealed record ScriptLoad(string Name, string Body, string KeyPattern, int Pipeline, long Requests);

/// <summary>All rounds of one script load on both servers.</summary>
public sealed class ScriptResult(ScriptLoad load)
{
    public ScriptLoad Load { get; } = load;
    public List<DiagnosticsSample> Ours { get; } = [];
    public List<DiagnosticsSample> Redis { get; } = [];
    /// <summary>Garnet's samples; empty without --garnet.</summary>
    public List<DiagnosticsSample> Garnet { get; } = [];

    public List<DiagnosticsSample> Of(ServerUnderTest server) => server.IsOurs ? Ours : server.IsGarnet ? Garnet : Redis;
}

/// <summary>What the scripts suite measured: the loads, the digests both servers gave, and how full the read script's key space was.</summary>
public sealed record ScriptSuiteResult(
    IReadOnlyList<ScriptResult> Loads, IReadOnlyDictionary<string, string> Digests,
    long OursKeys, long RedisKeys, string OursCommandLine, string RedisCommandLine,
    long? GarnetKeys = null, string? GarnetCommandLine = null);

/// <summary>
/// Lua scripting against redis-server: a small read script and a small write script, each loaded
/// with SCRIPT LOAD on both servers and run by redis-benchmark as EVALSHA at pipeline 1 and 30.
/// Both servers run side by side; every round runs every load on both, the order alternating
/// from round to round, so drift on the shared machine lands on both alike. Besides
/// redis-benchmark's throughput and latency it reads each server's CPU time around every run
/// (/proc/&lt;pid&gt;/stat), which gives CPU time per request. Medians are reported.
/// </summary>
/// With --garnet, Garnet (started with --lua) runs beside them as a third server, in the same rounds.
public sealed class ScriptSuite(BenchmarkOptions options, string redisServer, string redisBenchmark, TextWriter progress, string? garnetServer = null)
{
    public const string ReadScript = "return redis.call('get', KEYS[1])";
    public const string WriteScript = "return redis.call('incr', KEYS[1])";
    /// <summary>The read script's keys, filled with 256-byte values before the runs so every GET finds one.</summary>
    public const string ReadKeys = "key:__rand_int__";
    /// <summary>The write script's own keys: INCR on the read script's 256-byte strings would be an error.</summary>
    public const string WriteKeys = "counter:__rand_int__";
    /// <summary>
    /// Smaller than the throughput suite's million, so that random SETs at ten times this many fill
    /// it (all but e^-10 of it) in a second or two: the read script measures hits, not misses.
    /// </summary>
    public const long KeySpace = 100_000;
    public const long FillRequests = KeySpace * 10;

    public static ScriptLoad[] Loads(long requests) =>
    [
        new("get", ReadScript, ReadKeys, 1, requests),
        new("incr", WriteScript, WriteKeys, 1, requests),
        new("get", ReadScript, ReadKeys, 30, requests * 10),
        new("incr", WriteScript, WriteKeys, 30, requests * 10),
    ];

    public ScriptSuiteResult Run()
    {
        var results = Loads(options.ScriptRequests).Select(load => new ScriptResult(load)).ToList();
        using var ours = ServerUnderTest.StartOurs(options.ServerArgs);
        using var redis = ServerUnderTest.StartRedis(redisServer);
        using var garnet = garnetServer is null ? null : ServerUnderTest.StartGarnet(garnetServer);
        ServerUnderTest[] servers = garnet is null ? [ours, redis] : [ours, redis, garnet];
        progress.WriteLine($"scripts: ours on port {ours.Port}, redis on port {redis.Port}" + (garnet is null ? "" : $", garnet on port {garnet.Port}"));

        var digests = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (string body in (string[])[ReadScript, WriteScript])
            digests[body] = LoadOnAll(servers, body);
        var keys = new Dictionary<ServerUnderTest, long>();
        foreach (var server in servers)
        {
            keys[server] = Fill(server);
            Check(server, digests);
            WarmUp(server, results, digests);
            server.EnsureRunning();
        }

        for (int round = 1; round <= options.Rounds; round++)
        {
            // Each round starts one server further along: odd rounds with ours, even ones with redis
            // (with Garnet: ours, redis, garnet; then redis, garnet, ours; ...).
            var order = servers.Select((_, i) => servers[(round - 1 + i) % servers.Length]).ToArray();
            foreach (var result in results)
            {
                foreach (var server in order)
                {
                    var sample = Measure(server, result.Load, digests[result.Load.Body]);
                    result.Of(server).Add(sample);
                    progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"round {round}/{options.Rounds}  EVALSHA {result.Load.Name,-4} -P {result.Load.Pipeline,-2}  {server.Name,-5} {sample.RequestsPerSecond,12:N0} rps  {sample.CpuMicrosPerRequest,7:0.000} us CPU/req  p50 {sample.P50Ms:0.000} ms  p99 {sample.P99Ms:0.000} ms"));
                }
            }
        }
        return new ScriptSuiteResult(results, digests, keys[ours], keys[redis], ours.DisplayCommandLine, redis.DisplayCommandLine,
            garnet is null ? null : keys[garnet], garnet?.DisplayCommandLine);
    }

    /// <summary>The EVALSHA command line a load sends, with the script's digest.</summary>
    public static string[] Command(ScriptLoad load, string digest) => ["EVALSHA", digest, "1", load.KeyPattern];

    private DiagnosticsSample Measure(ServerUnderTest server, ScriptLoad load, string digest)
    {
        TimeSpan before = server.CpuTime();
        var sample = RedisBenchmark.RunCommand(redisBenchmark, server.Port, Command(load, digest), load.Pipeline, load.Requests, KeySpace);
        TimeSpan after = server.CpuTime();
        server.EnsureRunning();
        return new DiagnosticsSample(sample.RequestsPerSecond, sample.P50Ms, sample.P99Ms, (after - before).TotalMicroseconds / load.Requests);
    }

    /// <summary>SCRIPT LOAD on every server; all must return the same digest, the script's SHA1.</summary>
    private static string LoadOnAll(ServerUnderTest[] servers, string body)
    {
        string? first = null;
        foreach (var server in servers)
        {
            using var connection = server.Connect();
            var reply = connection.Call("SCRIPT", "LOAD", body);
            if (reply.IsError || reply.Text is not { Length: 40 } digest)
                throw new HarnessException($"SCRIPT LOAD \"{body}\" on {server.Name} answered {reply.Kind}{reply.Text}, not a 40-digit SHA1");
            if (first is not null && digest != first)
                throw new HarnessException($"SCRIPT LOAD \"{body}\" gave {first} on ours and {digest} on {server.Name}");
            first = digest;
        }
        return first!;
    }

    /// <summary>Random SETs of 256-byte values over the read script's key space; returns DBSIZE after.</summary>
    private long Fill(ServerUnderTest server)
    {
        progress.WriteLine($"scripts: filling {server.Name}'s {KeySpace:N0}-key space with {FillRequests:N0} random SETs (not measured)...");
        string value = new('x', BenchmarkOptions.DataSize);
        RedisBenchmark.RunCommand(redisBenchmark, server.Port, ["SET", ReadKeys, value], 30, FillRequests, KeySpace);
        using var connection = server.Connect();
        var reply = connection.Call("DBSIZE");
        if (reply.Kind != ':')
            throw new HarnessException($"DBSIZE on {server.Name} answered {reply.Kind}{reply.Text}");
        return reply.Integer;
    }

    /// <summary>
    /// Each script once by hand before redis-benchmark runs it: a server whose EVALSHA answered
    /// the wrong thing quickly would otherwise look fast.
    /// </summary>
    private static void Check(ServerUnderTest server, IReadOnlyDictionary<string, string> digests)
    {
        using var connection = server.Connect();
        var first = connection.Call("EVALSHA", digests[WriteScript], "1", "counter:check");
        var second = connection.Call("EVALSHA", digests[WriteScript], "1", "counter:check");
        if (first.Kind != ':' || second.Kind != ':' || second.Integer != first.Integer + 1)
            throw new HarnessException($"EVALSHA of \"{WriteScript}\" on {server.Name} answered {first.Kind}{first.Text} then {second.Kind}{second.Text}, not two counts in a row");
        var read = connection.Call("EVALSHA", digests[ReadScript], "1", "counter:check");
        if (read.Kind != '$' || read.Text != second.Integer.ToString(CultureInfo.InvariantCulture))
            throw new HarnessException($"EVALSHA of \"{ReadScript}\" on {server.Name} answered {read.Kind}{read.Text}, not the counter's {second.Integer}");
        connection.Call("DEL", "counter:check");
    }

    /// <summary>An unmeasured fifth of every load (at least 1,000 requests): our JIT reaches its optimized tier and both servers have run each script.</summary>
    private void WarmUp(ServerUnderTest server, List<ScriptResult> results, IReadOnlyDictionary<string, string> digests)
    {
        progress.WriteLine($"scripts: warm-up of {server.Name} (not measured)...");
        foreach (var result in results)
            RedisBenchmark.RunCommand(redisBenchmark, server.Port, Command(result.Load, digests[result.Load.Body]), result.Load.Pipeline, Math.Max(1_000, result.Load.Requests / 5), KeySpace);
    }
}
