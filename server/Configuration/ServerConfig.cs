using System.Globalization;
using Diagnostics.Doctor;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using Diagnostics.Studio.Security;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Configuration;

/// <summary>
/// The server's settings, named and spelled as redis-server's. Each setting is a
/// <see cref="ConfigParameter"/> in one table that the command line, redis.conf files,
/// CONFIG GET/SET and CONFIG REWRITE all go through.
/// </summary>
public sealed partial class ServerConfig
{
    private readonly Dictionary<string, ConfigParameter> _parameters = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<ConfigParameter> _ordered = [];

    public ServerConfig()
    {
        Int("port", () => Port, v => Port = v, 0, 65535, mutable: false);
        Add(new ConfigParameter("bind", () => string.Join(' ', Bind), v => SetBind(v), mutable: false));
        AddTlsParameters();
        Add(new ConfigParameter("requirepass", () => RequirePass ?? "", v => { RequirePass = v.Length == 0 ? null : v; RequirePassChanged?.Invoke(); return null; }) { Secrecy = ConfigSecrecy.Sensitive });
        Add(new ConfigParameter("aclfile", () => AclFile, v => { AclFile = v; return null; }, mutable: false) { Protected = true });
        Int("acllog-max-len", () => AclLogMaxLength, v => { AclLogMaxLength = v; AclLogMaxLengthChanged?.Invoke(); }, 0, int.MaxValue);
        // Replication (this server as a replica): the master's credentials are as sensitive as in Redis.
        Add(new ConfigParameter("masterauth", () => MasterAuth ?? "", v => { MasterAuth = v.Length == 0 ? null : v; return null; }) { Secrecy = ConfigSecrecy.Sensitive });
        Add(new ConfigParameter("masteruser", () => MasterUser ?? "", v => { MasterUser = v.Length == 0 ? null : v; return null; }) { Secrecy = ConfigSecrecy.Sensitive });
        // The master followed now (REPLICAOF moves it), as Redis's CONFIG GET and REWRITE show server.masterhost;
        // on a master CONFIG REWRITE removes the line, so a restart does not follow a master it left.
        Add(new ConfigParameter("replicaof", () => ReplicaOf is { } m ? $"{m.Host} {m.Port}" : "", SetReplicaOf, mutable: false, "slaveof") { RemovedWhenEmpty = true });
        YesNo("replica-read-only", () => ReplicaReadOnly, v => ReplicaReadOnly = v, "slave-read-only");
        YesNo("replica-serve-stale-data", () => ReplicaServeStaleData, v => ReplicaServeStaleData = v, "slave-serve-stale-data");
        Memory("repl-backlog-size", () => ReplBacklogSize, v => { ReplBacklogSize = Math.Max(v, 16 * 1024); ReplicationBacklogChanged?.Invoke(); }, 1, long.MaxValue);
        Long("repl-backlog-ttl", () => ReplBacklogTtlSeconds, v => ReplBacklogTtlSeconds = v, 0, long.MaxValue);
        Bool("repl-diskless-sync", () => ReplDisklessSync, v => ReplDisklessSync = v);
        // Each replica gets its own snapshot at once (a cut costs a moment, not a fork), so there is
        // nothing to wait for to share one: accepted for Redis's tools, they change nothing here.
        Long("repl-diskless-sync-delay", () => ReplDisklessSyncDelay, v => ReplDisklessSyncDelay = v, 0, int.MaxValue);
        Long("repl-diskless-sync-max-replicas", () => ReplDisklessSyncMaxReplicas, v => ReplDisklessSyncMaxReplicas = v, 0, int.MaxValue);
        Int("repl-timeout", () => ReplTimeoutSeconds, v => ReplTimeoutSeconds = v, 1, int.MaxValue);
        Int("repl-ping-replica-period", () => ReplPingReplicaPeriodSeconds, v => ReplPingReplicaPeriodSeconds = v, 1, int.MaxValue, aliases: "repl-ping-slave-period");
        Int("replica-priority", () => ReplicaPriority, v => ReplicaPriority = v, 0, int.MaxValue, aliases: "slave-priority");
        YesNo("replica-announced", () => ReplicaAnnounced, v => ReplicaAnnounced = v);
        Add(new ConfigParameter("replica-announce-ip", () => ReplicaAnnounceIp ?? "", v => { ReplicaAnnounceIp = v.Length == 0 ? null : v; return null; }, true, "slave-announce-ip"));
        Int("replica-announce-port", () => ReplicaAnnouncePort, v => ReplicaAnnouncePort = v, 0, 65535, aliases: "slave-announce-port");
        Int("maxclients", () => MaxClients, v => MaxClients = v, 1, 1_000_000);
        Int("databases", () => Databases, v => Databases = v, 1, 1_000_000, mutable: false);
        Bool("protected-mode", () => ProtectedMode, v => ProtectedMode = v);
        Memory("proto-max-bulk-len", () => Limits.ProtoMaxBulkLength, v => Limits.ProtoMaxBulkLength = v, 1024 * 1024, int.MaxValue - 1024L);
        Memory("client-query-buffer-limit", () => Limits.ClientQueryBufferLimit, v => Limits.ClientQueryBufferLimit = v, 1024 * 1024, long.MaxValue);
        Add(new ConfigParameter("client-output-buffer-limit", () => OutputBufferLimits.ToString(), v =>
        {
            string? problem = OutputBufferLimits.TryApply(v, out var limits);
            OutputBufferLimits = limits;
            return problem;
        }));
        Int("shards", () => Shards, v => _shards = v, 1, 1024, mutable: false);
        Add(new ConfigParameter("execution-mode", () => Mode == ExecutionMode.Executor ? "executor" : "inline", SetMode, mutable: false));
        Add(new ConfigParameter("transport", () => Transport, v => OneOf(v, ["sockets", "kestrel"], s => Transport = s), mutable: false));
        Int("io-threads", () => IoThreads, v => IoThreads = v, 1, 128, mutable: false);
        // This server's own: the C allocator under the tracked allocator (chosen before any data is allocated).
        Add(new ConfigParameter("allocator", () => Allocator.ToString().ToLowerInvariant(),
            v => OneOf(v, ["auto", "glibc", "jemalloc", "mimalloc"], s => Allocator = Enum.Parse<AllocatorChoice>(s, ignoreCase: true)), mutable: false));
        Int("hz", () => Hz, v => { Hz = v; HzChanged?.Invoke(v); }, 1, 500);
        Int("timeout", () => Timeout, v => Timeout = v, 0, int.MaxValue);
        Int("tcp-keepalive", () => TcpKeepAlive, v => TcpKeepAlive = v, 0, int.MaxValue);
        Add(new ConfigParameter("dir", () => Dir, SetDir) { Protected = true });
        Add(new ConfigParameter("logfile", () => LogFile, v => { LogFile = v; return null; }, mutable: false) { Protected = true });
        Add(new ConfigParameter("loglevel", () => LogLevel, v => OneOf(v, ["debug", "verbose", "notice", "warning", "nothing"], s => LogLevel = s)));
        Int("http-port", () => HttpPort, v => HttpPort = v, 0, 65535, mutable: false);
        Add(new ConfigParameter("http-bind", () => string.Join(' ', HttpBind), v => { HttpBind = Split(v); return null; }, mutable: false));
        Add(new ConfigParameter("http-api-key", () => HttpApiKey ?? "", SetHttpApiKey) { Secrecy = ConfigSecrecy.Credential });
        Add(new ConfigParameter("http-api-key-scope", () => StudioPermission.Names(HttpApiKeyScope), SetHttpApiKeyScope));
        Bool("diagnostics-sampler", () => DiagnosticsSampler, v => { DiagnosticsSampler = v; DiagnosticsSamplerChanged?.Invoke(); });
        // Where a stream starts a new node, as Redis decides (the node's listpack bytes, its entries).
        Memory("stream-node-max-bytes", () => StreamNodeMaxBytes, v => StreamNodeMaxBytes = v, 0, long.MaxValue);
        Int("stream-node-max-entries", () => StreamNodeMaxEntries, v => StreamNodeMaxEntries = v, 0, int.MaxValue);
        Int("max-waiting-commands", () => MaxWaitingCommands, v => { MaxWaitingCommands = v; MaxWaitingCommandsChanged?.Invoke(); }, 0, 1_000_000);
        // Debug packages the server takes by itself (Diagnostics/Triggers).
        Add(new ConfigParameter("package-trigger-severity", () => PackageTriggerSeverity,
            v => OneOf(v, ["off", "warning", "critical"], s => PackageTriggerSeverity = s)));
        Add(new ConfigParameter("package-trigger-metrics", () => string.Join(' ', PackageTriggerMetrics), v =>
        {
            if (Diagnostics.Triggers.MetricTrigger.TryParse(v, out var rules) is { } problem)
                return problem;
            PackageTriggerMetrics = rules;
            return null;
        }));
        Int("package-trigger-interval", () => PackageTriggerIntervalSeconds, v => PackageTriggerIntervalSeconds = v, 60, 86_400 * 7);
        Int("package-trigger-keep", () => PackageTriggerKeep, v => PackageTriggerKeep = v, 1, 1000);
        Int("hotkey-sample-period", () => HotKeySamplePeriod, v => { HotKeySamplePeriod = v; HotKeySamplePeriodChanged?.Invoke(); }, 0, 1_000_000);
        Add(new ConfigParameter("daemonize", () => "no", v => v.Equals("no", StringComparison.OrdinalIgnoreCase) ? null : "daemonize is not supported; run under a service manager", mutable: false));
        Add(new ConfigParameter("pidfile", () => PidFile, v => { PidFile = v; return null; }, mutable: false) { Protected = true });
        // Immutable as in Redis, so a client that can CONFIG SET cannot open DEBUG to itself.
        Add(new ConfigParameter("enable-debug-command", () => EnableDebugCommand,
            v => OneOf(v, ["no", "yes", "local"], s => EnableDebugCommand = s), mutable: false));
        // Who may CONFIG SET the Protected settings; immutable for the same reason.
        Add(new ConfigParameter("enable-protected-configs", () => EnableProtectedConfigs,
            v => OneOf(v, ["no", "yes", "local"], s => EnableProtectedConfigs = s), mutable: false));

        Add(new ConfigParameter("appendonly", () => AppendOnly ? "yes" : "no", SetAppendOnly));
        Add(new ConfigParameter("appendfilename", () => AppendFileName, v => PlainFileName(v, "appendfilename can't be a path, just a filename", s => AppendFileName = s), mutable: false) { Protected = true });
        Add(new ConfigParameter("appenddirname", () => AppendDirName, v => PlainFileName(v, "appenddirname can't be a path, just a dirname", s => AppendDirName = s), mutable: false) { Protected = true });
        Add(new ConfigParameter("appendfsync", () => AppendFsync switch { FsyncPolicy.Always => "always", FsyncPolicy.No => "no", _ => "everysec" },
            v => OneOf(v, ["always", "everysec", "no"], s =>
            {
                AppendFsync = s switch { "always" => FsyncPolicy.Always, "no" => FsyncPolicy.No, _ => FsyncPolicy.EverySec };
                AppendFsyncChanged?.Invoke();
            })));
        Int("auto-aof-rewrite-percentage", () => AutoAofRewritePercentage, v => AutoAofRewritePercentage = v, 0, int.MaxValue);
        Memory("auto-aof-rewrite-min-size", () => AutoAofRewriteMinSize, v => AutoAofRewriteMinSize = v, 0, long.MaxValue);
        Bool("aof-load-truncated", () => AofLoadTruncated, v => AofLoadTruncated = v);
        Add(new ConfigParameter("slowlog-log-slower-than", () => SlowLogSlowerThanMicros.ToString(CultureInfo.InvariantCulture), v =>
        {
            if (!long.TryParse(v, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long micros))
                return "argument couldn't be parsed into an integer";
            SlowLogSlowerThanMicros = micros;
            SlowLogChanged?.Invoke();
            return null;
        }));
        Add(new ConfigParameter("busy-reply-threshold", () => BusyReplyThresholdMs.ToString(CultureInfo.InvariantCulture), v =>
        {
            if (!long.TryParse(v, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long ms))
                return "argument couldn't be parsed into an integer";
            if (ms < 0)
                return $"argument must be between 0 and {long.MaxValue} inclusive";
            BusyReplyThresholdMs = ms;
            return null;
        }, aliases: "lua-time-limit"));
        Int("slowlog-max-len", () => SlowLogMaxLength, v => { SlowLogMaxLength = v; SlowLogChanged?.Invoke(); }, 0, int.MaxValue);
        Bool("aof-rewrite-incremental-fsync", () => AofRewriteIncrementalFsync, v => AofRewriteIncrementalFsync = v);
        Bool("latency-tracking", () => LatencyTracking, v => { LatencyTracking = v; LatencyChanged?.Invoke(); });
        Add(new ConfigParameter("latency-tracking-info-percentiles", () => LatencyPercentiles.Format(LatencyTrackingInfoPercentiles), v =>
        {
            if (LatencyPercentiles.Parse(v, out var percentiles) is { } problem)
                return problem;
            LatencyTrackingInfoPercentiles = percentiles;
            return null;
        }));
        Add(new ConfigParameter("latency-monitor-threshold", () => LatencyMonitorThresholdMs.ToString(CultureInfo.InvariantCulture), v =>
        {
            if (!long.TryParse(v, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long ms))
                return "argument couldn't be parsed into an integer";
            if (ms < 0)
                return $"argument must be between 0 and {long.MaxValue} inclusive";
            LatencyMonitorThresholdMs = ms;
            LatencyChanged?.Invoke();
            return null;
        }));

        // Debug packages opened in the studio are untrusted input held on this server's heap.
        Memory(PackageLimits.PackageSizeSetting, () => PackageLimits.MaxPackageBytes, v => PackageLimits = PackageLimits with { MaxPackageBytes = v }, 1024 * 1024, long.MaxValue);
        Memory(PackageLimits.EntrySizeSetting, () => PackageLimits.MaxEntryBytes, v => PackageLimits = PackageLimits with { MaxEntryBytes = v }, 1024 * 1024, long.MaxValue);
        Memory(PackageLimits.UnpackedSizeSetting, () => PackageLimits.MaxUnpackedBytes, v => PackageLimits = PackageLimits with { MaxUnpackedBytes = v }, 1024 * 1024, long.MaxValue);
        Memory(PackageLimits.MemorySetting, () => PackageLimits.MaxMemoryBytes, v => PackageLimits = PackageLimits with { MaxMemoryBytes = v }, 1024 * 1024, long.MaxValue);

        Memory("maxmemory", () => MaxMemory, v => { MaxMemory = v; EvictionChanged?.Invoke(); }, 0, long.MaxValue);
        Add(new ConfigParameter("maxmemory-policy", () => EvictionPolicyNames.Of(MaxMemoryPolicy), v =>
        {
            if (!EvictionPolicyNames.TryParse(v, out var policy))
                return "argument(s) must be one of the following: " + string.Join(", ", EvictionPolicyNames.All);
            MaxMemoryPolicy = policy;
            EvictionChanged?.Invoke();
            return null;
        }));
        Add(new ConfigParameter("maxmemory-clients", () => MaxMemoryClientsText, SetMaxMemoryClients));
        Int("maxmemory-samples", () => MaxMemorySamples, v => { MaxMemorySamples = v; EvictionChanged?.Invoke(); }, 1, int.MaxValue);
        Int("maxmemory-eviction-tenacity", () => MaxMemoryEvictionTenacity, v => { MaxMemoryEvictionTenacity = v; EvictionChanged?.Invoke(); }, 0, 100);
        Int("lfu-log-factor", () => LfuLogFactor, v => { LfuLogFactor = v; EvictionChanged?.Invoke(); }, 0, int.MaxValue);
        Int("lfu-decay-time", () => LfuDecayTime, v => { LfuDecayTime = v; EvictionChanged?.Invoke(); }, 0, int.MaxValue);

        Add(new ConfigParameter("notify-keyspace-events", () => Engine.KeyspaceEventFlags.Format(NotifyKeyspaceEvents), v =>
        {
            if (!Engine.KeyspaceEventFlags.TryParse(v, out var flags))
                return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
            NotifyKeyspaceEvents = flags;
            NotifyKeyspaceEventsChanged?.Invoke();
            return null;
        }));

        // HyperLogLog values are Redis's own format, so the sparse form's ceiling is a real setting.
        Memory("hll-sparse-max-bytes", () => HllSparseMaxBytes, v => HllSparseMaxBytes = v, 0, long.MaxValue);

        // The limits under which Redis keeps a value in a compact encoding: values here have one
        // structure per type, but RDB files and DUMP payloads carry the encoding Redis would have
        // chosen, so these are real settings (with Redis 7.0's ziplist-era aliases and ranges).
        Long("hash-max-listpack-entries", () => HashMaxListpackEntries, v => HashMaxListpackEntries = v, 0, long.MaxValue, "hash-max-ziplist-entries");
        Memory("hash-max-listpack-value", () => HashMaxListpackValue, v => HashMaxListpackValue = v, 0, long.MaxValue, "hash-max-ziplist-value");
        Long("zset-max-listpack-entries", () => ZsetMaxListpackEntries, v => ZsetMaxListpackEntries = v, 0, long.MaxValue, "zset-max-ziplist-entries");
        Memory("zset-max-listpack-value", () => ZsetMaxListpackValue, v => ZsetMaxListpackValue = v, 0, long.MaxValue, "zset-max-ziplist-value");
        Long("set-max-intset-entries", () => SetMaxIntsetEntries, v => SetMaxIntsetEntries = v, 0, long.MaxValue);
        // Redis 7.2's listpack sets (7.0 has no such encoding and no such settings).
        Long("set-max-listpack-entries", () => SetMaxListpackEntries, v => SetMaxListpackEntries = v, 0, long.MaxValue);
        Memory("set-max-listpack-value", () => SetMaxListpackValue, v => SetMaxListpackValue = v, 0, long.MaxValue);
        Int("list-max-listpack-size", () => ListMaxListpackSize, v => ListMaxListpackSize = v, int.MinValue, int.MaxValue, aliases: "list-max-ziplist-size");
        Int("list-compress-depth", () => ListCompressDepth, v => ListCompressDepth = v, 0, int.MaxValue);
        Bool("rdbcompression", () => RdbCompression, v => RdbCompression = v);
        Bool("rdbchecksum", () => RdbChecksum, v => RdbChecksum = v);

        // Redis tunables that shape internal encodings or features this server does not have:
        // accepted and reported so configuration files and tools written for Redis keep working.
        foreach (var (name, value) in InertDefaults)
            Inert(name, value);
        // RDB snapshots (Persistence/Snapshots).
        Add(new ConfigParameter("dbfilename", () => DbFilename, v =>
        {
            // Redis's isValidDBfilename: a name in dir, never a path out of it.
            if (v.Length == 0 || v.Contains('/') || v.Contains('\\') || v is "." or "..")
                return "dbfilename can't be a path, just a filename";
            DbFilename = v;
            return null;
        }) { Protected = true });
        Add(new ConfigParameter("save", () => SaveSchedule.ToString(), v =>
        {
            if (!Persistence.Snapshots.SaveSchedule.TryParse(v, out var schedule))
                return "Invalid save parameters";
            SaveSchedule = schedule;
            return null;
        }));
        Bool("stop-writes-on-bgsave-error", () => StopWritesOnBgsaveError, v => StopWritesOnBgsaveError = v);
        Bool("aof-use-rdb-preamble", () => AofUseRdbPreamble, v => AofUseRdbPreamble = v);
    }

