using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Persistence.Snapshots;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Replication;

/// <summary>
/// This server as a master (Redis's replication.c, master side): decides between a partial and a
/// full resync for a PSYNC, takes a full sync's snapshot at a cut that is also the stream offset
/// the replica continues from, keeps the stream (<see cref="ReplicationBacklog"/>), pings the
/// replicas every repl-ping-replica-period, asks them for ACKs (REPLCONF GETACK) and answers
/// WAIT from what they acknowledge.
/// </summary>
public sealed class ReplicationMaster : IDisposable
{
    private static readonly byte[] s_ping = Encoding.ASCII.GetBytes("*1\r\n$4\r\nPING\r\n");
    private static readonly byte[] s_getAck = Encoding.ASCII.GetBytes("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n");

    private readonly DataServer _server;
    private readonly ReplicationIds _ids;
    private readonly Timer _pinger;
    private readonly Lock _waitersLock = new();
    private readonly List<AckWaiter> _waiters = [];
    private long _lastPingMs = Environment.TickCount64;

    private sealed record AckWaiter(long Offset, int Needed, TaskCompletionSource Done);

    public ReplicationMaster(DataServer server, ReplicationIds ids)
    {
        _server = server;
        _ids = ids;
        Backlog = new ReplicationBacklog(ids);
        _pinger = new Timer(_ => Tick(), null, 1000, 1000);
    }

    public ILogger Log { get; set; } = Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;

    public ReplicationBacklog Backlog { get; }

    /// <summary>
    /// Whether writes must be encoded for the stream: the backlog is on and this server is a master
    /// (a replica's stream is its master's, kept as received).
    /// </summary>
    public bool Propagates => Backlog.Active && !_server.Replication.IsReplica;

    // INFO stats: sync_full, sync_partial_ok, sync_partial_err.
    private long _fullSyncs, _partialOk, _partialErr;
    public long FullSyncs => Interlocked.Read(ref _fullSyncs);
    public long PartialSyncsOk => Interlocked.Read(ref _partialOk);
    public long PartialSyncsRefused => Interlocked.Read(ref _partialErr);

    /// <summary>The last syncs served to replicas, for the diagnostics.</summary>
    public MasterSyncLog Syncs { get; } = new();

    /// <summary>
    /// Redis's masterTryPartialResynchronization: the replica's history is ours (or the one we
    /// followed before, up to where we left it) and the first byte it lacks is still kept.
    /// Returns the offset to continue from, or -1 for a full resync ("?" always is one);
    /// <paramref name="request"/> says why, with the stream and backlog as they were.
    /// </summary>
    public long TryPartial(string replId, long firstMissing, out SyncRequest request)
    {
        var ids = _ids.Read();
        var (firstByte, historyLength) = Backlog.History;
        bool ours = replId == ids.ReplId
            || (replId == ids.ReplId2 && firstMissing <= ids.SecondReplOffset);
        bool kept = Backlog.CanServeFrom(firstMissing);
        var reason = replId == "?" ? FullSyncReason.NewReplica
            : !ours ? FullSyncReason.IdMismatch
            : !kept ? FullSyncReason.NotInBacklog
            : FullSyncReason.None;
        request = new SyncRequest(replId, replId == "?" ? -1 : firstMissing, reason, ids.MasterReplOffset, firstByte, historyLength, Backlog.Size);
        if (reason == FullSyncReason.None)
        {
            Interlocked.Increment(ref _partialOk);
            return firstMissing;
        }
        if (replId != "?")
        {
            Interlocked.Increment(ref _partialErr);
            Log.LogInformation("Partial resynchronization not accepted: {Why}", !ours
                ? $"Replication ID mismatch (Replica asked for '{replId}', my replication IDs are '{ids.ReplId}' and '{ids.ReplId2}')"
                : $"Requested offset {firstMissing} is not in the backlog");
        }
        return -1;
    }

    /// <summary>A SYNC (always full): the request as <see cref="TryPartial"/> would have described it.</summary>
    public SyncRequest SyncCommandRequest()
    {
        var (firstByte, historyLength) = Backlog.History;
        return new SyncRequest("", -1, FullSyncReason.SyncCommand, _ids.MasterReplOffset, firstByte, historyLength, Backlog.Size);
    }

