using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Server.Diagnostics.Kernel;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Diagnostics.Info;

/// <summary>
/// The INFO text: "# Section" headers and "field:value" lines with CRLF endings, Redis's field names
/// first and this server's own after them. Figures are read without stopping any shard, so they
/// may be a moment stale, never blocking. Sections are one table: a subsystem adds its own entry.
/// </summary>
public static class InfoBuilder
{
    private sealed record Section(string Name, string Title, bool InDefault, Action<StringBuilder, DataServer> Write);

    /// <summary>In Redis's order; "default" is every section marked so, "all" and "everything" are all of them.</summary>
    private static readonly Section[] Sections =
    [
        new("server", "Server", true, WriteServer),
        new("clients", "Clients", true, WriteClients),
        new("memory", "Memory", true, WriteMemory),
        new("persistence", "Persistence", true, Persistence.PersistenceInfo.Write),
        new("stats", "Stats", true, WriteStats),
        new("replication", "Replication", true, WriteReplication),
        new("cpu", "CPU", true, WriteCpu),
        new("commandstats", "Commandstats", false, WriteCommandStats),
        new("errorstats", "Errorstats", true, WriteErrorStats),
        new("latencystats", "Latencystats", false, LatencyStatsInfo.Write),
        new("cluster", "Cluster", true, (text, _) => Field(text, "cluster_enabled", 0)),
        new("keyspace", "Keyspace", true, WriteKeyspace),
        // This server's own sections follow Redis's.
        new("scripts", "Scripts", false, Scripting.ScriptInfo.Write),
        new("threads", "Threads", false, WriteThreads),
        new("diskio", "Diskio", false, DiskIoInfo.Write),
        new("tls", "Tls", false, Tls.TlsInfo.Write),
        new("acl", "Acl", false, Acl.AclInfo.Write),
        new("diagnostics", "Diagnostics", false, WriteDiagnostics),
        new("triggers", "Triggers", false, (text, server) => server.Triggers?.WriteInfo(text)),
    ];

    public static IEnumerable<string> SectionNames => Sections.Select(s => s.Name);

    /// <summary>
    /// The text for the requested section names (case-insensitive); none means "default".
    /// Unknown names select nothing, so a request of only unknown names yields "".
    /// </summary>
    public static string Build(DataServer server, IReadOnlyCollection<string> requested)
    {
        var text = new StringBuilder(4096);
        Build(text, server, requested);
        return text.ToString();
    }

    /// <summary>
    /// Appends the text to <paramref name="text"/>: INFO passes a pooled builder, so a monitoring
    /// system's call every second costs no garbage beyond a few small objects.
    /// </summary>
    public static void Build(StringBuilder text, DataServer server, IReadOnlyCollection<string> requested)
    {
        var selected = new bool[Sections.Length];
        if (requested.Count == 0)
            requested = ["default"];
        foreach (string name in requested)
        {
            for (int i = 0; i < Sections.Length; i++)
            {
                selected[i] |= name.Equals("all", StringComparison.OrdinalIgnoreCase)
                    || name.Equals("everything", StringComparison.OrdinalIgnoreCase)
                    || (name.Equals("default", StringComparison.OrdinalIgnoreCase) && Sections[i].InDefault)
                    || name.Equals(Sections[i].Name, StringComparison.OrdinalIgnoreCase);
            }
        }

        int start = text.Length;
        for (int i = 0; i < Sections.Length; i++)
        {
            if (!selected[i])
                continue;
            if (text.Length > start)
                text.Append("\r\n");
            text.Append("# ").Append(Sections[i].Title).Append("\r\n");
            Sections[i].Write(text, server);
        }
    }

    /// <summary>A free text (a thread name) made safe inside a "k=v,k=v" field value.</summary>
    internal static string FieldSafe(string text) => text.Replace(',', ' ').Replace(':', ' ');

    internal static void Field(StringBuilder text, string name, string value) => text.Append(name).Append(':').Append(value).Append("\r\n");
    internal static void Field(StringBuilder text, string name, long value) => text.Append(name).Append(':').Append(value).Append("\r\n");