    /// <summary>A rewrite writes the AOF's base as an RDB (Redis's default) rather than as commands.</summary>
    public bool AofUseRdbPreamble { get; private set; } = true;

    /// <summary>The RDB snapshot's file name in dir.</summary>
    public string DbFilename { get; private set; } = "dump.rdb";
    /// <summary>When snapshots are taken by themselves (Redis 7's default unless configured).</summary>
    public Persistence.Snapshots.SaveSchedule SaveSchedule { get; private set; } = Persistence.Snapshots.SaveSchedule.Default;
    public bool StopWritesOnBgsaveError { get; private set; } = true;
    // A configuration file's save lines add up, as in Redis; the first one replaces the default.
    private bool _saveReadAtStartup;

    public int Port { get; private set; } = 6379;

    /// <summary>masterauth: the password this server gives its master (AUTH in the handshake); never logged or shown.</summary>
    public string? MasterAuth { get; set; }
    /// <summary>masteruser: the ACL user of <see cref="MasterAuth"/>, or null for AUTH with the password alone.</summary>
    public string? MasterUser { get; set; }
    /// <summary>replicaof: the master to replicate from, or null (a master); set at start, then by REPLICAOF (<see cref="FollowMaster"/>).</summary>
    /// <remarks>One reference, so CONFIG GET on another thread never sees one master's host with another's port.</remarks>
    public MasterAddress? ReplicaOf { get; private set; }

