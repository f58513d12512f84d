namespace Diagnostics.Contracts;

/// <summary>
/// One synchronization, from either side: a master serving a replica's PSYNC/SYNC (Side
/// "master", Peer the replica) or a replica syncing with its master (Side "replica", Peer the
/// master). Full (a snapshot) or partial (the backlog), what it moved, how long it took, why a full
/// one was needed, and how it ended.
/// </summary>
public sealed record ReplicationSync
{
    /// <summary>"master" or "replica": the side of this server.</summary>
    public required string Side { get; init; }
    /// <summary>"ip:port" of the other side.</summary>
    public required string Peer { get; init; }
    public required bool Full { get; init; }
    public FullSyncReason Reason { get; init; }
    /// <summary>The history and first missing byte the replica asked for (PSYNC replid offset); -1 when not asked.</summary>
    public string RequestedReplId { get; init; } = "";
    public long RequestedOffset { get; init; } = -1;
    /// <summary>The master's offset when it answered: bytes of the stream written by then.</summary>
    public long MasterOffset { get; init; }
    /// <summary>The backlog when the master answered: its first byte and history length.</summary>
    public long BacklogFirstByte { get; init; }
    public long BacklogHistoryLength { get; init; }
    public long BacklogSize { get; init; }
    /// <summary>Snapshot (RDB) bytes sent or loaded; 0 for a partial sync.</summary>
    public long SnapshotBytes { get; init; }
    /// <summary>A replica's: the keys it loaded and what its link read for the sync.</summary>
    public long KeysLoaded { get; init; }
    public long NetworkBytesRead { get; init; }
    public bool Diskless { get; init; }
    public long StartedUnixMs { get; init; }
    public double DurationMs { get; init; }
    public long FinishedUnixMs { get; init; }
    /// <summary>"in progress", "online" (snapshot sent), "continued" (partial), "loaded" (replica side) or "failed: why".</summary>
    public required string Outcome { get; init; }
    /// <summary>When the replica's connection that this sync began ended (master side), and why; 0 and null while it lasts.</summary>
    public long EndedUnixMs { get; init; }
    public string? EndReason { get; init; }

    /// <summary>Stream bytes the replica lacked when it asked: what a backlog must have held to continue it.</summary>
    public long MissedBytes => RequestedOffset > 0 ? Math.Max(0, MasterOffset - RequestedOffset + 1) : 0;
}