    private static void Field(StringBuilder text, string name, double value, string format)
    {
        Span<char> digits = stackalloc char[64];
        text.Append(name).Append(':');
        if (value.TryFormat(digits, out int written, format, CultureInfo.InvariantCulture))
            text.Append(digits[..written]);
        else
            text.Append(value.ToString(format, CultureInfo.InvariantCulture));
        text.Append("\r\n");
    }

    /// <summary>
    /// Tracked native memory per thread, from the allocator's own records: the per-thread view of
    /// used_memory (live bytes of all rows add up to it when nothing is allocating). Exited
    /// threads that still own live blocks stay listed with alive=0.
    /// </summary>
    private static void WriteThreads(StringBuilder text, DataServer server)
    {
        foreach (var record in ThreadMemoryRegistry.Snapshot())
        {
            text.Append("thread_").Append(record.Id).Append(":name=").Append(FieldSafe(record.Name))
                .Append(",tid=").Append(record.OsThreadId)
                .Append(",managed_id=").Append(record.ManagedThreadId)
                .Append(",alive=").Append(record.IsAlive ? 1 : 0)
                .Append(",live_bytes=").Append(record.LiveBytes)
                .Append(",allocated_bytes=").Append(record.AllocatedBytes)
                .Append(",freed_bytes=").Append(record.FreedBytes)
                .Append(",allocations=").Append(record.Allocations)
                .Append(",frees=").Append(record.Frees)
                .Append("\r\n");
        }
    }

    /// <summary>What the diagnostics themselves hold and cost: the sampler and its history, the log ring.</summary>
    private static void WriteDiagnostics(StringBuilder text, DataServer server)
    {
        var sampler = server.Sampler;
        var history = sampler.History;
        Field(text, "sampler_enabled", sampler.Enabled ? 1 : 0);
        Field(text, "sampler_interval_ms", history.IntervalMillis);
        Field(text, "sampler_last_sample_usec", sampler.LastSampleMicros);
        Field(text, "history_samples", history.Count);
        Field(text, "history_capacity", history.Capacity);
        Field(text, "history_series", history.SeriesCount);
        Field(text, "history_threads", history.ThreadCount);
        Field(text, "history_bytes", history.ApproximateBytes);
        Field(text, "latency_tracking", CommandLatency.Enabled ? 1 : 0);
        Field(text, "log_ring_lines", server.Log.Lines().Length);
        Field(text, "http_port", server.Config.HttpPort);
    }

    /// <summary>Error replies by code, as Redis's errorstat_&lt;CODE&gt;:count=N (at most 128 codes).</summary>
    private static void WriteErrorStats(StringBuilder text, DataServer server)
    {
        foreach (var (code, count) in ThreadCounters.ErrorTotals())
            text.Append("errorstat_").Append(code).Append(":count=").Append(count).Append("\r\n");
    }

    private static void WriteServer(StringBuilder text, DataServer server)
    {
        var config = server.Config;
        long nowUsec = (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) / 10;
        long uptime = (Environment.TickCount64 - server.Stats.StartedTicks) / 1000;
        Field(text, "redis_version", ConnectionCommands.CompatibleVersion);
        Field(text, "redis_mode", "standalone");
        Field(text, "os", OsLine);
        Field(text, "arch_bits", IntPtr.Size * 8);
        Field(text, "multiplexing_api", OperatingSystem.IsLinux() ? "epoll" : OperatingSystem.IsWindows() ? "iocp" : "kqueue");
        Field(text, "process_id", Environment.ProcessId);
        Field(text, "process_supervised", "no");
        Field(text, "run_id", server.RunId);
        Field(text, "tcp_port", config.Port);
        Field(text, "server_time_usec", nowUsec);
        Field(text, "uptime_in_seconds", uptime);
        Field(text, "uptime_in_days", uptime / 86400);
        Field(text, "hz", server.Keyspace.Cron.Hz);
        Field(text, "configured_hz", config.Hz);
        Field(text, "lru_clock", LruClock.Seconds);
        Field(text, "executable", Environment.ProcessPath ?? "");
        Field(text, "config_file", config.ConfigFile ?? "");
        Field(text, "server_name", "diagnostics-server");
        Field(text, "server_runtime", RuntimeInformation.FrameworkDescription);
        Field(text, "shards", server.Keyspace.ShardCount);
        Field(text, "execution_mode", config.Mode == ExecutionMode.Executor ? "executor" : "inline");
    }