    /// <summary>REPLICAOF changed the master (null: REPLICAOF NO ONE), so CONFIG GET / REWRITE show where the server replicates from now.</summary>
    public void FollowMaster(string? host, int port) => ReplicaOf = host is null ? null : new MasterAddress(host, port);
    /// <summary>replica-read-only: normal clients' writes are refused while this server is a replica.</summary>
    public bool ReplicaReadOnly { get; set; } = true;
    /// <summary>replica-serve-stale-data: commands go on while the master link is down (no: only the stale-allowed ones).</summary>
    public bool ReplicaServeStaleData { get; set; } = true;
    /// <summary>repl-timeout, seconds: the master link's connect, handshake and silence limit.</summary>
    /// <summary>repl-backlog-size: stream history kept for partial resyncs (Redis's floor of 16 KB applies).</summary>
    public long ReplBacklogSize { get; private set; } = 1024 * 1024;
    public event Action? ReplicationBacklogChanged;
    /// <summary>repl-backlog-ttl: seconds without replicas after which a master frees its backlog (0: never).</summary>
    public long ReplBacklogTtlSeconds { get; private set; } = 3600;
    /// <summary>repl-diskless-sync: stream a full sync's snapshot to a replica that takes it ("capa eof") instead of through a file.</summary>
    public bool ReplDisklessSync { get; private set; } = true;
    public long ReplDisklessSyncDelay { get; private set; } = 5;
    public long ReplDisklessSyncMaxReplicas { get; private set; }
    public int ReplTimeoutSeconds { get; set; } = 60;
    /// <summary>repl-ping-replica-period, seconds: how often a master pings its replicas (the master side's).</summary>
    public int ReplPingReplicaPeriodSeconds { get; set; } = 10;
    public int ReplicaPriority { get; set; } = 100;
    public bool ReplicaAnnounced { get; set; } = true;
    /// <summary>replica-announce-ip / -port: what the handshake tells the master instead of our address and port.</summary>
    public string? ReplicaAnnounceIp { get; set; }
    public int ReplicaAnnouncePort { get; set; }
    public string[] Bind { get; private set; } = ["127.0.0.1", "-::1"];
    public string? RequirePass { get; set; }
    /// <summary>Raised when requirepass changes: the default user's password follows it.</summary>
    public event Action? RequirePassChanged;
    /// <summary>The configuration directive that declares an ACL user ("user alice on >pw ~* +@all").</summary>
    public const string UserDirective = "user";
    /// <summary>The "user" lines read at start, each its name then its rules, applied once the ACL users exist.</summary>
    public List<string[]> UserLines { get; } = [];
    /// <summary>aclfile: where ACL LOAD and SAVE read and write the users; empty for none.</summary>
    public string AclFile { get; private set; } = "";
    /// <summary>The aclfile's full path, a relative one under dir as in Redis (which works in dir); empty for none.</summary>
    public string AclFilePath => AclFile.Length == 0 ? "" : Path.GetFullPath(AclFile, Dir);
    /// <summary>acllog-max-len: ACL LOG entries kept.</summary>
    public int AclLogMaxLength { get; private set; } = 128;
    public event Action? AclLogMaxLengthChanged;
    public int MaxClients { get; private set; } = 10000;
    public int Databases { get; private set; } = 16;
    public bool ProtectedMode { get; private set; } = true;
    public ProtocolLimits Limits { get; } = new();
    /// <summary>client-output-buffer-limit: per client class, when unsent replies close the client.</summary>
    public OutputBufferLimits OutputBufferLimits { get; private set; } = OutputBufferLimits.Default;
    /// <summary>
    /// Keyspace partitions. Unless set: one per core for executor mode (each has a thread), eight
    /// per core for inline mode, where a shard is only a lock: with 2 shards the two socket
    /// threads collided often enough to triple the p99 latency of SET at pipeline 1 (3.6 ms
    /// against 1.3 ms with 16 shards, README Benchmarks).
    /// </summary>
    public long StreamNodeMaxBytes { get; private set; } = 4096;
    public int StreamNodeMaxEntries { get; private set; } = 100;

