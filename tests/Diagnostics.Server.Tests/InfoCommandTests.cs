using System.Text.RegularExpressions;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>INFO: sections, Redis's field names, CRLF text, RESP3 verbatim, live counters.</summary>
public sealed class InfoCommandTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public void DefaultSectionsInRedisOrderWithCrlfLines()
    {
        using var c = shared.Connect();
        var reply = c.Call("INFO");
        Assert.Equal('$', reply.Kind);
        string text = reply.Text!;
        Assert.Equal(["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Errorstats", "Cluster", "Keyspace"], Headers(text));
        Assert.EndsWith("\r\n", text);
        Assert.DoesNotMatch(new Regex("[^\r]\n"), text);
        Assert.Contains("\r\n\r\n# Clients\r\n", text);
    }

    [Fact]
    public void SelectedSectionsOnlyAndUnknownSectionIsEmpty()
    {
        using var c = shared.Connect();
        Assert.Equal(["Server", "Clients"], Headers(c.Call("INFO", "clients", "SERVER").Text!));
        RespAssert.Bulk("", c.Call("INFO", "no-such-section"));
        Assert.Equal(["Memory"], Headers(c.Call("INFO", "memory", "no-such-section").Text!));
        Assert.Contains("Commandstats", Headers(c.Call("INFO", "all").Text!));
        Assert.Contains("Commandstats", Headers(c.Call("INFO", "everything").Text!));
        Assert.DoesNotContain("Commandstats", Headers(c.Call("INFO", "default").Text!));
        Assert.Equal(["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Commandstats", "Errorstats", "Cluster", "Keyspace"],
            Headers(c.Call("INFO", "default", "commandstats").Text!));
    }

    [Fact]
    public void ServerSectionDescribesThisProcess()
    {
        using var c = shared.Connect();
        var server = Fields(c.Call("INFO", "server").Text!);
        Assert.Equal("7.2.0", server["redis_version"]);
        Assert.Equal("standalone", server["redis_mode"]);
        Assert.Equal(shared.Server.Pid.ToString(), server["process_id"]);
        Assert.Equal(shared.Server.Port.ToString(), server["tcp_port"]);
        Assert.Matches("^[0-9a-f]{40}$", server["run_id"]);
        Assert.Equal("diagnostics-server", server["server_name"]);
        Assert.Equal("64", server["arch_bits"]);
        Assert.True(int.Parse(server["shards"]) >= 1);
        Assert.Contains(server["execution_mode"], new[] { "executor", "inline" });
        Assert.Equal("10", server["hz"]);
        Assert.Equal("", server["config_file"]);
        Assert.True(long.Parse(server["uptime_in_seconds"]) >= 0);
        Assert.Equal("0", server["uptime_in_days"]);
        long serverSeconds = long.Parse(server["server_time_usec"]) / 1_000_000;
        Assert.InRange(serverSeconds, DateTimeOffset.UtcNow.ToUnixTimeSeconds() - 60, DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 60);
        foreach (var field in new[] { "os", "executable", "lru_clock", "configured_hz" })
            Assert.Contains(field, server.Keys);
    }

    [Fact]
    public void ClientsSectionCountsConnections()
    {
        using var c = shared.Connect();
        using var other = shared.Connect();
        RespAssert.Simple("PONG", other.Call("PING"));
        var clients = Fields(c.Call("INFO", "clients").Text!);
        Assert.True(int.Parse(clients["connected_clients"]) >= 2, $"connected_clients:{clients["connected_clients"]}");
        Assert.Equal("10000", clients["maxclients"]);
        Assert.Equal("0", clients["blocked_clients"]);
        Assert.Equal("0", clients["tracking_clients"]);
        Assert.True(long.Parse(clients["client_recent_max_input_buffer"]) >= 0);
        Assert.Contains("client_recent_max_output_buffer", clients.Keys);
    }

    [Fact]
    public void MemorySectionReportsNativeManagedAndSystemMemory()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "info:memory:key", new string('x', 1000)));
        var memory = Fields(c.Call("INFO", "memory").Text!);
        Assert.True(long.Parse(memory["used_memory"]) > 1000);
        Assert.True(long.Parse(memory["used_memory_rss"]) > long.Parse(memory["used_memory"]));
        Assert.True(long.Parse(memory["used_memory_peak"]) >= long.Parse(memory["used_memory"]));
        Assert.Matches(@"^\d+(\.\d\d[KMGTP]|B)$", memory["used_memory_human"]);
        Assert.Matches(@"^\d+\.\d\d%$", memory["used_memory_peak_perc"]);
        Assert.True(long.Parse(memory["used_memory_dataset"]) > 1000);
        Assert.True(long.Parse(memory["used_memory_overhead"]) > 0);
        Assert.Equal("0", memory["maxmemory"]);
        Assert.Equal("0B", memory["maxmemory_human"]);
        Assert.Equal("noeviction", memory["maxmemory_policy"]);
        Assert.Equal("libc", memory["mem_allocator"]); // the allocator setting's default, glibc
        foreach (var field in new[] { "allocator_allocated", "allocator_active", "allocator_resident", "allocator_frag_ratio", "allocator_frag_bytes", "rss_overhead_ratio", "mem_fragmentation_ratio", "mem_fragmentation_bytes" })
            Assert.Contains(field, memory.Keys);
        Assert.True(long.Parse(memory["managed_heap_bytes"]) > 0);
        Assert.True(long.Parse(memory["gc_heap_size"]) > 0);
        Assert.True(long.Parse(memory["total_system_memory"]) > long.Parse(memory["used_memory_rss"]));
        foreach (var field in new[] { "gc_gen0_collections", "gc_gen1_collections", "gc_gen2_collections", "gc_pause_time_total_ms", "used_memory_rss_human", "used_memory_peak_human" })
            Assert.Contains(field, memory.Keys);
    }

    [Fact]
    public void StatsCountCommandsHitsMissesErrorsAndExpiry()
    {
        using var c = shared.Connect();
        var before = Fields(c.Call("INFO", "stats").Text!);
        RespAssert.Ok(c.Call("SET", "info:stats:key", "v"));
        RespAssert.Bulk("v", c.Call("GET", "info:stats:key"));
        RespAssert.Null(c.Call("GET", "info:stats:missing"));
        RespAssert.Ok(c.Call("SET", "info:stats:volatile", "v", "PX", "1"));
        Thread.Sleep(20);
        RespAssert.Null(c.Call("GET", "info:stats:volatile"));
        Assert.True(c.Call("INFO-NO-SUCH-COMMAND").IsError);
        var after = Fields(c.Call("INFO", "stats").Text!);

        Assert.True(Delta(before, after, "total_commands_processed") >= 6);
        Assert.True(Delta(before, after, "keyspace_hits") >= 1);
        Assert.True(Delta(before, after, "keyspace_misses") >= 2);
        Assert.True(Delta(before, after, "expired_keys") >= 1);
        Assert.True(Delta(before, after, "total_error_replies") >= 1);
        Assert.True(Delta(before, after, "total_net_input_bytes") > 0);
        Assert.True(Delta(before, after, "total_net_output_bytes") > 0);
        Assert.True(long.Parse(after["total_connections_received"]) >= 1);
        foreach (var field in new[] { "evicted_keys", "rejected_connections", "unexpected_error_replies", "protocol_errors", "instantaneous_input_kbps" })
            Assert.Contains(field, after.Keys);
    }

    [Fact]
    public void InstantaneousOpsPerSecondFollowsTraffic()
    {
        using var c = shared.Connect();
        using var load = shared.Connect();
        var deadline = DateTime.UtcNow.AddSeconds(20);
        long ops = 0;
        while (ops == 0 && DateTime.UtcNow < deadline)
        {
            for (int i = 0; i < 200; i++)
                RespAssert.Simple("PONG", load.Call("PING"));
            ops = long.Parse(Fields(c.Call("INFO", "stats").Text!)["instantaneous_ops_per_sec"]);
        }
        Assert.True(ops > 0, "instantaneous_ops_per_sec stayed 0 under load");
    }

    [Fact]
    public void KeyspaceSummarisesEachNonEmptyDatabase()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SELECT", "7"));
        RespAssert.Ok(c.Call("SET", "info:keyspace:a", "1"));
        RespAssert.Ok(c.Call("SET", "info:keyspace:b", "2"));
        RespAssert.Ok(c.Call("SET", "info:keyspace:c", "3", "EX", "1000"));
        string keyspace = c.Call("INFO", "keyspace").Text!;
        Assert.Matches(new Regex(@"\r\ndb7:keys=3,expires=1,avg_ttl=\d+\r\n"), keyspace);
        Assert.DoesNotContain("db8:", keyspace);
    }

    [Fact]
    public void CommandStatsCountCallsPerCommandAndSubcommand()
    {
        using var c = shared.Connect();
        c.Call("CONFIG", "GET", "hz");
        c.Call("CONFIG", "SET", "no-such-option", "1");
        string stats = c.Call("INFO", "commandstats").Text!;
        Assert.Matches(new Regex(@"\r\ncmdstat_config\|get:calls=\d+,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=\d+,failed_calls=\d+\r\n"), stats);
        Assert.Matches(new Regex(@"cmdstat_config\|set:calls=\d+,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=\d+,failed_calls=[1-9]\d*\r\n"), stats);
    }

    [Fact]
    public void Resp3RepliesWithVerbatimText()
    {
        using var c = shared.Connect();
        c.Call("HELLO", "3");
        var reply = c.Call("INFO", "server");
        Assert.Equal('=', reply.Kind);
        Assert.StartsWith("txt:# Server\r\n", reply.Text);
    }

    private static List<string> Headers(string text) =>
        text.Split("\r\n").Where(line => line.StartsWith("# ", StringComparison.Ordinal)).Select(line => line[2..]).ToList();

    private static Dictionary<string, string> Fields(string text)
    {
        var fields = new Dictionary<string, string>();
        foreach (var line in text.Split("\r\n"))
        {
            int colon = line.IndexOf(':');
            if (colon > 0 && !line.StartsWith('#'))
                fields[line[..colon]] = line[(colon + 1)..];
        }
        return fields;
    }

    private static long Delta(Dictionary<string, string> before, Dictionary<string, string> after, string field)
        => long.Parse(after[field]) - long.Parse(before[field]);

    /// <summary>
    /// INFO reads counters and takes no shard, so it answers while a transaction holds every shard
    /// in a long command: EXEC of MULTI / DEBUG SLEEP must not keep the INFO of other clients
    /// (monitoring systems, fresh connections) waiting until it ends. Before the fix EXEC ran on the
    /// socket engine thread, and in about half the runs every new client's INFO waited out the
    /// whole sleep; eight rounds make a miss of that unlikely (1 in 256). Ordering, not a latency
    /// threshold: every INFO must be answered before its round's sleep can have ended.
    /// </summary>
    [Fact]
    public void InfoAnswersWhileATransactionHoldsEveryShardInALongCommand()
    {
        using var server = ServerProcess.Start();
        for (int round = 0; round < 8; round++)
        {
            // A new connection each round: whether its socket shares a thread with the accepting
            // of new clients is what decided the stall.
            using var sleeper = server.Connect();
            RespAssert.Ok(sleeper.Call("MULTI"));
            RespAssert.Simple("QUEUED", sleeper.Call("DEBUG", "SLEEP", "1.5"));
            var clock = System.Diagnostics.Stopwatch.StartNew();
            sleeper.Send("EXEC");
            Thread.Sleep(200);
            var answeredAt = new double[4];
            var monitors = new Thread[answeredAt.Length];
            for (int i = 0; i < monitors.Length; i++)
            {
                int slot = i;
                monitors[i] = new Thread(() =>
                {
                    using var monitor = server.Connect();
                    Assert.Contains("# Server", monitor.Call("INFO").Text);
                    answeredAt[slot] = clock.Elapsed.TotalSeconds;
                });
                monitors[i].Start();
            }
            foreach (var monitor in monitors)
                Assert.True(monitor.Join(TimeSpan.FromSeconds(30)), "INFO did not answer");
            var exec = sleeper.Read();
            double execAt = clock.Elapsed.TotalSeconds;
            Assert.True(exec.IsArray, $"EXEC replied {exec}");
            Assert.True(execAt >= 1.5, $"EXEC answered after {execAt:0.00} s: DEBUG SLEEP 1.5 did not hold");
            // The sleep cannot end sooner than 1.5 s after EXEC was sent: an INFO answered before
            // then was answered while the transaction held every shard.
            Assert.True(answeredAt.Max() < 1.5, $"round {round}: INFO waited for the transaction's DEBUG SLEEP: answered at {string.Join(", ", answeredAt.Select(t => t.ToString("0.00")))} s, EXEC at {execAt:0.00} s");
        }
    }
}