    private static void WriteClients(StringBuilder text, DataServer server)
    {
        var totals = server.Clients.Totals();
        long maxOutput = Math.Max(server.Clients.RecentMaxOutputBuffer.Max(Environment.TickCount64 / 1000), totals.MaxOutputBuffer);
        Field(text, "connected_clients", server.Clients.Count);
        Field(text, "cluster_connections", 0);
        Field(text, "maxclients", server.Config.MaxClients);
        Field(text, "client_recent_max_input_buffer", totals.MaxInputBuffer);
        Field(text, "client_recent_max_output_buffer", maxOutput);
        Field(text, "blocked_clients", totals.Blocked);
        Field(text, "tracking_clients", server.Tracking.Clients);
    }

    private static void WriteMemory(StringBuilder text, DataServer server)
    {
        var overview = MemoryOverview.Capture(server, readAllocator: false);
        long used = overview.TotalAllocated;
        long peak = overview.PeakAllocated;
        long rss = overview.Rss;
        var eviction = server.Keyspace.Eviction;
        long maxMemory = eviction.MaxMemory;
        var gc = GC.GetGCMemoryInfo();
        Field(text, "used_memory", used);
        Field(text, "used_memory_human", HumanBytes(used));
        Field(text, "used_memory_rss", rss);
        Field(text, "used_memory_rss_human", HumanBytes(rss));
        Field(text, "used_memory_peak", peak);
        Field(text, "used_memory_peak_human", HumanBytes(peak));
        Field(text, "used_memory_peak_perc", (peak == 0 ? 0 : used * 100.0 / peak).ToString("0.00", CultureInfo.InvariantCulture) + "%");
        Field(text, "used_memory_overhead", overview.OverheadTotal);
        Field(text, "used_memory_startup", overview.StartupAllocated);
        Field(text, "used_memory_dataset", overview.DatasetBytes);
        Field(text, "used_memory_dataset_perc", overview.DatasetPercentage.ToString("0.00", CultureInfo.InvariantCulture) + "%");
        // The C allocator's own figures (sampled at most 100 ms ago, as Redis's cron does).
        Field(text, "allocator_allocated", overview.AllocatorAllocated);
        Field(text, "allocator_active", overview.AllocatorActive);
        Field(text, "allocator_resident", overview.AllocatorResident);
        Field(text, "total_system_memory", TotalSystemMemory);
        Field(text, "total_system_memory_human", HumanBytes(TotalSystemMemory));
        // Scripts: the Lua VM's own bytes (already inside used_memory: it allocates through the
        // tracked allocator) and the cache of script sources.
        var scripts = server.Scripts;
        long vmEval = scripts.EvalVmBytes, scriptsEval = scripts.ScriptBytes;
        Field(text, "used_memory_lua", vmEval);
        Field(text, "used_memory_vm_eval", vmEval);
        Field(text, "used_memory_lua_human", HumanBytes(vmEval));
        Field(text, "used_memory_scripts_eval", scriptsEval);
        Field(text, "number_of_cached_scripts", scripts.CachedScripts);
        Field(text, "number_of_functions", 0);
        Field(text, "number_of_libraries", 0);
        Field(text, "used_memory_vm_functions", 0);
        Field(text, "used_memory_vm_total", vmEval);
        Field(text, "used_memory_vm_total_human", HumanBytes(vmEval));
        Field(text, "used_memory_functions", 0);
        Field(text, "used_memory_scripts", scriptsEval);
        Field(text, "used_memory_scripts_human", HumanBytes(scriptsEval));
        Field(text, "maxmemory", maxMemory);
        Field(text, "maxmemory_human", HumanBytes(maxMemory));
        Field(text, "maxmemory_policy", EvictionPolicyNames.Of(eviction.Policy));
        // Redis's fragmentation figures, computed as it does: active over allocated (the
        // allocator's own waste), resident over active, RSS over resident (what lives outside the
        // allocator: here the managed heap, code and stacks), and RSS over used_memory.
        Field(text, "allocator_frag_ratio", overview.AllocatorFragmentationRatio, "0.00");
        Field(text, "allocator_frag_bytes", overview.AllocatorFragmentationBytes);
        Field(text, "allocator_rss_ratio", overview.AllocatorRssRatio, "0.00");
        Field(text, "allocator_rss_bytes", overview.AllocatorRssBytes);
        Field(text, "rss_overhead_ratio", overview.RssOverheadRatio, "0.00");
        Field(text, "rss_overhead_bytes", overview.RssOverheadBytes);
        Field(text, "mem_fragmentation_ratio", overview.Fragmentation, "0.00");
        Field(text, "mem_fragmentation_bytes", overview.FragmentationBytes);
        Field(text, "mem_not_counted_for_evict", eviction.NotCountedMemory());
        Field(text, "mem_replication_backlog", overview.ReplicationBacklog);
        Field(text, "mem_clients_slaves", overview.ClientsReplicas);
        Field(text, "mem_clients_normal", overview.ClientsNormal);
        Field(text, "mem_aof_buffer", server.Aof.BufferMemory);
        Field(text, "mem_allocator", overview.AllocatorName);
        Field(text, "managed_heap_bytes", GC.GetTotalMemory(false));
        // Every managed byte allocated since start: the benchmark divides its growth by the
        // operations run to show what the data path allocates per command.
        Field(text, "managed_allocated_bytes", GC.GetTotalAllocatedBytes(false));
        // The GC reports its heap size as of the last collection; before the first one, the live bytes.
        Field(text, "gc_heap_size", gc.Index == 0 ? GC.GetTotalMemory(false) : gc.HeapSizeBytes);
        Field(text, "gc_gen0_collections", GC.CollectionCount(0));
        Field(text, "gc_gen1_collections", GC.CollectionCount(1));
        Field(text, "gc_gen2_collections", GC.CollectionCount(2));
        Field(text, "gc_pause_time_total_ms", (long)GC.GetTotalPauseDuration().TotalMilliseconds);
    }

