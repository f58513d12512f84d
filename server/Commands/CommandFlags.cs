namespace Diagnostics.Server.Commands;

/// <summary>Command properties: Redis's flags (reported by COMMAND) plus where the command runs.</summary>
[Flags]
public enum CommandFlags
{
    None = 0,
    Write = 1 << 0,
    ReadOnly = 1 << 1,
    DenyOom = 1 << 2,
    Admin = 1 << 3,
    PubSub = 1 << 4,
    NoScript = 1 << 5,
    Blocking = 1 << 6,
    Loading = 1 << 7,
    Stale = 1 << 8,
    NoAuth = 1 << 9,
    Fast = 1 << 10,
    AllowBusy = 1 << 11,
    NoMulti = 1 << 12,
    SkipSlowlog = 1 << 13,
    /// <summary>Not fed to MONITOR after it runs (the EVAL family feeds itself before its script's commands).</summary>
    SkipMonitor = 1 << 14,
    /// <summary>Not a write, but may be propagated (PUBLISH, PFCOUNT, scripts): CLIENT PAUSE WRITE holds it. COMMAND does not show it, as Redis 7.0 does not.</summary>
    MayReplicate = 1 << 15,
    /// <summary>
    /// Runs a Lua script (the EVAL and FCALL families): starts on the thread that read it, and
    /// gives itself back to run on a pool thread when it may run long (see ScriptEngine.Run).
    /// </summary>
    RunsScript = 1 << 16,
    /// <summary>
    /// The server's own diagnosis (LATENCY DOCTOR, MEMORY DOCTOR): its time is counted in
    /// commandstats but never as a slow command or a latency spike, so the doctor does not report
    /// itself. COMMAND does not show it.
    /// </summary>
    Diagnostic = 1 << 17,
    /// <summary>
    /// Refused while a replica loads a snapshot asynchronously (Redis's no_async_loading). This
    /// server loads before it serves (repl-diskless-load disabled), so it is only reported.
    /// </summary>
    NoAsyncLoading = 1 << 18,
    /// <summary>May be called with no key at all although it takes keys (EVAL with numkeys 0): Redis's no_mandatory_keys, reported.</summary>
    NoMandatoryKeys = 1 << 19,

    /// <summary>Touches no keys: runs on the connection's own thread, no shard involved.</summary>
    Connection = 1 << 20,
    /// <summary>Needs every shard at once (FLUSHALL, KEYS, SWAPDB): all shards are parked while it runs.</summary>
    AllShards = 1 << 21,
    /// <summary>Runs at once even between MULTI and EXEC (MULTI, EXEC, DISCARD, WATCH, QUIT, RESET): never queued.</summary>
    TransactionControl = 1 << 22,
    /// <summary>Allowed on a RESP2 connection subscribed to channels (the pub/sub commands, PING, QUIT, RESET).</summary>
    SubscribedContext = 1 << 23,
}
