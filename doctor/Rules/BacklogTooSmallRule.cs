using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// A replica came back after a disconnection and had to fully resync because the first byte it
/// lacked had already left the backlog: more was written while it was away than
/// repl-backlog-size keeps. Says how big the backlog would have had to be (the bytes written during
/// the disconnection) and suggests a size with room to spare.
/// </summary>
public sealed class BacklogTooSmallRule : IDoctorRule
{
    private const long RecentMs = 60 * 60 * 1000;
    private const long Megabyte = 1024 * 1024;

    public string Id => "repl-backlog-too-small";
    public string Area => "replication";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.Replication is not { } replication)
            yield break;
        var resyncs = new List<ReplicationSync>();
        foreach (var sync in replication.Syncs)
        {
            if (sync is { Side: "master", Full: true, Reason: FullSyncReason.NotInBacklog } && input.TakenUnixMs - sync.StartedUnixMs <= RecentMs)
                resyncs.Add(sync);
        }
        if (resyncs.Count == 0)
            yield break;
        long needed = 0;
        var replicas = new SortedSet<string>(StringComparer.Ordinal);
        var parts = new List<string>();
        foreach (var sync in resyncs)
        {
            needed = Math.Max(needed, sync.MissedBytes);
            replicas.Add(sync.Peer);
            string away = AwayFor(replication.Syncs, sync) is long ms ? $" after {Human.Duration(ms)} away" : "";
            parts.Add($"{sync.Peer} {Human.Duration(Math.Max(0, input.TakenUnixMs - sync.StartedUnixMs))} ago{away}: it asked for offset {sync.RequestedOffset}, "
                + $"{Human.Bytes(sync.MissedBytes)} before the master's {sync.MasterOffset}, and the backlog ({Human.Bytes(sync.BacklogSize)}) began at {sync.BacklogFirstByte}");
        }
        long size = resyncs[^1].BacklogSize;
        // Twice the worst disconnection seen, in whole megabytes: a longer one is likely.
        long suggested = Math.Max(size * 2, (needed * 2 + Megabyte - 1) / Megabyte * Megabyte);
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = resyncs.Count == 1 ? $"Replica {resyncs[0].Peer} had to fully resync: the backlog was too small" : $"{resyncs.Count} full resyncs because the backlog was too small",
            Seen = $"In the last hour {Human.Count(resyncs.Count)} reconnecting replica{(resyncs.Count == 1 ? "" : "s")} could not continue from the backlog and got a full sync instead: {string.Join("; ", parts)}. "
                + $"To continue them the backlog would have had to hold {Human.Bytes(needed)} (the bytes written while they were away); it holds {Human.Bytes(size)}.",
            Advice = $"Raise repl-backlog-size to at least {Human.Bytes(needed)}: CONFIG SET repl-backlog-size {suggested} ({Human.Bytes(suggested)}) leaves room for a longer disconnection. "
                + "A full sync costs a snapshot on the master and a reload on the replica; a partial one only resends what it missed. The backlog is memory on the master, taken once.",
            Evidence = new()
            {
                ["resyncs"] = resyncs.Count.ToString(CultureInfo.InvariantCulture),
                ["replicas"] = string.Join(",", replicas),
                ["missed_bytes_max"] = needed.ToString(CultureInfo.InvariantCulture),
                ["repl_backlog_size"] = size.ToString(CultureInfo.InvariantCulture),
                ["suggested_repl_backlog_size"] = suggested.ToString(CultureInfo.InvariantCulture),
            },
            Chart = MetricNames.ReplBacklogFillPercent,
        };
    }

    /// <summary>From the end of the replica's previous connection to this request, when the master kept both.</summary>
    internal static long? AwayFor(IReadOnlyList<ReplicationSync> syncs, ReplicationSync sync)
    {
        ReplicationSync? previous = null;
        foreach (var other in syncs)
            if (other.Side == "master" && other.Peer == sync.Peer && other.StartedUnixMs < sync.StartedUnixMs)
                previous = other;
        return previous is { EndedUnixMs: > 0 } p && p.EndedUnixMs <= sync.StartedUnixMs ? sync.StartedUnixMs - p.EndedUnixMs : null;
    }
}