    public int Shards => _shards ?? (Mode == ExecutionMode.Executor ? Environment.ProcessorCount : Environment.ProcessorCount * 8);
    private int? _shards;
    public ExecutionMode Mode { get; private set; } = ExecutionMode.Inline;
    public int Hz { get; private set; } = 10;
    /// <summary>
    /// Socket event-loop threads, each running its connections' requests (with the sockets
    /// transport). One per core by default; 1 serves everything from a single loop, as Redis does,
    /// which trades pipelined throughput for fewer context switches (README, Benchmarks).
    /// </summary>
    public int IoThreads { get; private set; } = Environment.ProcessorCount;
    /// <summary>The RESP listener: "sockets" (lean, default) or "kestrel" (ConnectionHandler).</summary>
    public string Transport { get; private set; } = "sockets";

    /// <summary>
    /// The C allocator that serves tracked blocks (startup only; see README, Memory allocator).
    /// glibc by default: mimalloc measured faster on frees from another thread, but two eviction
    /// tests (EvictionTests) fail with it and were not yet explained.
    /// </summary>
    public AllocatorChoice Allocator { get; private set; } = AllocatorChoice.Glibc;
    public int Timeout { get; private set; }
    public int TcpKeepAlive { get; private set; } = 300;
    public string Dir { get; private set; } = Directory.GetCurrentDirectory();
    public string LogFile { get; private set; } = "";
    public string LogLevel { get; private set; } = "notice";
    public int HttpPort { get; private set; } = 8080;
    public string[] HttpBind { get; private set; } = ["127.0.0.1"];
    /// <summary>
    /// The key every HTTP request must present (Authorization: Bearer, or X-Api-Key) when set;
    /// required when the HTTP listener binds beyond loopback.
    /// </summary>
    public string? HttpApiKey { get; private set; }
    /// <summary>
    /// What the API key may do (permission names: watch clients kill-clients slowlog keys config
    /// acl-log script-source, or all): the key is a machine credential, so a scraper's key can be
    /// kept to watch while people log in as ACL users.
    /// </summary>
    public StudioPermissions HttpApiKeyScope { get; private set; } = StudioPermissions.All;
    /// <summary>The 1 Hz sampler that feeds the history; off only to measure what it costs.</summary>
    public bool DiagnosticsSampler { get; private set; } = true;
    /// <summary>One command in this many has its first key sampled for the hot-key view; 0 turns it off.</summary>
    /// <summary>The most commands that may wait on threads for shards other commands hold (Engine/ShardWaitLimit); 0: no limit.</summary>
    public int MaxWaitingCommands { get; private set; } = Engine.ShardWaitLimit.DefaultLimit;
    public event Action? MaxWaitingCommandsChanged;

