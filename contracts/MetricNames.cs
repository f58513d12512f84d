namespace Diagnostics.Contracts;

/// <summary>
/// The names of the sampler's figures, shared by the server that records them, the doctor rules
/// that read them and the studio that plots them. Rates are per second over the last interval.
/// </summary>
public static class MetricNames
{
    public const string OpsPerSecond = "ops_per_sec";
    /// <summary>The time each sample's rates were measured over, in seconds (a rate times it is the count of that interval).</summary>
    public const string SampleIntervalSeconds = "sample_interval_sec";
    /// <summary>Prefix of ops/s by command group: "ops_per_sec.string", "ops_per_sec.generic"...</summary>
    public const string OpsPerSecondGroupPrefix = "ops_per_sec.";
    public const string KeyspaceHitsPerSecond = "keyspace_hits_per_sec";
    public const string KeyspaceMissesPerSecond = "keyspace_misses_per_sec";
    public const string LatencyP50Micros = "latency_p50_usec";
    public const string LatencyP99Micros = "latency_p99_usec";
    public const string LatencyP999Micros = "latency_p999_usec";
    public const string ConnectedClients = "connected_clients";
    public const string RejectedConnectionsPerSecond = "rejected_connections_per_sec";
    /// <summary>Failed AUTH over RESP (INFO stats acl_access_denied_auth).</summary>
    public const string AuthFailuresPerSecond = "acl_access_denied_auth_per_sec";
    /// <summary>Wrong API keys, bearers and login-form secrets over HTTP (INFO stats http_auth_failures).</summary>
    public const string HttpAuthFailuresPerSecond = "http_auth_failures_per_sec";
    /// <summary>Calls the ACL refused (INFO stats acl_access_denied_cmd + _key + _channel), the studio's and API's refusals included.</summary>
    public const string AclDeniedPerSecond = "acl_access_denied_per_sec";
    /// <summary>TLS handshakes completed, and failed for any reason (INFO tls).</summary>
    public const string TlsHandshakesPerSecond = "tls_handshakes_per_sec";
    public const string TlsHandshakeFailuresPerSecond = "tls_handshake_failures_per_sec";
    /// <summary>The slowest TLS handshake of the interval.</summary>
    public const string TlsHandshakeMaxMicros = "tls_handshake_max_usec";
    /// <summary>Days until the certificate in use expires (absent while TLS is off).</summary>
    public const string TlsCertExpiresInDays = "tls_cert_expires_in_days";
    public const string NetInputBytesPerSecond = "net_input_bytes_per_sec";
    public const string NetOutputBytesPerSecond = "net_output_bytes_per_sec";
    public const string CpuProcessPercent = "cpu_process_percent";
    public const string CpuUserPercent = "cpu_user_percent";
    public const string CpuSystemPercent = "cpu_system_percent";
    public const string CpuMachinePercent = "cpu_machine_percent";
    public const string TrackedBytes = "memory_tracked_bytes";
    public const string ManagedHeapBytes = "memory_managed_heap_bytes";
    public const string ResidentBytes = "memory_rss_bytes";
    public const string MaxMemoryBytes = "maxmemory_bytes";
    public const string GcPauseMillisPerSecond = "gc_pause_ms_per_sec";
    public const string GcCollectionsPerSecond = "gc_collections_per_sec";
    /// <summary>Full (generation 2) collections: the expensive ones.</summary>
    public const string Gen2CollectionsPerSecond = "gc_gen2_collections_per_sec";
    public const string ManagedAllocatedBytesPerSecond = "managed_allocated_bytes_per_sec";
    public const string DiskWriteBytesPerSecond = "disk_write_bytes_per_sec";
    public const string DiskReadBytesPerSecond = "disk_read_bytes_per_sec";
    /// <summary>Disk bytes per second for one purpose, as INFO diskio names it: "disk_bytes_per_sec.aof_write".</summary>
    public const string DiskBytesPerSecondPurposePrefix = "disk_bytes_per_sec.";
    public const string FsyncsPerSecond = "fsyncs_per_sec";
    /// <summary>The slowest fsync (or fdatasync) completed in the interval.</summary>
    public const string FsyncMaxMicros = "fsync_max_usec";
    public const string ExpiredKeysPerSecond = "expired_keys_per_sec";
    public const string EvictedKeysPerSecond = "evicted_keys_per_sec";
    /// <summary>Commands refused with OOM (over maxmemory, nothing left to evict).</summary>
    public const string OomRejectionsPerSecond = "oom_rejections_per_sec";
    public const string ThreadPoolQueueLength = "threadpool_queue_length";
    /// <summary>The most commands waiting on threads for shards at once in the interval.</summary>
    public const string ShardWaitersPeak = "shard_waiters_peak";
    public const string TooBusyRefusalsPerSecond = "toobusy_refusals_per_sec";
    /// <summary>Stream entries delivered into consumer groups' pending lists, and acknowledged (XACK).</summary>
    public const string StreamDeliveriesPerSecond = "stream_deliveries_per_sec";
    public const string StreamAcksPerSecond = "stream_acks_per_sec";
    public const string ThreadPoolThreads = "threadpool_threads";
    public const string ProcessThreads = "process_threads";
    public const string SlowCommandsPerSecond = "slow_commands_per_sec";
    public const string LargestOutputBufferBytes = "largest_output_buffer_bytes";

