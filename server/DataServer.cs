using Diagnostics.Server.Commands;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Server.Diagnostics.Info;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.Logs;
using Diagnostics.Server.Diagnostics.Meters;
using Diagnostics.Server.Diagnostics.Monitor;
using Diagnostics.Server.Diagnostics.Package;
using Diagnostics.Server.Diagnostics.SlowCommands;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Network;

namespace Diagnostics.Server;

/// <summary>The server's state: settings, keyspace, command table, clients and statistics.</summary>
public sealed class DataServer : IDisposable
{
    /// <summary>The last complete keyspace walk, shown when a long command keeps a new one from being made.</summary>
    public Contracts.KeyspaceReport? LastKeyspaceReport { get; set; }

    /// <summary>The automatic debug packages; set once the web host (which builds packages) exists.</summary>
    public Diagnostics.Triggers.PackageTriggers? Triggers { get; set; }

    public DataServer(ServerConfig config)
    {
        Config = config;
        Monitor = new Diagnostics.Monitor.MonitorLink(this);
        Commands = new CommandTable();
        ThreadCounters.Configure(Commands.AllSpecs.Count);
        CommandLatency.Configure(Commands.AllSpecs.Count);
        Keyspace = new Keyspace(config.Shards, config.Databases, config.Mode, config.Hz);
        config.HzChanged += hz => Keyspace.Cron.Hz = hz;
        HotKeys = new Diagnostics.HotKeys.HotKeys(Keyspace) { Period = config.HotKeySamplePeriod };
        Keyspace.Waits.Limit = config.MaxWaitingCommands;
        config.MaxWaitingCommandsChanged += () => Keyspace.Waits.Limit = config.MaxWaitingCommands;
        config.HotKeySamplePeriodChanged += () => HotKeys.Period = config.HotKeySamplePeriod;
        Keyspace.Cron.HotKeys = HotKeys;
        Instantaneous = new InstantaneousMetrics(Stats);
        Pause = new Execution.ClientPause(Keyspace);
        Tracking = new Tracking.KeyTracking(Keyspace, Clients, Commands);
        Executor = new Execution.CommandExecutor(this);
        Aof = new Persistence.AppendOnlyFile(this);
        Rdb = new Persistence.Snapshots.RdbSaves(this);
        // As Redis's freeMemoryGetNotCountedMemory: the AOF buffer does not count against
        // maxmemory, nor does the rewrite's private copy (the pages Redis's fork would share).
        // Nor does the replication stream beyond the backlog's size (what replicas have yet to be
        // sent), as Redis 7 leaves its replicas' share of the replication buffer out.
        Keyspace.Eviction.NotCountedMemory = () => (Aof.Enabled ? Aof.BufferMemory + Aof.RewriteMemory : 0)
            + (ReplicationMaster is { } master ? Math.Max(0, master.Backlog.MemoryBytes - master.Backlog.Size) : 0);
        ApplyEvictionSettings();
        config.EvictionChanged += ApplyEvictionSettings;
        SlowLog.ThresholdMicros = config.SlowLogSlowerThanMicros;
        SlowLog.MaxLength = config.SlowLogMaxLength;
        config.SlowLogChanged += () =>
        {
            SlowLog.ThresholdMicros = config.SlowLogSlowerThanMicros;
            SlowLog.MaxLength = config.SlowLogMaxLength;
        };
        KeyspaceEvents = new PubSub.KeyspaceNotifier(PubSub);
        KeyspaceEvents.Configure(config.NotifyKeyspaceEvents);
        config.NotifyKeyspaceEventsChanged += () => KeyspaceEvents.Configure(config.NotifyKeyspaceEvents);
        Keyspace.Cron.Events = KeyspaceEvents;
        ServerSampleSources.Register(Sampler, this);
        Meters = new ServerMeters(this);
        Sampler.Enabled = config.DiagnosticsSampler;
        config.DiagnosticsSamplerChanged += () => Sampler.Enabled = config.DiagnosticsSampler;
        ApplyLatencySettings();
        config.LatencyChanged += ApplyLatencySettings;
        Keyspace.Cron.LatencyMonitor = LatencyMonitor;
        ClientEviction = new ClientEviction(config, Clients);
        Scripts = new Scripting.ScriptEngine(this);
        Replication = new global::Diagnostics.Server.Replication.ReplicationRole(this);
        ReplicationMaster = new global::Diagnostics.Server.Replication.ReplicationMaster(this, Replication.Ids);
        // Keys the cron expires or evicts reach the AOF and the replicas as DELs.
        Keyspace.Cron.Propagation = new Persistence.AofPropagationSink(Aof, ReplicationMaster);
        ApplyBacklogSettings();
        config.ReplicationBacklogChanged += ApplyBacklogSettings;
        // A replica keeps its master's stream as received (its own replicas, and a later promotion
        // continue from it); a full sync starts that history over.
        Replication.StreamApplied = (bytes, offsetBefore) => ReplicationMaster.Backlog.AppendStream(bytes, offsetBefore, advance: false);
        Replication.SyncCompleted += record =>
        {
            if (record.Full)
                ReplicationMaster.Backlog.Reset();
            // As Redis creates a replica's backlog when it syncs: a promotion continues from it.
            ReplicationMaster.Backlog.Activate();
        };
        Acl = new Acl.AclUsers(Commands, config.RequirePass);
        config.RequirePassChanged += () => Acl.ApplyRequirePass(config.RequirePass);
        AclLog.MaxLength = config.AclLogMaxLength;
        config.AclLogMaxLengthChanged += () => AclLog.MaxLength = config.AclLogMaxLength;
        Tls = new Tls.TlsContext("RESP", () => config.Tls, () => config.Tls.InUse, () => config.Dir);
        config.TlsChanged = () => Tls.Configure("CONFIG SET");
        HttpTls = new Tls.TlsContext("HTTP", config.HttpTlsSettings, () => config.HttpTlsPort != 0, () => config.Dir,
            [System.Net.Security.SslApplicationProtocol.Http2, System.Net.Security.SslApplicationProtocol.Http11]);
        config.HttpTlsChanged = () => HttpTls.Configure("CONFIG SET");
        StartupAllocatedBytes = Memory.TrackedAllocator.TotalBytes;
    }

