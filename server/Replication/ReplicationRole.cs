using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Diagnostics.Server.Replication;

/// <summary>Receives the exact bytes of a span of the master's stream just applied, and the offset of its first byte.</summary>
public delegate void AppliedStreamHandler(ReadOnlySpan<byte> bytes, long startOffset);

/// <summary>
/// This server's role in replication: a master, or a replica of <see cref="Link"/>'s master
/// (REPLICAOF, the replicaof setting). Holds the replication IDs and offset both sides share, the
/// record of the last syncs, and what changes with the role: a replica's keys do not expire by
/// themselves (its master's DELs remove them), and its normal clients may not write while
/// replica-read-only. REPLICAOF runs with every shard held, so no stream batch is half applied
/// when the role changes.
/// </summary>
public sealed class ReplicationRole : IDisposable
{
    private readonly DataServer _server;
    private volatile MasterLink? _link;

    public ReplicationRole(DataServer server) => _server = server;

    /// <summary>Where replication's log lines go; the host sets it.</summary>
    public ILogger Log { get; set; } = NullLogger.Instance;

    public ReplicationIds Ids { get; } = new();
    public SyncHistory Syncs { get; } = new();

    /// <summary>The link to the master while this server is a replica, else null.</summary>
    public MasterLink? Link => _link;
    public bool IsReplica => _link is not null;
    /// <summary>A replica whose master link is up (applying the stream).</summary>
    public bool LinkUp => _link is { State: MasterLinkState.Connected };

    /// <summary>
    /// The data and offset can be continued from (Redis's cached master): after a completed sync,
    /// or when a master becomes a replica (its own history, PSYNC2). False at start and while a
    /// full sync replaces the data.
    /// </summary>
    internal bool HasCachedMaster { get; set; }

    /// <summary>
    /// Called on the link's thread, with every shard held, for each span of the master's stream
    /// applied, before <see cref="ReplicationIds.MasterReplOffset"/> moves past it: the master
    /// side appends these to its backlog (chained replicas, PSYNC2 after a promotion). The span is
    /// only valid during the call.
    /// </summary>
    public AppliedStreamHandler? StreamApplied { get; set; }

    /// <summary>A sync with the master completed (full: the dataset and the IDs were replaced; a backlog starts over).</summary>
    public event Action<SyncRecord>? SyncCompleted;

    internal void RaiseSyncCompleted(SyncRecord record) => SyncCompleted?.Invoke(record);

    /// <summary>The replicaof setting, once the server listens (its port goes in the handshake).</summary>
    public void Start()
    {
        if (_server.Config.ReplicaOf is { } master)
            Attach(master.Host, master.Port, wasMaster: false);
    }

    /// <summary>
    /// REPLICAOF host port (caller holds every shard): false when already a replica of exactly
    /// that master. A master becoming a replica keeps its own history as the cached master, so it
    /// can continue from its new master when that one shares it.
    /// </summary>
    public bool SetMaster(string host, int port)
    {
        var link = _link;
        if (link is not null && string.Equals(link.Host, host, StringComparison.OrdinalIgnoreCase) && link.Port == port)
            return false;
        // Clients blocked here (BLPOP...) are told and closed, as Redis's disconnectAllBlockedClients:
        // the keys they wait for are now written by another master's stream.
        foreach (var client in _server.Clients.Snapshot())
            client.Blocked?.Interrupt(Engine.BlockOutcome.UnblockedByRoleChange);
        Attach(host, port, wasMaster: link is null);
        return true;
    }

    private void Attach(string host, int port, bool wasMaster)
    {
        _link?.Stop();
        if (wasMaster)
            HasCachedMaster = true;
        _server.Config.FollowMaster(host, port);
        _server.Keyspace.Cron.ReplicaMode = true;
        var link = new MasterLink(_server, this, host, port, Log);
        _link = link;
        link.Start();
    }

    /// <summary>
    /// REPLICAOF NO ONE (caller holds every shard): the link stops, the data stays, a new history
    /// begins here with the old one valid up to this offset (PSYNC2), and keys expire again. Our
    /// own replicas are disconnected, as Redis's replicationUnsetMaster does: they reconnect and
    /// learn the new history (+CONTINUE with the new ID), continuing from where they were.
    /// </summary>
    public bool UnsetMaster()
    {
        var link = _link;
        if (link is null)
            return false;
        _link = null;
        link.Stop();
        HasCachedMaster = false;
        Ids.Shift();
        var ids = Ids.Read();
        Log.LogWarning("Setting secondary replication ID to {ReplId2}, valid up to offset: {Offset}. New replication ID is {ReplId}",
            ids.ReplId2, ids.SecondReplOffset, ids.ReplId);
        _server.Keyspace.Cron.ReplicaMode = false;
        _server.Config.FollowMaster(null, 0);
        _server.ReplicationMaster.DisconnectReplicas("the replication ID changed (REPLICAOF NO ONE)");
        return true;
    }

    public void Dispose() => _link?.Dispose();
}
