using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// A stream consumer group's pending list grows without acknowledgement: entries are delivered
/// (XREADGROUP) faster than consumers XACK them, or entries wait unacknowledged for minutes. Each
/// pending entry holds memory and is redelivered only when someone claims it, so a consumer that
/// crashed or forgot XACK leaves work undone. Seen from the delivery and ack rates of the last five
/// minutes, and named from the keyspace walk: the groups with the most pending entries, their
/// oldest entry's age, its idle time, the consumers and the lag.
/// </summary>
public sealed class StreamPendingRule : IDoctorRule
{
    private const int WindowSeconds = 300;
    /// <summary>Deliveries in the window before a shortfall of acks counts.</summary>
    public const long MinDeliveries = 1000;
    /// <summary>A group this many pending entries deep, its oldest waiting this long, is reported from the walk alone.</summary>
    public const long StuckPending = 1000;
    public const long StuckAgeMs = 5 * 60 * 1000;
    private const int GroupsShown = 3;

    public string Id => "stream-pending";
    public string Area => "streams";

    /// <summary>True when the rates alone show pending lists growing (the live doctor then walks the keyspace to name the groups).</summary>
    public static bool GrowthSeen(long deliveries, long acks) => deliveries >= MinDeliveries && acks * 2 < deliveries;

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        long deliveries = input.RecentCount(MetricNames.StreamDeliveriesPerSecond, WindowSeconds);
        long acks = input.RecentCount(MetricNames.StreamAcksPerSecond, WindowSeconds);
        bool growing = GrowthSeen(deliveries, acks);
        var stuck = new List<StreamGroupSummary>();
        foreach (var group in input.Keyspace?.StreamGroups ?? [])
            if (group.Pending >= StuckPending && group.OldestPendingAgeMs >= StuckAgeMs)
                stuck.Add(group);
        if (!growing && stuck.Count == 0)
            yield break;

        var seen = new List<string>();
        var evidence = new Dictionary<string, string>
        {
            ["delivered_last_5_min"] = deliveries.ToString(CultureInfo.InvariantCulture),
            ["acknowledged_last_5_min"] = acks.ToString(CultureInfo.InvariantCulture),
        };
        if (growing)
            seen.Add($"In the last 5 minutes {deliveries:N0} stream entries were delivered to consumer groups and {acks:N0} acknowledged: the pending lists grew by about {deliveries - acks:N0}.");
        var named = stuck.Count > 0 ? stuck : [.. input.Keyspace?.StreamGroups ?? []];
        if (named.Count > 0)
        {
            var parts = new List<string>();
            foreach (var group in named.Take(GroupsShown))
            {
                string lag = group.Lag is long known ? $", lag {known:N0}" : "";
                parts.Add($"group '{group.Group}' of stream '{group.Key}' (db {group.Database}): {group.Pending:N0} pending across {group.Consumers} consumers, the oldest added {Human.Duration(group.OldestPendingAgeMs)} ago and last delivered {Human.Duration(group.OldestPendingIdleMs)} ago{lag}");
            }
            string groups = string.Join("; ", parts);
            seen.Add($"Most pending: {groups}.");
            evidence["groups"] = groups;
        }
        else if (input.Keyspace is null)
            seen.Add("The keyspace was not walked, so the groups are not named: run XINFO GROUPS on your streams, or open the Keyspace page.");
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = "Stream consumer groups are not acknowledging what they read",
            Seen = string.Join(" ", seen),
            Advice = "Each entry a consumer reads with XREADGROUP stays pending until it sends XACK; pending entries hold memory and are never redelivered unless claimed. "
                + "Make the consumers XACK after processing (or read with NOACK when losing an entry is acceptable). "
                + "Entries owned by a consumer that died: XPENDING shows their owner and idle time, XAUTOCLAIM hands them to a live consumer, and XGROUP DELCONSUMER removes the dead one. "
                + "Trimming the stream (MAXLEN/MINID) does not empty a pending list.",
            Evidence = evidence,
            Chart = MetricNames.StreamDeliveriesPerSecond,
        };
    }
}
