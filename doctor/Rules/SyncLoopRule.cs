using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// The same replica fully synced again and again in a short time: each full sync costs a snapshot
/// on the master and a reload on the replica, and a loop never settles. Names the replica and the
/// likely cause from how its connections ended and why each sync was full: the master dropped it at
/// its output buffer limit, its offset had left a too small backlog, or the link timed out.
/// </summary>
public sealed class SyncLoopRule : IDoctorRule
{
    public const int FullSyncs = 3;
    public const long WindowMs = 15 * 60 * 1000;

    public string Id => "repl-sync-loop";
    public string Area => "replication";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.Replication is not { } replication)
            yield break;
        var byPeer = new SortedDictionary<(string Side, string Peer), List<ReplicationSync>>();
        foreach (var sync in replication.Syncs)
        {
            if (!sync.Full || input.TakenUnixMs - sync.StartedUnixMs > WindowMs)
                continue;
            if (!byPeer.TryGetValue((sync.Side, sync.Peer), out var list))
                byPeer[(sync.Side, sync.Peer)] = list = [];
            list.Add(sync);
        }
        foreach (var ((side, peer), syncs) in byPeer)
        {
            if (syncs.Count < FullSyncs)
                continue;
            var (cause, advice) = Cause(syncs);
            long span = syncs[^1].StartedUnixMs - syncs[0].StartedUnixMs;
            string who = side == "master" ? $"Replica {peer}" : $"This replica (of {peer})";
            var endings = new List<string>();
            foreach (var sync in syncs)
                endings.Add($"{Human.Duration(Math.Max(0, input.TakenUnixMs - sync.StartedUnixMs))} ago ({Describe(sync)})");
            yield return new Finding
            {
                Rule = Id,
                Area = Area,
                Severity = FindingSeverity.Warning,
                Title = $"{who} fully synced {syncs.Count} times in {Human.Duration(Math.Max(1000, span))}",
                Seen = $"{who} fully synced {Human.Count(syncs.Count)} times in the last {Human.Duration(WindowMs)}: {string.Join("; ", endings)}. Likely cause: {cause}.",
                Advice = advice,
                Evidence = new()
                {
                    ["side"] = side,
                    ["peer"] = peer,
                    ["full_syncs"] = syncs.Count.ToString(CultureInfo.InvariantCulture),
                    ["span_seconds"] = (span / 1000).ToString(CultureInfo.InvariantCulture),
                    ["cause"] = CauseKey(syncs),
                },
                Chart = side == "master" ? MetricNames.ReplLagBytesPrefix + peer : MetricNames.ReplLinkUp,
            };
        }
    }

    private static string Describe(ReplicationSync sync)
    {
        string reason = sync.Reason switch
        {
            FullSyncReason.NotInBacklog => $"its offset was no longer in the backlog, {Human.Bytes(sync.MissedBytes)} behind",
            FullSyncReason.IdMismatch => "another replication history",
            FullSyncReason.NewReplica => "it had nothing to continue from",
            FullSyncReason.SyncCommand => "SYNC",
            _ => sync.Outcome,
        };
        string ended = sync.EndReason is { } end ? $", connection then ended: {end}" : "";
        return reason + ended;
    }

    private static string CauseKey(List<ReplicationSync> syncs)
    {
        foreach (var sync in syncs)
            if (sync.EndReason?.Contains("output buffer", StringComparison.OrdinalIgnoreCase) == true)
                return "output-buffer-limit";
        foreach (var sync in syncs)
            if (sync.Reason == FullSyncReason.NotInBacklog)
                return "backlog-too-small";
        foreach (var sync in syncs)
            if ((sync.EndReason ?? sync.Outcome).Contains("timeout", StringComparison.OrdinalIgnoreCase)
                || (sync.EndReason ?? sync.Outcome).Contains("timed out", StringComparison.OrdinalIgnoreCase))
                return "timeout";
        return "connection-lost";
    }

    private static (string Cause, string Advice) Cause(List<ReplicationSync> syncs) => CauseKey(syncs) switch
    {
        "output-buffer-limit" => ("the master dropped it at the replica output buffer limit: more stream waited for it than client-output-buffer-limit replica allows "
                + "(it was too slow, or a full sync's transfer took long while writes went on)",
            "Raise client-output-buffer-limit replica (hard and soft) above what is written during a full sync and a slow spell, and find why the replica falls behind (see replica-lag). "
                + "Each drop makes it resync fully, which makes the next drop more likely."),
        "backlog-too-small" => ("on each reconnection its offset had already left the backlog, so the master could not continue it (see repl-backlog-too-small)",
            "Raise repl-backlog-size above what is written while the replica is away, and find why its connection drops."),
        "timeout" => ("the link timed out: a full sync (snapshot and load) takes longer than repl-timeout, so the replica gives up and starts over",
            "Raise repl-timeout above a full sync's duration (the syncs' durations are on the Replication page), or make the dataset smaller to transfer."),
        _ => ("its connection kept closing: the replica restarting, giving up (repl-timeout shorter than a full sync), or the network between them dropping",
            "Look at the replica's log for why it reconnects; if it times out during the sync, raise repl-timeout. A larger repl-backlog-size lets a short drop end in a partial resync."),
    };
}
