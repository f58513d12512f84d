namespace Diagnostics.Contracts;

/// <summary>
/// Replication as one server sees it at one moment: its role, the history it follows (IDs and
/// offsets, in bytes of the replication stream), its link to a master when it is a replica, the
/// replicas attached to it with their lag, its backlog, and the recent syncs on both sides.
/// </summary>
public sealed record ReplicationSnapshot
{
    public required long TakenUnixMs { get; init; }
    /// <summary>"master" or "replica" (a replica may have replicas of its own too).</summary>
    public required string Role { get; init; }
    public required string ReplId { get; init; }
    public required string ReplId2 { get; init; }
    /// <summary>Bytes of the stream this server has (master_repl_offset).</summary>
    public required long MasterReplOffset { get; init; }
    /// <summary>The first offset <see cref="ReplId2"/> does not cover, or -1.</summary>
    public required long SecondReplOffset { get; init; }
    /// <summary>The link to its master; null on a master.</summary>
    public MasterLinkFigures? Link { get; init; }
    public IReadOnlyList<ReplicaFigures> Replicas { get; init; } = [];
    public required BacklogFigures Backlog { get; init; }
    /// <summary>Since start, as INFO stats sync_full, sync_partial_ok and sync_partial_err count them.</summary>
    public long FullSyncs { get; init; }
    public long PartialSyncsOk { get; init; }
    public long PartialSyncsRefused { get; init; }
    /// <summary>The last syncs served to replicas and made with a master, oldest first.</summary>
    public IReadOnlyList<ReplicationSync> Syncs { get; init; } = [];
}