    /// <summary>Tracked memory once the server was set up, before any data was loaded (MEMORY STATS startup.allocated).</summary>
    public long StartupAllocatedBytes { get; }

    private void ApplyEvictionSettings()
    {
        var eviction = Keyspace.Eviction;
        LfuCounter.LogFactor = Config.LfuLogFactor;
        LfuCounter.DecayMinutes = Config.LfuDecayTime;
        eviction.Samples = Config.MaxMemorySamples;
        eviction.Tenacity = Config.MaxMemoryEvictionTenacity;
        eviction.Policy = Config.MaxMemoryPolicy;
        // Last: a lower limit starts eviction at once, under the policy just set.
        eviction.MaxMemory = Config.MaxMemory;
    }

    public ServerConfig Config { get; }
    public CommandTable Commands { get; }
    /// <summary>What an ACL user may see of the diagnostics (the studio's permissions), for HTTP logins and the doctor commands.</summary>
    public Acl.AclStudioPermissions StudioPermissions => _studioPermissions ??= new Acl.AclStudioPermissions(Commands);
    private Acl.AclStudioPermissions? _studioPermissions;
    public Keyspace Keyspace { get; }
    /// <summary>The always-on hot-key sampling (hotkey-sample-period).</summary>
    public Diagnostics.HotKeys.HotKeys HotKeys { get; }
    public ClientRegistry Clients { get; } = new();
    /// <summary>The clients in MONITOR mode, fed by the executor.</summary>
    public Execution.CommandMonitors Monitors { get; } = new();
    /// <summary>This server's place in replication: its IDs and offset, and the link to its master while it is a replica.</summary>
    public global::Diagnostics.Server.Replication.ReplicationRole Replication { get; }
    /// <summary>This server as a master: the replication stream, its replicas, WAIT.</summary>
    public global::Diagnostics.Server.Replication.ReplicationMaster ReplicationMaster { get; }

    private void ApplyBacklogSettings()
    {
        ReplicationMaster.Backlog.Size = Config.ReplBacklogSize;
        ReplicationMaster.Backlog.ReplicaHardLimit = () => (long)Config.OutputBufferLimits[Configuration.ClientClass.Replica].HardBytes;
    }
    /// <summary>Lua scripts: EVAL's VM and cache, the script running now.</summary>
    public Scripting.ScriptEngine Scripts { get; }

    /// <summary>CLIENT PAUSE: which commands wait, and until when.</summary>
    public Execution.ClientPause Pause { get; }