    // Replication. A master's figures are present once its backlog is active; a replica's while it is one.
    /// <summary>Bytes of replication stream written per second (the change of master_repl_offset).</summary>
    public const string ReplStreamBytesPerSecond = "repl_stream_bytes_per_sec";
    /// <summary>The backlog's history length as a share of repl-backlog-size.</summary>
    public const string ReplBacklogFillPercent = "repl_backlog_fill_percent";
    public const string ReplConnectedReplicas = "repl_connected_replicas";
    /// <summary>
    /// Per replica, a family each, named by the replica's "ip:port" after the prefix
    /// ("repl_lag_bytes.10.0.0.5:6379"). A replica's series appear when it attaches, read 0 while it
    /// is away, and are forgotten after an hour without it, as every series is.
    /// </summary>
    public const string ReplLagBytesPrefix = "repl_lag_bytes.";
    /// <summary>Per replica: how long the master has had data the replica has not acknowledged (see the sampler's source).</summary>
    public const string ReplLagSecondsPrefix = "repl_lag_sec.";
    /// <summary>Per replica: seconds since its last REPLCONF ACK.</summary>
    public const string ReplAckAgeSecondsPrefix = "repl_ack_age_sec.";
    /// <summary>Per replica: snapshot and stream bytes sent to it per second.</summary>
    public const string ReplSentBytesPerSecondPrefix = "repl_sent_bytes_per_sec.";
    /// <summary>A replica's link to its master: 1 up (connected), 0 otherwise.</summary>
    public const string ReplLinkUp = "repl_link_up";
    /// <summary>A replica's stream read but not yet applied (what it can know of its own lag).</summary>
    public const string ReplLinkLagBytes = "repl_link_lag_bytes";
    /// <summary>A replica's seconds since its master last sent anything (or since the link went down).</summary>
    public const string ReplMasterLastIoSeconds = "repl_master_last_io_sec";

    // The monitor's figures: the kernel's and the runtime's view, present while a monitor is attached.
    public const string KernelFileWriteBytesPerSecond = "kernel_file_write_bytes_per_sec";
    public const string KernelFileReadBytesPerSecond = "kernel_file_read_bytes_per_sec";
    public const string KernelFsyncsPerSecond = "kernel_fsyncs_per_sec";
    /// <summary>Upper bound of the slowest fsync the kernel timed in the interval.</summary>
    public const string KernelFsyncMaxMicros = "kernel_fsync_max_usec";
    public const string KernelSendBytesPerSecond = "kernel_send_bytes_per_sec";
    public const string KernelReceiveBytesPerSecond = "kernel_receive_bytes_per_sec";
    public const string KernelDeviceWriteBytesPerSecond = "kernel_device_write_bytes_per_sec";
    public const string KernelDeviceReadBytesPerSecond = "kernel_device_read_bytes_per_sec";
    public const string MonitorEventsPerSecond = "monitor_events_per_sec";
    /// <summary>Events lost anywhere between the kernel or runtime and the server, per second.</summary>
    public const string MonitorDroppedPerSecond = "monitor_dropped_per_sec";
    public const string RuntimeGcPausesPerSecond = "runtime_gc_pauses_per_sec";
    public const string RuntimeGcPauseMaxMicros = "runtime_gc_pause_max_usec";
    public const string RuntimeAllocatedBytesPerSecond = "runtime_allocated_bytes_per_sec";

    private static readonly (HashSet<string> Names, string[] Prefixes) s_known = Known();

    /// <summary>
    /// True for a name the sampler records (a constant here, or one of a family: a name past one of
    /// the *Prefix constants): settings that name a metric are checked against it.
    /// </summary>
    public static bool IsSeries(string name)
    {
        if (s_known.Names.Contains(name))
            return true;
        foreach (string prefix in s_known.Prefixes)
            if (name.Length > prefix.Length && name.StartsWith(prefix, StringComparison.Ordinal))
                return true;
        return false;
    }

    // Read once from this class's constants, so a new metric needs no second list.
    private static (HashSet<string>, string[]) Known()
    {
        var names = new HashSet<string>(StringComparer.Ordinal);
        var prefixes = new List<string>();
        foreach (var field in typeof(MetricNames).GetFields(System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.Static))
        {
            if (!field.IsLiteral || field.GetRawConstantValue() is not string value)
                continue;
            if (field.Name.EndsWith("Prefix", StringComparison.Ordinal))
                prefixes.Add(value);
            else
                names.Add(value);
        }
        return (names, prefixes.ToArray());
    }
}