    private static void WriteStats(StringBuilder text, DataServer server)
    {
        var stats = server.Stats;
        var instant = server.Instantaneous;
        var (hits, misses) = ThreadCounters.KeyspaceTotals();
        long failed = 0, rejected = 0, unknown = 0, internalErrors = 0;
        foreach (var row in ThreadCounters.All())
        {
            for (int i = 0; i < row.Failed.Length; i++)
            {
                failed += row.Failed[i];
                rejected += row.Rejected[i];
            }
            unknown += row.UnknownCommands;
            internalErrors += row.InternalErrors;
        }
        long expired = server.Keyspace.ExpiredKeys;

        Field(text, "total_connections_received", stats.ConnectionsReceived);
        Field(text, "total_commands_processed", InstantaneousMetrics.TotalCommands());
        Field(text, "instantaneous_ops_per_sec", (long)Math.Round(instant.OpsPerSecond));
        Field(text, "total_net_input_bytes", stats.NetInputBytes);
        Field(text, "total_net_output_bytes", stats.NetOutputBytes);
        Field(text, "instantaneous_input_kbps", instant.InputBytesPerSecond / 1024, "0.00");
        Field(text, "instantaneous_output_kbps", instant.OutputBytesPerSecond / 1024, "0.00");
        Field(text, "rejected_connections", stats.RejectedConnections);
        var master = server.ReplicationMaster;
        Field(text, "sync_full", master.FullSyncs);
        Field(text, "sync_partial_ok", master.PartialSyncsOk);
        Field(text, "sync_partial_err", master.PartialSyncsRefused);
        Field(text, "expired_keys", expired);
        Field(text, "evicted_keys", server.Keyspace.Eviction.EvictedKeys);
        Field(text, "evicted_clients", server.ClientEviction.EvictedClients);
        Field(text, "total_eviction_exceeded_time", server.Keyspace.Eviction.TotalExceededMilliseconds);
        Field(text, "current_eviction_exceeded_time", server.Keyspace.Eviction.CurrentExceededMilliseconds);
        Field(text, "keyspace_hits", hits);
        Field(text, "keyspace_misses", misses);
        Field(text, "pubsub_channels", server.PubSub.ChannelCount);
        Field(text, "pubsub_patterns", server.PubSub.PatternCount);
        Field(text, "tracking_total_keys", server.Tracking.TotalKeys);
        Field(text, "tracking_total_items", server.Tracking.TotalItems);
        Field(text, "tracking_total_prefixes", server.Tracking.Prefixes);
        Field(text, "total_error_replies", failed + rejected + unknown + stats.ProtocolErrors);
        Field(text, "unexpected_error_replies", internalErrors);
        Field(text, "client_query_buffer_limit_disconnections", stats.QueryBufferDisconnects);
        Field(text, "client_output_buffer_limit_disconnections", stats.OutputBufferLimitDisconnects);
        Field(text, "protocol_errors", stats.ProtocolErrors);
        Field(text, "unknown_commands", unknown);
        Field(text, "acl_access_denied_auth", stats.AuthFailures);
        Field(text, "acl_access_denied_cmd", stats.AclDeniedCommands);
        Field(text, "acl_access_denied_key", stats.AclDeniedKeys);
        Field(text, "acl_access_denied_channel", stats.AclDeniedChannels);
        // Not Redis's: the HTTP listener's failed authentications, and requests refused for too many of them.
        Field(text, "http_auth_failures", stats.HttpAuthFailures);
        Field(text, "http_auth_rate_limited", stats.HttpAuthRateLimited);
        // Not Redis's: commands waiting on threads for shards now, and those refused for too many (max-waiting-commands).
        Field(text, "waiting_commands", server.Keyspace.Waits.Waiting);
        Field(text, "toobusy_rejected_calls", server.Keyspace.Waits.Refused);
    }