    /// <summary>
    /// A full sync's snapshot: the cut holds every shard, so the stream offset read there is exactly
    /// where the snapshot ends; the replica is attached at the next byte while still held, so no
    /// write falls between the two. Returns the snapshot and that offset.
    /// </summary>
    public (RdbSnapshot Snapshot, long Offset) CutForFullSync(ReplicaFeed feed)
    {
        Backlog.Activate();
        long offset = 0;
        var snapshot = RdbSnapshot.Cut(_server.Keyspace, RdbSaves.WriteOptions(_server), RdbSaves.FunctionCodes(_server), () =>
        {
            offset = _ids.MasterReplOffset;
            Backlog.Attach(feed, offset + 1);
        });
        Interlocked.Increment(ref _fullSyncs);
        return (snapshot, offset);
    }

    /// <summary>
    /// Redis's disconnectSlaves: every replica is dropped, so each one reconnects and asks again
    /// (PSYNC), learning a changed replication ID or history instead of going on with a stream
    /// that no longer continues its own.
    /// </summary>
    public void DisconnectReplicas(string reason)
    {
        foreach (var feed in Backlog.Feeds)
            feed.Drop(reason);
    }

    /// <summary>A replica's REPLCONF ACK: WAIT callers whose offset is now covered by enough replicas go.</summary>
    public void Acknowledged(ReplicaFeed feed, long offset)
    {
        feed.Acknowledge(offset);
        lock (_waitersLock)
        {
            for (int i = _waiters.Count - 1; i >= 0; i--)
            {
                if (CountAcknowledged(_waiters[i].Offset) >= _waiters[i].Needed)
                {
                    _waiters[i].Done.TrySetResult();
                    _waiters.RemoveAt(i);
                }
            }
        }
    }

    /// <summary>Replicas whose acknowledged offset reaches <paramref name="offset"/>.</summary>
    public int CountAcknowledged(long offset)
    {
        int count = 0;
        foreach (var feed in Backlog.Feeds)
            if (feed.State == ReplicaState.Online && !feed.Dropped && feed.AckOffset >= offset)
                count++;
        return count;
    }

    /// <summary>
    /// WAIT: completes once <paramref name="needed"/> replicas acknowledged <paramref name="offset"/>
    /// or after <paramref name="timeoutMs"/> (0: no timeout). The replicas are asked for an ACK
    /// at once, as Redis asks them before it next sleeps.
    /// </summary>
    public async Task<int> WaitAsync(long offset, int needed, long timeoutMs)
    {
        int count = CountAcknowledged(offset);
        if (count >= needed)
            return count;
        var waiter = new AckWaiter(offset, needed, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
        lock (_waitersLock)
            _waiters.Add(waiter);
        RequestAcks();
        if (timeoutMs > 0)
            await Task.WhenAny(waiter.Done.Task, Task.Delay(TimeSpan.FromMilliseconds(Math.Min(timeoutMs, int.MaxValue))));
        else
            await waiter.Done.Task;
        lock (_waitersLock)
            _waiters.Remove(waiter);
        return CountAcknowledged(offset);
    }

    /// <summary>Appends REPLCONF GETACK * to the stream: every replica answers with its offset.</summary>
    public void RequestAcks()
    {
        if (Propagates && Backlog.Feeds.Length > 0)
            Backlog.AppendOwn(s_getAck);
    }

    /// <summary>
    /// Once a second: a PING into the stream every repl-ping-replica-period, so replicas see their
    /// master alive; and a master without replicas for repl-backlog-ttl lets its backlog go.
    /// </summary>
    private void Tick()
    {
        try
        {
            long now = Environment.TickCount64;
            ReleaseIdleBacklog(now);
            if (now - _lastPingMs < _server.Config.ReplPingReplicaPeriodSeconds * 1000L)
                return;
            _lastPingMs = now;
            if (Propagates && Backlog.Feeds.Length > 0)
                Backlog.AppendOwn(s_ping);
        }
        catch (Exception ex)
        {
            Log.LogError(ex, "The replication ping failed");
        }
    }

    private long _noReplicasSinceMs = -1;

    private void ReleaseIdleBacklog(long now)
    {
        if (!Propagates || Backlog.Feeds.Length > 0)
        {
            _noReplicasSinceMs = -1;
            return;
        }
        if (_noReplicasSinceMs < 0)
            _noReplicasSinceMs = now;
        long ttl = _server.Config.ReplBacklogTtlSeconds;
        if (ttl == 0 || now - _noReplicasSinceMs < ttl * 1000)
            return;
        Backlog.Deactivate();
        _ids.Renew();
        _noReplicasSinceMs = -1;
        Log.LogInformation("Replication backlog freed after {Seconds} seconds without connected replicas.", ttl);
    }

    public void Dispose()
    {
        _pinger.Dispose();
        Backlog.Dispose();
    }
}
