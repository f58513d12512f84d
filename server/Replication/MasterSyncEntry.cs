using Diagnostics.Contracts;

namespace Diagnostics.Server.Replication;

/// <summary>
/// One sync served to a replica, filled in as it goes: begun by PSYNC/SYNC, completed (or failed)
/// by the connection that sends the snapshot, ended when that connection closes. Syncs are rare
/// and each step takes a small lock; nothing here is on the write path.
/// </summary>
public sealed class MasterSyncEntry(string peer, bool full, SyncRequest request, bool diskless)
{
    private readonly Lock _lock = new();
    private readonly long _startedUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    private string _outcome = full ? "in progress" : "continued";
    private long _snapshotBytes;
    private double _durationMs;
    private long _finishedUnixMs;
    private long _endedUnixMs;
    private string? _endReason;

    /// <summary>The replica's "ip:port".</summary>
    public string Peer { get; } = peer;
    public bool Full { get; } = full;

    public void Completed(long snapshotBytes, double milliseconds)
    {
        lock (_lock)
        {
            _outcome = "online";
            _snapshotBytes = snapshotBytes;
            _durationMs = milliseconds;
            _finishedUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        }
    }

    public void Failed(string why, long snapshotBytes)
    {
        lock (_lock)
        {
            _outcome = "failed: " + why;
            _snapshotBytes = snapshotBytes;
            _finishedUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            _durationMs = _finishedUnixMs - _startedUnixMs;
        }
    }

    /// <summary>The replica's connection closed; the first reason given stays.</summary>
    public void Ended(string reason)
    {
        lock (_lock)
        {
            if (_endReason is not null)
                return;
            _endReason = reason;
            _endedUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            if (_outcome == "in progress")
            {
                _outcome = "failed: " + reason;
                _finishedUnixMs = _endedUnixMs;
                _durationMs = _endedUnixMs - _startedUnixMs;
            }
        }
    }

    public ReplicationSync ToContract()
    {
        lock (_lock)
        {
            return new ReplicationSync
            {
                Side = "master",
                Peer = Peer,
                Full = Full,
                Reason = request.Reason,
                RequestedReplId = request.ReplId,
                RequestedOffset = request.RequestedOffset,
                MasterOffset = request.MasterOffset,
                BacklogFirstByte = request.BacklogFirstByte,
                BacklogHistoryLength = request.BacklogHistoryLength,
                BacklogSize = request.BacklogSize,
                SnapshotBytes = _snapshotBytes,
                Diskless = diskless,
                StartedUnixMs = _startedUnixMs,
                DurationMs = _durationMs,
                FinishedUnixMs = Full ? _finishedUnixMs : _startedUnixMs,
                Outcome = _outcome,
                EndedUnixMs = _endedUnixMs,
                EndReason = _endReason,
            };
        }
    }
}