    private static void WriteReplication(StringBuilder text, DataServer server) => Replication.ReplicationInfo.Write(text, server);

    private static void WriteCpu(StringBuilder text, DataServer server)
    {
        // Environment.CpuUsage is one getrusage call; Process.GetCurrentProcess() built a Process
        // object and read /proc/self/stat on every INFO.
        var usage = Environment.CpuUsage;
        Field(text, "used_cpu_sys", usage.PrivilegedTime.TotalSeconds, "0.000000");
        Field(text, "used_cpu_user", usage.UserTime.TotalSeconds, "0.000000");
        Field(text, "used_cpu_sys_children", 0, "0.000000");
        Field(text, "used_cpu_user_children", 0, "0.000000");
    }

    /// <summary>cmdstat_name:calls=,usec=,usec_per_call=,rejected_calls=,failed_calls= for every command used.</summary>
    private static void WriteCommandStats(StringBuilder text, DataServer server)
    {
        var specs = server.Commands.AllSpecs;
        var calls = new long[specs.Count];
        var ticks = new long[specs.Count];
        var failed = new long[specs.Count];
        var rejected = new long[specs.Count];
        foreach (var row in ThreadCounters.All())
        {
            int n = Math.Min(specs.Count, row.Calls.Length);
            for (int i = 0; i < n; i++)
            {
                calls[i] += row.Calls[i];
                ticks[i] += row.Ticks[i];
                failed[i] += row.Failed[i];
                rejected[i] += row.Rejected[i];
            }
        }
        for (int i = 0; i < specs.Count; i++)
        {
            if (calls[i] == 0 && failed[i] == 0 && rejected[i] == 0)
                continue;
            long usec = (long)(ticks[i] * 1_000_000.0 / Stopwatch.Frequency);
            double perCall = calls[i] == 0 ? 0 : (double)usec / calls[i];
            text.Append("cmdstat_").Append(specs[i].FullName)
                .Append(":calls=").Append(calls[i].ToString(CultureInfo.InvariantCulture))
                .Append(",usec=").Append(usec.ToString(CultureInfo.InvariantCulture))
                .Append(",usec_per_call=").Append(perCall.ToString("0.00", CultureInfo.InvariantCulture))
                .Append(",rejected_calls=").Append(rejected[i].ToString(CultureInfo.InvariantCulture))
                .Append(",failed_calls=").Append(failed[i].ToString(CultureInfo.InvariantCulture))
                .Append("\r\n");
        }
    }