    /// <summary>The least severe doctor finding that makes the server take a package: off, warning or critical.</summary>
    public string PackageTriggerSeverity { get; private set; } = "critical";
    public IReadOnlyList<Diagnostics.Triggers.MetricTrigger> PackageTriggerMetrics { get; private set; } = [];
    /// <summary>The least time between two packages a trigger takes.</summary>
    public int PackageTriggerIntervalSeconds { get; private set; } = 300;
    /// <summary>How many triggered packages the folder keeps (the oldest go first).</summary>
    public int PackageTriggerKeep { get; private set; } = 5;
    public int HotKeySamplePeriod { get; private set; } = Diagnostics.HotKeys.HotKeys.DefaultPeriod;
    public event Action? HotKeySamplePeriodChanged;
    public event Action? DiagnosticsSamplerChanged;
    public string PidFile { get; private set; } = "";
    /// <summary>
    /// Who may run DEBUG: "no", "yes" or "local" (loopback clients only). Redis defaults to "no";
    /// the default here is "local" because DEBUG SLEEP and DEBUG OBJECT are diagnostics tools an
    /// operator on the host should have, while remote clients still cannot stall the server.
    /// </summary>
    public string EnableDebugCommand { get; private set; } = "local";
    /// <summary>
    /// Who may CONFIG SET the settings that name files and directories (dir, dbfilename...): "no"
    /// (the default, as Redis's), "yes" or "local" (loopback clients only). They stay settable
    /// from the configuration file and the command line.
    /// </summary>
    public string EnableProtectedConfigs { get; private set; } = "no";
    /// <summary>The configuration file the server started from, if any (CONFIG REWRITE target).</summary>
    public string? ConfigFile { get; set; }

