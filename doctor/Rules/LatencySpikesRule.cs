using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>The latency monitor recorded events over latency-monitor-threshold: what LATENCY DOCTOR reports.</summary>
public sealed class LatencySpikesRule : IDoctorRule
{
    public string Id => "latency-spikes";
    public string Area => "latency";

    private static readonly Dictionary<string, string> AdviceByEvent = new(StringComparer.Ordinal)
    {
        ["command"] = "Slow commands: check SLOWLOG GET and avoid O(N) commands on big keys or the whole keyspace.",
        ["fast-command"] = "O(1) commands took long: the machine is overloaded, swapping, or the process was paused (GC, CPU quota). Check CPU, GC pauses and the host.",
        ["aof-fsync-always"] = "fsync under appendfsync always is slow: the disk cannot keep up. Use a faster disk, or appendfsync everysec.",
        ["aof-write"] = "Writes to the AOF are slow: the disk or the page cache is under pressure.",
        ["aof-write-pending-fsync"] = "AOF writes waited for a running fsync: the disk is slow to flush.",
        ["aof-write-active-child"] = "AOF writes were slow while a rewrite ran: the rewrite competes for the disk.",
        ["aof-write-alone"] = "AOF writes were slow with nothing else running: the disk itself is slow.",
        ["aof-rename"] = "Replacing the AOF base after a rewrite was slow: the file system is slow at renames and directory syncs.",
        ["expire-cycle"] = "Active expiry took long: many keys expire at once; spread their TTLs.",
    };

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.Latency is null)
            yield break;
        foreach (var series in input.Latency.Events)
        {
            if (series.Samples.Count == 0)
                continue;
            double average = 0;
            foreach (var sample in series.Samples)
                average += sample.Millis;
            average /= series.Samples.Count;
            yield return new Finding
            {
                Rule = Id,
                Area = Area,
                Severity = series.MaxMillis >= 100 ? FindingSeverity.Warning : FindingSeverity.Info,
                Title = $"Latency spikes: {series.Event}",
                Seen = $"{series.Samples.Count} latency spikes of '{series.Event}' over {input.Latency.MonitorThresholdMillis} ms (average {average:0} ms, worst {series.MaxMillis} ms, latest {series.LatestMillis} ms).",
                Advice = AdviceByEvent.GetValueOrDefault(series.Event, "See LATENCY HISTORY for when it happened."),
                Evidence = new()
                {
                    ["event"] = series.Event,
                    ["samples"] = series.Samples.Count.ToString(System.Globalization.CultureInfo.InvariantCulture),
                    ["max_ms"] = series.MaxMillis.ToString(System.Globalization.CultureInfo.InvariantCulture),
                },
                Chart = MetricNames.LatencyP999Micros,
            };
        }
    }
}
