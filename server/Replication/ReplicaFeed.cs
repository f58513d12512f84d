namespace Diagnostics.Server.Replication;

/// <summary>Where an attached replica stands, as INFO's slaveN state field names it.</summary>
public enum ReplicaState
{
    /// <summary>Its full sync's snapshot is being sent (Redis's wait_bgsave and send_bulk).</summary>
    SendBulk,
    /// <summary>It has the snapshot (or continued) and is sent the stream.</summary>
    Online,
}

/// <summary>
/// One replica attached to this master: the connection it synced on, what it announced
/// (REPLCONF listening-port, capa), the next stream byte it is to be sent (it pins that byte in
/// the <see cref="ReplicationBacklog"/>), what it acknowledged and when, and what it cost.
/// The connection's own thread sends; the backlog only signals it.
/// </summary>
public sealed class ReplicaFeed(long clientId, string address, int listeningPort, bool fullSync, Action signal, Action<string> drop)
{
    public long ClientId { get; } = clientId;
    /// <summary>The replica's IP, as INFO's slaveN ip= shows it.</summary>
    public string Address { get; } = address;
    /// <summary>The port it listens on (REPLCONF listening-port), INFO's port=.</summary>
    public int ListeningPort { get; } = listeningPort;
    public bool FullSync { get; } = fullSync;
    public long AttachedUnixMs { get; } = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();

    private volatile ReplicaState _state = fullSync ? ReplicaState.SendBulk : ReplicaState.Online;
    public ReplicaState State { get => _state; internal set => _state = value; }

    /// <summary>"ip:port" (the port it listens on): how the diagnostics name it across reconnections.</summary>
    public string Key { get; } = $"{address}:{listeningPort}";

    /// <summary>The last stream byte it had when attached (its snapshot's offset, or where it continued from): its lag's floor before its first ACK.</summary>
    public long AttachOffset { get; internal set; }

    /// <summary>The record of the sync that attached it, completed by its connection.</summary>
    internal MasterSyncEntry? Sync { get; set; }

    /// <summary>The first stream byte not yet sent (the backlog moves it, under its lock).</summary>
    public long NextOffset { get; internal set; }

    private long _ackOffset;
    private long _ackUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    /// <summary>The offset the replica last acknowledged (REPLCONF ACK).</summary>
    public long AckOffset => Volatile.Read(ref _ackOffset);
    public long AckUnixMs => Volatile.Read(ref _ackUnixMs);

    public void Acknowledge(long offset)
    {
        if (offset > Volatile.Read(ref _ackOffset))
            Volatile.Write(ref _ackOffset, offset);
        Volatile.Write(ref _ackUnixMs, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
    }

    /// <summary>Snapshot bytes sent in its full sync, and stream bytes sent since.</summary>
    public long SnapshotBytesSent;
    public long StreamBytesSent;
    public double SnapshotMilliseconds;

    private volatile string? _dropReason;
    public bool Dropped => _dropReason is not null;
    public string? DropReason => _dropReason;

    /// <summary>Wakes the connection: there is stream to send.</summary>
    public void Signal() => signal();

    /// <summary>Disconnects the replica (it fell too far behind); called under the backlog's lock, so it only marks and asks.</summary>
    public void Drop(string reason)
    {
        if (_dropReason is not null)
            return;
        _dropReason = reason;
        drop(reason);
    }
}