    /// <summary>CLIENT TRACKING: the clients caching keys, and who to tell when one changes.</summary>
    public Tracking.KeyTracking Tracking { get; }
    /// <summary>Runs commands for any client: connections, EXEC, the AOF loader.</summary>
    public Execution.CommandExecutor Executor { get; }
    /// <summary>maxmemory-clients: the clients' buffers in total, and disconnecting the biggest.</summary>
    public ClientEviction ClientEviction { get; }
    /// <summary>The append-only file: logging, loading and rewriting.</summary>
    public Persistence.AppendOnlyFile Aof { get; }
    /// <summary>RDB snapshots: SAVE, BGSAVE, the save schedule, loading dbfilename at start.</summary>
    public Persistence.Snapshots.RdbSaves Rdb { get; }
    public ServerStats Stats { get; } = new();
    /// <summary>The ACL users (the default user carries requirepass).</summary>
    public Acl.AclUsers Acl { get; }
    /// <summary>ACL LOG: denied commands, keys and channels, and failed authentications.</summary>
    public Acl.AclLog AclLog { get; } = new();
    /// <summary>Failed authentications by source address and user (INFO acl, the doctor, the studio).</summary>
    public Acl.AuthFailureSources AuthFailures { get; } = new();
    /// <summary>The TLS configuration in use and its handshake figures.</summary>
    public Tls.TlsContext Tls { get; }
    /// <summary>The HTTPS listener's TLS configuration (http-tls-port), reloaded like the RESP one.</summary>
    public Tls.TlsContext HttpTls { get; }

    /// <summary>Channels, patterns and their subscribers.</summary>
    public PubSub.PubSubRegistry PubSub { get; } = new();
    /// <summary>notify-keyspace-events: this server's keyspace events, published to its own channels.</summary>
    public PubSub.KeyspaceNotifier KeyspaceEvents { get; }
    /// <summary>Commands slower than slowlog-log-slower-than (SLOWLOG).</summary>
    public SlowLog SlowLog { get; } = new();
    /// <summary>The 1 Hz sampler and the hour of history it keeps.</summary>
    public Sampler Sampler { get; } = new();

    /// <summary>What the elevated monitor pushes: the kernel's and the runtime's view of this process.</summary>
    public Diagnostics.Monitor.MonitorLink Monitor { get; }

    /// <summary>Where a monitor finds this server and the token it must present; written once the listeners are up.</summary>
    public Diagnostics.Monitor.MonitorAnnouncementFile? Announcement { get; set; }
    /// <summary>The server's System.Diagnostics.Metrics instruments (dotnet-counters, /metrics).</summary>
    public ServerMeters Meters { get; }
    /// <summary>The last few thousand log lines (debug package, HTTP API).</summary>
    public LogRing Log { get; } = new();
    /// <summary>Where subsystems add their entries to the debug package.</summary>
    public Diagnostics.Package.DebugPackageRegistry DebugPackage { get; } = new();
    /// <summary>Operations slower than latency-monitor-threshold (LATENCY LATEST, HISTORY, GRAPH, RESET).</summary>
    public LatencyMonitor LatencyMonitor { get; } = new();
    /// <summary>Sampled rates for INFO's instantaneous_* fields.</summary>
    public InstantaneousMetrics Instantaneous { get; }
    public string RunId { get; } = Convert.ToHexStringLower(System.Security.Cryptography.RandomNumberGenerator.GetBytes(20));
    /// <summary>
    /// SHUTDOWN wrote its snapshot (or was told NOSAVE) before stopping the host; otherwise a stop
    /// (a signal) saves on the way out when the save schedule is on, as Redis does.
    /// </summary>
    public bool ShutdownSaveDone { get; set; }

    /// <summary>Set by SHUTDOWN; the host stops when it fires.</summary>
    public CancellationTokenSource ShutdownRequested { get; } = new();

    private void ApplyLatencySettings()
    {
        CommandLatency.Enabled = Config.LatencyTracking;
        LatencyMonitor.ThresholdMilliseconds = Config.LatencyMonitorThresholdMs;
    }

    public void Dispose()
    {
        Replication.Dispose();
        ReplicationMaster.Dispose();
        Announcement?.Dispose();
        Sampler.Dispose();
        Meters.Dispose();
        Instantaneous.Dispose();
        Rdb.Dispose();
        Aof.Dispose();
        Scripts.Dispose();
        Pause.Dispose();
        Keyspace.Dispose();
    }
}