    /// <summary>"db0:keys=N,expires=M,avg_ttl=T" for each database holding keys, summed over shards.</summary>
    private static void WriteKeyspace(StringBuilder text, DataServer server)
    {
        var shards = server.Keyspace.Shards;
        for (int db = 0; db < server.Keyspace.DatabaseCount; db++)
        {
            long keys = 0, expires = 0;
            double ttlWeighted = 0;
            foreach (var shard in shards)
            {
                var database = shard.Databases[db];
                keys += database.Count;
                int volatileKeys = database.ExpiresCount;
                expires += volatileKeys;
                ttlWeighted += (double)database.AverageTtlMs * volatileKeys;
            }
            if (keys == 0)
                continue;
            long averageTtl = expires == 0 ? 0 : (long)(ttlWeighted / expires);
            text.Append("db").Append(db.ToString(CultureInfo.InvariantCulture))
                .Append(":keys=").Append(keys.ToString(CultureInfo.InvariantCulture))
                .Append(",expires=").Append(expires.ToString(CultureInfo.InvariantCulture))
                .Append(",avg_ttl=").Append(averageTtl.ToString(CultureInfo.InvariantCulture))
                .Append("\r\n");
        }
    }

    /// <summary>Redis's bytesToHuman: "512B", "1.50K", "2.00M"...</summary>
    public static string HumanBytes(long bytes)
    {
        if (bytes < 1024)
            return bytes.ToString(CultureInfo.InvariantCulture) + "B";
        string[] units = ["K", "M", "G", "T", "P"];
        double value = bytes;
        int unit = -1;
        while (value >= 1024 && unit < units.Length - 1)
        {
            value /= 1024;
            unit++;
        }
        return value.ToString("0.00", CultureInfo.InvariantCulture) + units[unit];
    }

    /// <summary>
    /// Physical memory of the machine: /proc/meminfo's MemTotal, or what the GC sees elsewhere.
    /// Read once: it does not change while the server runs, and INFO printed it twice a call.
    /// </summary>
    internal static long TotalSystemMemory => s_totalSystemMemory ??= ProcFs.MemInfoBytes("MemTotal") ?? GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;
    private static long? s_totalSystemMemory;

    /// <summary>The kernel release as uname -r prints it ("6.1.0-18-amd64"), which is what Redis shows. Read once.</summary>
    internal static string KernelRelease => s_kernelRelease ??=
        ProcFs.TryRead("/proc/sys/kernel/osrelease")?.Trim() ?? Environment.OSVersion.Version.ToString();
    private static string? s_kernelRelease;

    /// <summary>INFO's os field ("Linux 6.1.0-18-amd64 x86_64").</summary>
    private static string OsLine => s_osLine ??= $"{OperatingSystemName()} {KernelRelease} {ArchitectureName()}";
    private static string? s_osLine;

    internal static string OperatingSystemName() =>
        OperatingSystem.IsLinux() ? "Linux" : OperatingSystem.IsWindows() ? "Windows" : OperatingSystem.IsMacOS() ? "Darwin" : RuntimeInformation.OSDescription;

    internal static string ArchitectureName() => RuntimeInformation.OSArchitecture switch
    {
        Architecture.X64 => "x86_64",
        Architecture.Arm64 => "aarch64",
        Architecture.X86 => "i686",
        Architecture.Arm => "armv7l",
        var other => other.ToString().ToLowerInvariant(),
    };
}
