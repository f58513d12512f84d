using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The doctor's runtime and host rules fired by real conditions in a real server process: GC
/// pauses from a garbage-heavy load on a tight young generation, a thread pool blocked by long
/// commands, and an open-files limit lowered under the running process.
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class DoctorRuntimeTests
{
    [Fact]
    public void GarbageHeavyLoadOnATinyYoungGenerationShowsGcPauses()
    {
        // INFO builds its reply as text (it is not on the data path); a 64 KB gen0 budget, as a
        // memory-starved container might end up with, turns that into hundreds of GCs a second.
        using var server = ServerProcess.StartWithEnvironment(new Dictionary<string, string> { ["DOTNET_GCgen0size"] = "0x10000" });
        using var c = server.Connect();
        Finding finding, offline;
        using (BackgroundLoad.Command(server.Port, 4, "INFO", "all"))
        {
            // A pause at start-up on a busy machine can fire the rule alone; wait for the one the
            // load causes: sustained pauses, after thousands of collections.
            (finding, offline) = LiveAndOffline.Expect(server, "gc-pauses", timeoutMs: 30_000,
                until: f => Parse(f.Evidence["pause_ms_per_s_avg"]) >= 20 && InfoFields.GetInt64(c, "memory", "gc_gen0_collections") > 1000,
                what: "sustained GC pauses (20 ms a second on average) under the garbage-heavy load");
        }
        Assert.Equal("runtime", finding.Area);
        Assert.Equal(MetricNames.GcPauseMillisPerSecond, finding.Chart);
        Assert.Contains("paused the process", finding.Seen);
        Assert.True(Parse(finding.Evidence["pause_ms_per_s_max"]) >= Parse(finding.Evidence["pause_ms_per_s_avg"]));
        // It says what fills the heap: the allocation rate, and INFO first among the commands,
        // with what one call allocates (INFO all builds tens of KB of text).
        Assert.True(long.Parse(finding.Evidence["allocated_bytes_per_s"]) > 1_000_000, finding.Seen);
        Assert.True(long.Parse(finding.Evidence["gen2_collections"]) >= 0);
        Assert.Matches(@"^info \d+(\.\d)? KB a call \(", finding.Evidence["top_commands"]);
        Assert.StartsWith("info ", offline.Evidence["top_commands"]);
        var info = new ApiClient(server.HttpPort).Get("/api/commands", ContractsJson.Default.CommandStatisticsArray).Single(s => s.Name == "info");
        Assert.True(info.AllocatedBytes / info.Calls > 10_000, $"INFO all allocated {info.AllocatedBytes / info.Calls} bytes a call");
        var get = new ApiClient(server.HttpPort).Get("/api/commands", ContractsJson.Default.CommandStatisticsArray).SingleOrDefault(s => s.Name == "get");
        Assert.True(get is null || get.AllocatedBytes is null, "GET is flagged fast: its allocations are not measured");
    }

    private static double Parse(string figure) => double.Parse(figure, System.Globalization.CultureInfo.InvariantCulture);

    [Fact]
    public void CommandsBlockingThePoolShowThreadPoolStarvation()
    {
        // DEBUG SLEEP holds every shard, as in Redis. Commands for several shards (MSET) that
        // find them held wait for them on a pool thread each, and the runtime adds threads slower
        // than work arrives. (Whole-keyspace commands do not block threads: they hand their work
        // to the keyspace's holder.)
        using var server = ServerProcess.Start(StarvedPool.NoWaitLimit);
        DoctorProbe.AssertAbsent(server, "threadpool-starvation");
        Finding finding, offline;
        using (new StarvedPool(server))
        {
            // Read while it happens: the doctor names what the pool threads wait for and who holds it.
            (finding, offline) = LiveAndOffline.Expect(server, "threadpool-starvation", timeoutMs: 30_000,
                until: f => f.Evidence["threads_waiting_for_shards"] != "0" && f.Evidence.GetValueOrDefault("longest_running", "").StartsWith("debug for client "),
                what: "starvation with threads waiting for shards while DEBUG SLEEP runs");
        }

        Assert.Equal("runtime", finding.Area);
        Assert.True(int.Parse(finding.Evidence["seconds_queued"]) >= 5, finding.Seen);
        Assert.True(Parse(finding.Evidence["max_queue_length"]) >= 1, finding.Seen);
        Assert.Contains("threads are blocked waiting for shards (for clients ", finding.Seen);
        Assert.Contains("Longest-running commands now: debug for client ", finding.Seen);
        // The package's stacks show where the blocked pool threads stand: in the router, on a shard.
        Assert.True(offline.Evidence["wait_stacks"].Contains("ShardRouter"), offline.Evidence["wait_stacks"]);
    }

    [Fact]
    public void CommandsPastTheWaitingLimitAreRefusedAndTheDoctorNamesWhoAndWhy()
    {
        // The starvation fault under a small limit: past four waiting MSETs, stalled behind the
        // sleep, the rest are refused at once, and the doctor says how many, for whom, and what
        // holds the shards.
        using var server = ServerProcess.Start("--max-waiting-commands", "4");
        DoctorProbe.AssertAbsent(server, "too-busy");
        Finding finding, offline;
        var fault = new StarvedPool(server, tooBusyExpected: true);
        Finding holding;
        using (fault)
        {
            // Live, while a sleep runs: the holder is named. (A package taken a moment later may fall
            // between two sleeps, so the offline check asks for the refusals and clients only.)
            holding = DoctorProbe.Expect(server, "too-busy", 30_000,
                f => f.Evidence.GetValueOrDefault("longest_running", "").StartsWith("debug for client "),
                "TOOBUSY refusals while DEBUG SLEEP holds the shards");
            (finding, offline) = LiveAndOffline.Expect(server, "too-busy", timeoutMs: 30_000,
                until: f => f.Evidence.ContainsKey("clients"), what: "TOOBUSY refusals and the clients refused");
        }
        Assert.Contains("Longest-running commands now: debug for client ", holding.Seen);
        // Every client has finished: the counts are final.
        long refused = fault.TooBusyRefusals;
        string? error = fault.TooBusyError;
        Assert.Equal("TOOBUSY the server is too busy: 4 commands already wait for shards that other commands hold (max-waiting-commands); refused instead of queued, try again shortly", error);
        Assert.Equal("latency", finding.Area);
        Assert.Equal(MetricNames.TooBusyRefusalsPerSecond, finding.Chart);
        Assert.Equal("4", finding.Evidence["limit"]);
        // Waits that keep ending may pass the limit, up to the hard limit.
        Assert.InRange(int.Parse(finding.Evidence["max_waiting"]), 1, 4 * Engine.ShardWaitLimit.HardLimitFactor);
        Assert.InRange(long.Parse(finding.Evidence["refused_last_5_min"]), 1, refused);
        Assert.Contains("commands were refused with TOOBUSY in the last 5 minutes", finding.Seen);
        // The refused clients are the MSET writers, named with their count.
        Assert.True(System.Text.RegularExpressions.Regex.IsMatch(finding.Evidence["clients"], @"^client \d+ at 127\.0\.0\.1:\d+: [\d,]+ refused, last command mset"), finding.Evidence["clients"]);
        Assert.Equal("4", offline.Evidence["limit"]);
        Assert.StartsWith("client ", offline.Evidence["clients"]);
        using var c = server.Connect();
        Assert.Equal(refused, InfoFields.GetInt64(c, "stats", "toobusy_rejected_calls"));
        Assert.Equal($"count={refused}", InfoFields.Get(c, "errorstats", "errorstat_TOOBUSY")); // MSETs only: no EXEC here
        Assert.Equal(0, InfoFields.GetInt64(c, "stats", "waiting_commands"));
    }

    [Fact]
    public void OneHotKeyIsNamedWithItsCommandAndClients()
    {
        using var server = ServerProcess.Start();
        DoctorProbe.AssertAbsent(server, "hot-key");
        // Many clients on one counter, and some traffic spread over 10,000 keys beside them.
        using var hot = BackgroundLoad.Command(server.Port, 6, "INCR", "hot:counter");
        using var spread = new BackgroundLoad(server.Port, clients: 2);
        var (finding, offline) = LiveAndOffline.Expect(server, "hot-key", timeoutMs: 20_000, until: f => f.Evidence["key"] == "hot:counter",
            what: "the INCR counter named as the hot key");
        Assert.Equal("cpu", finding.Area);
        Assert.Equal("incr", finding.Evidence["command"]);
        Assert.Equal("0", finding.Evidence["db"]);
        Assert.True(int.Parse(finding.Evidence["share_percent"]) >= 25, finding.Seen);
        Assert.True(long.Parse(finding.Evidence["per_second"]) >= 1000, finding.Seen);
        // The clients are the INCR connections (redis-benchmark's, known by CLIENT LIST's cmd=incr).
        using var c = server.Connect();
        string list = c.Call("CLIENT", "LIST").Text!;
        foreach (string id in finding.Evidence["clients"].Split(','))
            Assert.Matches($"(?m)^id={id} .* cmd=incr ", list);
        Assert.Equal("hot:counter", offline.Evidence["key"]);
        Assert.Contains("Key 'hot:counter' (db 0, shard ", finding.Seen);
    }

    [Fact]
    public void SaturatedCpuIsReportedWithTheBusiestThreads()
    {
        using var server = ServerProcess.Start();
        // Enough clients to keep both cores busy (the server's socket threads and the benchmark).
        using var load = new BackgroundLoad(server.Port, clients: 50, pipeline: 4);
        var finding = DoctorProbe.Expect(server, "cpu-saturation", timeoutMs: 45_000, what: "the CPU saturated by the load for most of half a minute");
        Assert.Equal("cpu", finding.Area);
        Assert.True(double.Parse(finding.Evidence["machine_cpu_percent"]) >= 90 || double.Parse(finding.Evidence["process_cpu_percent"]) >= 90, finding.Seen);
        Assert.True(double.Parse(finding.Evidence["process_cpu_percent"]) > 20, finding.Seen);
        // The server's own busiest threads, with what they are for.
        Assert.Contains(".NET Sockets", finding.Evidence["threads"]);
    }

    [Fact]
    public void OpenFilesNearTheLimitAreReported()
    {
        using var server = ServerProcess.Start();
        DoctorProbe.AssertAbsent(server, "resource-limits");
        var clients = new RespClient[4];
        try
        {
            for (int i = 0; i < clients.Length; i++)
            {
                clients[i] = server.Connect();
                Assert.Equal("PONG", clients[i].Call("PING").Text);
            }

            // What an operator's too-small LimitNOFILE does, applied to the running process.
            int open = Directory.GetFileSystemEntries($"/proc/{server.Pid}/fd").Length;
            int limit = open + 4;
            var prlimit = ExternalTool.Run("prlimit", "util-linux", ["--pid", server.Pid.ToString(), $"--nofile={limit}:{limit}"]);
            Assert.True(prlimit.ExitCode == 0, $"prlimit failed: {prlimit.StandardError}");

            var finding = DoctorProbe.Expect(server, "resource-limits");
            Assert.Equal("clients", finding.Area);
            Assert.Equal(limit.ToString(), finding.Evidence["max_fds"]);
            Assert.True(long.Parse(finding.Evidence["open_fds"]) >= open - 2, finding.Seen);
            Assert.Equal(MetricNames.ConnectedClients, finding.Chart);
        }
        finally
        {
            foreach (var c in clients)
                c?.Dispose();
        }
    }
}