    public bool AppendOnly { get; private set; }
    public string AppendFileName { get; private set; } = "appendonly.aof";
    public string AppendDirName { get; private set; } = "appendonlydir";
    public FsyncPolicy AppendFsync { get; private set; } = FsyncPolicy.EverySec;
    public int AutoAofRewritePercentage { get; private set; } = 100;
    public long AutoAofRewriteMinSize { get; private set; } = 64L * 1024 * 1024;
    public bool AofLoadTruncated { get; private set; } = true;
    /// <summary>Sync the new base file every 4 MB while a rewrite writes it, so the final sync is short.</summary>
    public bool AofRewriteIncrementalFsync { get; private set; } = true;
    /// <summary>The append-only directory: dir joined with appenddirname.</summary>
    public string AppendDirectory => Path.Combine(Dir, AppendDirName);

    /// <summary>
    /// Turns the AOF on or off at run time (CONFIG SET appendonly); returns null or why it failed.
    /// Not set at startup, when the value is only recorded and the server acts on it once loaded.
    /// </summary>
    public Func<bool, string?>? AppendOnlyChanging { get; set; }

    /// <summary>maxmemory in bytes; 0 for no limit.</summary>
    public long MaxMemory { get; private set; }
    /// <summary>What a debug package opened in the studio may cost (the studio-package-* settings).</summary>
    public PackageLimits PackageLimits { get; private set; } = PackageLimits.Default;
    public EvictionPolicy MaxMemoryPolicy { get; private set; } = EvictionPolicy.NoEviction;
    public int MaxMemorySamples { get; private set; } = 5;
    /// <summary>maxmemory-clients as bytes (0 = no limit), unless given as a percentage of maxmemory.</summary>
    public long MaxMemoryClientsBytes { get; private set; }
    /// <summary>maxmemory-clients as a percentage of maxmemory (1-100); 0 when given in bytes.</summary>
    public int MaxMemoryClientsPercent { get; private set; }

    /// <summary>maxmemory-clients as CONFIG GET shows it: bytes, or a percentage of maxmemory.</summary>
    public string MaxMemoryClientsText => MaxMemoryClientsPercent > 0
        ? MaxMemoryClientsPercent.ToString(CultureInfo.InvariantCulture) + "%"
        : MaxMemoryClientsBytes.ToString(CultureInfo.InvariantCulture);
    public int MaxMemoryEvictionTenacity { get; private set; } = 10;
    public int LfuLogFactor { get; private set; } = 10;
    /// <summary>lfu-decay-time in minutes.</summary>
    public int LfuDecayTime { get; private set; } = 1;

    /// <summary>Raised when maxmemory or one of its eviction settings changes.</summary>
    public event Action? EvictionChanged;

    /// <summary>notify-keyspace-events, parsed.</summary>
    public Engine.KeyspaceEventTypes NotifyKeyspaceEvents { get; private set; }
    public event Action? NotifyKeyspaceEventsChanged;

    /// <summary>
    /// hll-sparse-max-bytes: the longest a sparse HyperLogLog may grow before PFADD and PFMERGE
    /// make it dense (Redis's 0..LONG_MAX, default 3000).
    /// </summary>
    public long HllSparseMaxBytes { get; private set; } = DataTypes.HyperLogLog.DefaultSparseMaxBytes;

    /// <summary>hash-max-listpack-entries: the most fields a hash Redis keeps as a listpack may have.</summary>
    public long HashMaxListpackEntries { get; private set; } = 128;
    /// <summary>hash-max-listpack-value: the longest field or value such a hash may hold.</summary>
    public long HashMaxListpackValue { get; private set; } = 64;
    /// <summary>zset-max-listpack-entries: the most members a sorted set Redis keeps as a listpack may have.</summary>
    public long ZsetMaxListpackEntries { get; private set; } = 128;
    /// <summary>zset-max-listpack-value: the longest member such a sorted set may hold.</summary>
    public long ZsetMaxListpackValue { get; private set; } = 64;
    /// <summary>set-max-intset-entries: the most members a set of integers Redis keeps as an intset may have.</summary>
    public long SetMaxIntsetEntries { get; private set; } = 512;
    /// <summary>set-max-listpack-entries: the most members a set Redis 7.2 keeps as a listpack may have.</summary>
    public long SetMaxListpackEntries { get; private set; } = 128;
    /// <summary>set-max-listpack-value: the longest member such a set may hold.</summary>
    public long SetMaxListpackValue { get; private set; } = 64;
    /// <summary>list-max-listpack-size: a list node's limit, in elements when positive, in bytes (-1: 4 KB ... -5: 64 KB) when negative.</summary>
    public int ListMaxListpackSize { get; private set; } = -2;

