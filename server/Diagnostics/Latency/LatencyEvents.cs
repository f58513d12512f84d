namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>
/// The latency monitor's event names, spelled as Redis's, for the places this server has the same
/// kind of work. Redis's others (fork, rdb-unlink-temp-file, eviction-*, active-defrag-cycle,
/// aof-fstat, while-blocked-cron, module-acquire-GIL) name work this server does not do.
/// </summary>
public static class LatencyEvents
{
    /// <summary>A command without the fast flag took at least the threshold.</summary>
    public const string Command = "command";
    /// <summary>A command flagged fast (O(1) or O(log N)) took at least the threshold: the host, not the command, is slow.</summary>
    public const string FastCommand = "fast-command";
    /// <summary>Any write(2) of the AOF buffer; one of the three below names the circumstances too.</summary>
    public const string AofWrite = "aof-write";
    /// <summary>An AOF write while the everysec fdatasync ran on its own thread.</summary>
    public const string AofWritePendingFsync = "aof-write-pending-fsync";
    /// <summary>An AOF write while a rewrite ran (Redis: while a child process ran).</summary>
    public const string AofWriteActiveChild = "aof-write-active-child";
    /// <summary>An AOF write with nothing else touching the disk.</summary>
    public const string AofWriteAlone = "aof-write-alone";
    /// <summary>The fdatasync of appendfsync always.</summary>
    public const string AofFsyncAlways = "aof-fsync-always";
    /// <summary>Renaming a rewritten base file into place at the end of a rewrite.</summary>
    public const string AofRename = "aof-rename";
    /// <summary>One shard's active expiry pass (Redis: activeExpireCycle).</summary>
    public const string ExpireCycle = "expire-cycle";
}
