using Diagnostics.Contracts;

namespace Diagnostics.Server.Replication;

/// <summary>
/// A replica's request to sync and the master's answer, as the master saw them at that moment:
/// what the replica asked for, why a full sync was needed (<see cref="FullSyncReason.None"/> when
/// it continues), and the stream and backlog then, so a sync record can say how far the replica was
/// behind and what the backlog held.
/// </summary>
public readonly record struct SyncRequest(
    string ReplId,
    long RequestedOffset,
    FullSyncReason Reason,
    long MasterOffset,
    long BacklogFirstByte,
    long BacklogHistoryLength,
    long BacklogSize);
