namespace Diagnostics.Contracts;

/// <summary>
/// One replica attached to this master: who it is, where it stands in the stream and how far
/// behind, when it last acknowledged, what it was sent, and how it synced.
/// </summary>
public sealed record ReplicaFigures
{
    /// <summary>"ip:port" with the port it listens on: the name its history series carry.</summary>
    public required string Key { get; init; }
    public required long ClientId { get; init; }
    public required string Address { get; init; }
    public required int ListeningPort { get; init; }
    /// <summary>"send_bulk" (its snapshot is being sent) or "online".</summary>
    public required string State { get; init; }
    public long AttachedUnixMs { get; init; }
    /// <summary>The next stream byte it is to be sent.</summary>
    public long NextOffset { get; init; }
    /// <summary>The offset it last acknowledged (REPLCONF ACK).</summary>
    public long AckOffset { get; init; }
    /// <summary>The master's offset minus what the replica has (acknowledged, or got with its snapshot).</summary>
    public long LagBytes { get; init; }
    /// <summary>How long the master has had data this replica has not acknowledged (the history's last figure).</summary>
    public double LagSeconds { get; init; }
    public double AckAgeSeconds { get; init; }
    public long SnapshotBytesSent { get; init; }
    public long StreamBytesSent { get; init; }
    public double SnapshotMilliseconds { get; init; }
    /// <summary>Whether this attachment began with a full sync (else it continued from the backlog).</summary>
    public bool AttachedWithFullSync { get; init; }
    /// <summary>Syncs of this replica (by its key) the master still keeps records of.</summary>
    public int FullSyncs { get; init; }
    public int PartialSyncs { get; init; }
    /// <summary>Why the master is dropping it (its output limit), or null.</summary>
    public string? DropReason { get; init; }
}
