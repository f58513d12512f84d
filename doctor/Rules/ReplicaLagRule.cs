using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// A replica that has stayed behind its master: the master has had data it has not acknowledged
/// for <see cref="LagSeconds"/> s or more, for <see cref="SustainedSeconds"/> s in a row (a burst
/// a replica absorbs in a second or two is not lag). Read from the master's per-replica history, so
/// it works offline too. Says how far behind (bytes and seconds), for how long, and whether its ACKs
/// stopped (the replica or the network is stuck) or it acknowledges but cannot keep up (slow).
/// </summary>
public sealed class ReplicaLagRule : IDoctorRule
{
    public const double LagSeconds = 10;
    public const double SustainedSeconds = 30;
    // Replicas ACK every second: this long without one means they stopped.
    public const double AckStoppedSeconds = 5;

    public string Id => "replica-lag";
    public string Area => "replication";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.History is not { Times.Length: > 0 } history)
            yield break;
        var keys = new List<string>();
        foreach (string name in history.Series.Keys)
            if (name.StartsWith(MetricNames.ReplLagSecondsPrefix, StringComparison.Ordinal))
                keys.Add(name[MetricNames.ReplLagSecondsPrefix.Length..]);
        keys.Sort(StringComparer.Ordinal);
        foreach (string key in keys)
        {
            if (Examine(history, key) is { } finding)
                yield return finding;
        }
    }

    private Finding? Examine(MetricHistory history, string key)
    {
        var lagSeconds = history.Series[MetricNames.ReplLagSecondsPrefix + key];
        var lagBytes = Series(history, MetricNames.ReplLagBytesPrefix + key);
        var ackAge = Series(history, MetricNames.ReplAckAgeSecondsPrefix + key);
        var sent = Series(history, MetricNames.ReplSentBytesPerSecondPrefix + key);
        var stream = Series(history, MetricNames.ReplStreamBytesPerSecond);
        var times = history.Times;
        int n = Math.Min(times.Length, lagSeconds.Length);

        // The latest run of samples at or over the threshold that lasted long enough.
        int end = -1, start = -1;
        for (int i = n - 1; i >= 0; i--)
        {
            if (lagSeconds[i] < LagSeconds)
                continue;
            int runEnd = i;
            while (i > 0 && lagSeconds[i - 1] >= LagSeconds)
                i--;
            if ((times[runEnd] - times[i]) / 1000.0 + history.IntervalMillis / 1000.0 >= SustainedSeconds)
            {
                start = i;
                end = runEnd;
                break;
            }
        }
        if (end < 0)
            return null;

        double maxSeconds = 0, maxBytes = 0, streamSum = 0, sentSum = 0;
        for (int i = start; i <= end; i++)
        {
            maxSeconds = Math.Max(maxSeconds, lagSeconds[i]);
            maxBytes = Math.Max(maxBytes, At(lagBytes, i));
            streamSum += At(stream, i);
            sentSum += At(sent, i);
        }
        int samples = end - start + 1;
        long lastedMs = times[end] - times[start] + history.IntervalMillis;
        bool ongoing = end == n - 1;
        double lastAck = At(ackAge, end);
        bool acksStopped = lastAck >= AckStoppedSeconds;
        string when = ongoing ? "and still is" : $"until {Human.Duration(times[n - 1] - times[end])} ago";
        string why = acksStopped
            ? $"Its ACKs stopped: the last one came {Human.Duration((long)(lastAck * 1000))} before the end of this stretch, while the master kept sending it {Human.Bytes(sentSum / samples)}/s. "
                + "A replica that stops acknowledging is stuck (paused, swapping, a long load or command), or the network between them is."
            : $"It acknowledged all along (the last ACK {Human.Duration((long)(lastAck * 1000))} before the end) but stayed behind: the master wrote {Human.Bytes(streamSum / samples)}/s of stream "
                + $"and sent it {Human.Bytes(sentSum / samples)}/s. It is just slow: it receives or applies the stream slower than the master writes it.";
        return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = $"Replica {key} is {Human.Duration((long)(maxSeconds * 1000))} behind its master",
            Seen = $"Replica {key} was at least {Human.Duration((long)(LagSeconds * 1000))} behind for {Human.Duration(lastedMs)} {when}: up to {Human.Bytes(maxBytes)} "
                + $"and {Human.Duration((long)(maxSeconds * 1000))} of the stream not acknowledged. {why}",
            Advice = acksStopped
                ? "Look at the replica itself (its own studio or INFO: is it busy, loading, swapping?) and at the network. Reads from it are stale meanwhile, "
                    + "and WAIT for it will time out. If it does not come back, the master drops it at its output limit (client-output-buffer-limit replica) and it must fully resync."
                : "Reads from it are that stale. Check the replica's CPU and its network to the master; a write burst (big MSETs, FLUSHALL, a Lua loop) makes every replica fall behind for a while. "
                    + "If it never catches up, it needs a faster host or link, or less write traffic.",
            Evidence = new()
            {
                ["replica"] = key,
                ["lag_seconds_max"] = maxSeconds.ToString("0.#", CultureInfo.InvariantCulture),
                ["lag_bytes_max"] = ((long)maxBytes).ToString(CultureInfo.InvariantCulture),
                ["lagging_seconds"] = (lastedMs / 1000).ToString(CultureInfo.InvariantCulture),
                ["ongoing"] = ongoing ? "yes" : "no",
                ["acks_stopped"] = acksStopped ? "yes" : "no",
                ["ack_age_seconds"] = lastAck.ToString("0.#", CultureInfo.InvariantCulture),
            },
            Chart = MetricNames.ReplLagSecondsPrefix + key,
        };
    }

    private static double[]? Series(MetricHistory history, string name) => history.Series.TryGetValue(name, out var values) ? values : null;

    private static double At(double[]? values, int i) => values is not null && i < values.Length ? values[i] : 0;
}