    /// <summary>list-compress-depth: nodes at each end of a list left uncompressed (0: none compressed); a list keeps the value it was created with.</summary>
    public int ListCompressDepth { get; private set; }
    /// <summary>rdbcompression: LZF-compress strings over 20 bytes in RDB files and DUMP payloads.</summary>
    public bool RdbCompression { get; private set; } = true;
    /// <summary>rdbchecksum: end RDB files with their CRC-64 (0 when off, which readers skip).</summary>
    public bool RdbChecksum { get; private set; } = true;

    /// <summary>slowlog-log-slower-than, microseconds: negative turns the slow log off, 0 logs every command.</summary>
    public long SlowLogSlowerThanMicros { get; private set; } = 10_000;
    public int SlowLogMaxLength { get; private set; } = 128;

    /// <summary>busy-reply-threshold (alias lua-time-limit), milliseconds: a script running longer makes other clients' commands answer BUSY.</summary>
    public long BusyReplyThresholdMs { get; private set; } = 5000;

    /// <summary>latency-tracking: per-command latency histograms (INFO latencystats, LATENCY HISTOGRAM).</summary>
    public bool LatencyTracking { get; private set; } = true;
    /// <summary>latency-tracking-info-percentiles: the percentiles INFO latencystats shows.</summary>
    public double[] LatencyTrackingInfoPercentiles { get; private set; } = [50, 99, 99.9];
    /// <summary>latency-monitor-threshold, milliseconds: operations at least this long become LATENCY events; 0 is off.</summary>
    public long LatencyMonitorThresholdMs { get; private set; }

    /// <summary>Raised when latency-tracking or latency-monitor-threshold changes.</summary>
    public event Action? LatencyChanged;

    /// <summary>Raised when a slow log setting changes.</summary>
    public event Action? SlowLogChanged;

    /// <summary>Raised when appendfsync changes, so the AOF writer acts on the new policy at once.</summary>
    public event Action? AppendFsyncChanged;

    /// <summary>Raised when hz changes at run time so the shard cron can follow.</summary>
    public event Action<int>? HzChanged;

    public IReadOnlyList<ConfigParameter> Parameters => _ordered;

    public ConfigParameter? Find(string name) => _parameters.GetValueOrDefault(name);

    /// <summary>Sets a parameter by name; returns null on success or Redis's error text.</summary>
    public string? Set(string name, string value, bool atStartup)
    {
        // "user" lines declare ACL users at start; like Redis, CONFIG SET knows no such setting.
        if (atStartup && name.Equals(UserDirective, StringComparison.OrdinalIgnoreCase))
        {
            UserLines.Add(value.Split(' ', StringSplitOptions.RemoveEmptyEntries));
            return null;
        }
        var parameter = Find(name);
        if (parameter is null)
            return $"Unknown option or number of arguments for CONFIG SET - '{name}'";
        if (!atStartup && !parameter.Mutable)
            return $"CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config";
        if (atStartup && parameter.Name == "save")
        {
            if (_saveReadAtStartup && value.Length > 0 && !SaveSchedule.IsEmpty)
                value = SaveSchedule + " " + value;
            _saveReadAtStartup = true;
        }
        string? problem = parameter.Set(value);
        return problem is null ? null : $"CONFIG SET failed (possibly related to argument '{name}') - {problem}";
    }

    private void Add(ConfigParameter parameter)
    {
        _parameters.Add(parameter.Name, parameter);
        foreach (var alias in parameter.Aliases)
            _parameters.Add(alias, parameter);
        _ordered.Add(parameter);
    }

    private void Int(string name, Func<int> get, Action<int> set, int min, int max, bool mutable = true, params string[] aliases)
        => Long(name, () => get(), v => set((int)v), min, max, mutable, aliases);

    private void Long(string name, Func<long> get, Action<long> set, long min, long max, params string[] aliases)
        => Long(name, get, set, min, max, mutable: true, aliases);

    private void Long(string name, Func<long> get, Action<long> set, long min, long max, bool mutable, string[] aliases)
        => Add(new ConfigParameter(name, () => get().ToString(CultureInfo.InvariantCulture), ParseInteger(min, max, set), mutable, aliases));

    /// <summary>Redis's integer setting: a whole number in [min, max], with Redis's two refusals.</summary>
    private static Func<string, string?> ParseInteger(long min, long max, Action<long> set) => v =>
    {
        if (!long.TryParse(v, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long n))
            return "argument couldn't be parsed into an integer";
        if (n < min || n > max)
            return $"argument must be between {min} and {max} inclusive";
        set(n);
        return null;
    };

    /// <summary>Redis's bool setting: yes or no, any case.</summary>
    private static Func<string, string?> ParseYesNo(Action<bool> set) => v =>
    {
        if (v.Equals("yes", StringComparison.OrdinalIgnoreCase)) set(true);
        else if (v.Equals("no", StringComparison.OrdinalIgnoreCase)) set(false);
        else return "argument must be 'yes' or 'no'";
        return null;
    };

    /// <summary>A yes/no setting with Redis's old names as aliases (slave-read-only...).</summary>
    private void YesNo(string name, Func<bool> get, Action<bool> set, params string[] aliases)
        => Add(new ConfigParameter(name, () => get() ? "yes" : "no", ParseYesNo(set), true, aliases));

    /// <summary>replicaof / slaveof "host port" at start (REPLICAOF changes it later), as redis.conf takes it.</summary>
    private string? SetReplicaOf(string value)
    {
        string[] words = value.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (words.Length == 0)
        {
            ReplicaOf = null;
            return null;
        }
        if (words.Length != 2)
            return "wrong number of arguments";
        if (words[0].Equals("no", StringComparison.OrdinalIgnoreCase) && words[1].Equals("one", StringComparison.OrdinalIgnoreCase))
        {
            ReplicaOf = null;
            return null;
        }
        if (!int.TryParse(words[1], NumberStyles.None, CultureInfo.InvariantCulture, out int port) || port > 65535)
            return "Invalid master port";
        ReplicaOf = new MasterAddress(words[0], port);
        return null;
    }

