using Diagnostics.Contracts;
using Diagnostics.Server.Replication;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>
/// Replication as the API serves it, the studio shows it and the debug package holds it
/// (replication.json): role, IDs and offsets, the link to a master, the attached replicas with
/// their lag, the backlog, and the recent syncs of both sides.
/// </summary>
public static class ReplicationView
{
    public static ReplicationSnapshot Build(DataServer server)
    {
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var role = server.Replication;
        var master = server.ReplicationMaster;
        var backlog = master.Backlog;
        var ids = role.Ids.Read();
        var served = master.Syncs.Snapshot();

        var syncs = new List<ReplicationSync>();
        foreach (var entry in served)
            syncs.Add(entry.ToContract());
        foreach (var record in role.Syncs.Snapshot())
            syncs.Add(FromReplicaSide(record));
        syncs.Sort((a, b) => a.StartedUnixMs.CompareTo(b.StartedUnixMs));

        var replicas = new List<ReplicaFigures>();
        foreach (var feed in backlog.Feeds)
            replicas.Add(Replica(server, feed, ids.MasterReplOffset, now, served));

        var (firstByte, historyLength) = backlog.History;
        return new ReplicationSnapshot
        {
            TakenUnixMs = now,
            Role = role.IsReplica ? "replica" : "master",
            ReplId = ids.ReplId,
            ReplId2 = ids.ReplId2,
            MasterReplOffset = ids.MasterReplOffset,
            SecondReplOffset = ids.SecondReplOffset,
            Link = role.Link is { } link ? Link(link, ids.MasterReplOffset, now) : null,
            Replicas = replicas,
            Backlog = new BacklogFigures
            {
                Active = backlog.Active,
                Size = backlog.Size,
                FirstByte = firstByte,
                HistoryLength = historyLength,
                HeldBytes = backlog.HeldBytes,
                MemoryBytes = backlog.MemoryBytes,
            },
            FullSyncs = master.FullSyncs,
            PartialSyncsOk = master.PartialSyncsOk,
            PartialSyncsRefused = master.PartialSyncsRefused,
            Syncs = syncs,
        };
    }

    private static ReplicaFigures Replica(DataServer server, ReplicaFeed feed, long offset, long now, IReadOnlyList<MasterSyncEntry> served)
    {
        string key = feed.Key;
        int full = 0, partial = 0;
        foreach (var entry in served)
        {
            if (entry.Peer != key)
                continue;
            if (entry.Full)
                full++;
            else
                partial++;
        }
        long has = Math.Max(feed.AckOffset, feed.AttachOffset);
        return new ReplicaFigures
        {
            Key = key,
            ClientId = feed.ClientId,
            Address = feed.Address,
            ListeningPort = feed.ListeningPort,
            State = feed.State == ReplicaState.Online ? "online" : "send_bulk",
            AttachedUnixMs = feed.AttachedUnixMs,
            NextOffset = feed.NextOffset,
            AckOffset = feed.AckOffset,
            LagBytes = Math.Max(0, offset - has),
            // The sampler's figure: it alone keeps when each offset was reached.
            LagSeconds = server.Sampler.History.Latest(MetricNames.ReplLagSecondsPrefix + key) ?? 0,
            AckAgeSeconds = Math.Max(0, now - feed.AckUnixMs) / 1000.0,
            SnapshotBytesSent = Volatile.Read(ref feed.SnapshotBytesSent),
            StreamBytesSent = Volatile.Read(ref feed.StreamBytesSent),
            SnapshotMilliseconds = feed.SnapshotMilliseconds,
            AttachedWithFullSync = feed.FullSync,
            FullSyncs = full,
            PartialSyncs = partial,
            DropReason = feed.DropReason,
        };
    }

    private static MasterLinkFigures Link(MasterLink link, long applied, long now)
    {
        var state = link.State;
        bool up = state == MasterLinkState.Connected;
        long read = link.ReadOffset;
        return new MasterLinkFigures
        {
            Host = link.Host,
            Port = link.Port,
            State = state switch
            {
                MasterLinkState.Connect => "connect",
                MasterLinkState.Connecting => "connecting",
                MasterLinkState.Handshake => "handshake",
                MasterLinkState.Transfer => "transfer",
                _ => "connected",
            },
            ReadOffset = read,
            AppliedOffset = applied,
            LagBytes = up ? Math.Max(0, read - applied) : 0,
            LastIoSecondsAgo = up ? Math.Max(0, now - link.Client.LastInteractionMs) / 1000.0 : -1,
            DownSinceUnixMs = up ? 0 : link.DownSinceUnixMs,
            TransferSize = state == MasterLinkState.Transfer ? link.TransferSize : 0,
            TransferRead = state == MasterLinkState.Transfer ? link.TransferRead : 0,
            CommandsApplied = link.CommandsApplied,
        };
    }

    private static ReplicationSync FromReplicaSide(SyncRecord record) => new()
    {
        Side = "replica",
        Peer = $"{record.MasterHost}:{record.MasterPort}",
        Full = record.Full,
        RequestedReplId = record.ReplId,
        MasterOffset = record.Offset,
        SnapshotBytes = record.RdbBytes,
        KeysLoaded = record.KeysLoaded,
        NetworkBytesRead = record.NetworkBytesRead,
        StartedUnixMs = record.FinishedUnixMs - (long)record.DurationMs,
        DurationMs = record.DurationMs,
        FinishedUnixMs = record.FinishedUnixMs,
        Outcome = record.Full ? "loaded" : "continued",
    };
}