    private void Memory(string name, Func<long> get, Action<long> set, long min, long max, params string[] aliases)
        => Add(new ConfigParameter(name, () => get().ToString(CultureInfo.InvariantCulture), v =>
        {
            if (!MemorySize.TryParse(v, out long n))
                return "argument must be a memory value";
            if (n < min || n > max)
                return $"argument must be between {min} and {max} inclusive";
            set(n);
            return null;
        }, aliases: aliases));

    private void Bool(string name, Func<bool> get, Action<bool> set)
        => Add(new ConfigParameter(name, () => get() ? "yes" : "no", ParseYesNo(set)));

    private void Inert(string name, string initial, bool isProtected = false, ConfigSecrecy secrecy = ConfigSecrecy.Public)
    {
        string value = initial;
        Add(new ConfigParameter(name, () => value, v => { value = v; return null; }) { Protected = isProtected, Secrecy = secrecy });
    }

    private static string? OneOf(string value, string[] allowed, Action<string> set)
    {
        foreach (var option in allowed)
        {
            if (option.Equals(value, StringComparison.OrdinalIgnoreCase))
            {
                set(option);
                return null;
            }
        }
        return "argument(s) must be one of the following: " + string.Join(", ", allowed);
    }

    /// <summary>maxmemory-clients: bytes (with Redis's units) or a percentage of maxmemory, as Redis 7.0 takes it.</summary>
    private string? SetMaxMemoryClients(string value)
    {
        string text = value.Trim();
        if (text.EndsWith('%'))
        {
            if (!int.TryParse(text.AsSpan(0, text.Length - 1), NumberStyles.None, CultureInfo.InvariantCulture, out int percent))
                return "argument must be a memory or percent value";
            if (percent > 100)
                return "percentage argument must be less or equal to 100";
            MaxMemoryClientsPercent = percent;
            MaxMemoryClientsBytes = 0;
            return null;
        }
        if (!MemorySize.TryParse(text, out long bytes))
            return "argument must be a memory or percent value";
        MaxMemoryClientsBytes = bytes;
        MaxMemoryClientsPercent = 0;
        return null;
    }

    private string? SetBind(string value)
    {
        var addresses = Split(value);
        if (addresses.Length == 0)
            return "Too many bind addresses specified.";
        foreach (var address in addresses)
        {
            string plain = address.TrimStart('-');
            if (plain != "*" && plain != "::*" && !System.Net.IPAddress.TryParse(plain, out _) && plain != "localhost")
                return $"Failed to bind to specified addresses: '{address}' is not an IP address";
        }
        Bind = addresses;
        return null;
    }

    private string? SetAppendOnly(string value)
    {
        bool on;
        if (value.Equals("yes", StringComparison.OrdinalIgnoreCase)) on = true;
        else if (value.Equals("no", StringComparison.OrdinalIgnoreCase)) on = false;
        else return "argument must be 'yes' or 'no'";
        if (on != AppendOnly && AppendOnlyChanging is { } change && change(on) is { } problem)
            return problem;
        AppendOnly = on;
        return null;
    }

    /// <summary>File names must not lead out of their directory (Redis refuses paths in them).</summary>
    private static string? PlainFileName(string value, string error, Action<string> set)
    {
        if (value.Length == 0 || value.Contains('/') || value.Contains('\\') || value is "." or "..")
            return error; // Redis's wording
        set(value);
        return null;
    }

    private string? SetMode(string value)
        => OneOf(value, ["executor", "inline"], s => Mode = s == "executor" ? ExecutionMode.Executor : ExecutionMode.Inline);

    /// <summary>
    /// CONFIG GET answers the key as the redaction marker, so setting the marker back would make a
    /// well-known string the key: refused, whoever sends it.
    /// </summary>
    private string? SetHttpApiKey(string value)
    {
        if (value == Redaction.Marker)
            return $"the value is the redaction marker '{Redaction.Marker}', not a key";
        HttpApiKey = value.Length == 0 ? null : value;
        return null;
    }

    private string? SetHttpApiKeyScope(string value)
    {
        var scope = StudioPermission.Parse(Split(value), out string? unknown);
        if (scope is null)
            return $"unknown permission '{unknown}' (known: {StudioPermission.KnownNames}, all)";
        HttpApiKeyScope = scope.Value;
        return null;
    }

    private string? SetDir(string value)
    {
        if (!Directory.Exists(value))
            return "No such file or directory";
        Dir = Path.GetFullPath(value);
        return null;
    }

    private static string[] Split(string value) => value.Split(' ', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    private static readonly (string Name, string Value)[] InertDefaults =
    [
        ("activerehashing", "yes"), ("lazyfree-lazy-eviction", "no"), ("lazyfree-lazy-expire", "no"),
        ("lazyfree-lazy-server-del", "no"), ("lazyfree-lazy-user-del", "no"), ("lazyfree-lazy-user-flush", "no"),
        ("activedefrag", "no"), ("aof-timestamp-enabled", "no"),
        ("tcp-backlog", "511"), ("supervised", "no"), ("always-show-logo", "no"), ("set-proc-title", "yes"),
        ("io-threads-do-reads", "no"), ("dynamic-hz", "yes"), ("repl-diskless-load", "disabled"),
        ("jemalloc-bg-thread", "yes"), ("oom-score-adj", "no"), ("crash-log-enabled", "yes"),
    ];
}
