using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>fsync of the AOF is slow: under appendfsync always every write waits for it.</summary>
public sealed class FsyncLatencyRule : IDoctorRule
{
    private const long SlowMicros = 50_000;
    private const int RecentSeconds = 300;

    public string Id => "fsync-latency";
    public string Area => "persistence";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        DiskIoFigures? fsync = null;
        DiskIoFigures? slowestThread = null;
        foreach (var figures in input.DiskIo)
        {
            if (figures.Purpose != "aof_fsync")
                continue;
            if (figures.OsThreadId == 0)
                fsync = figures;
            else if (slowestThread is null || figures.MaxMicros > slowestThread.MaxMicros)
                slowestThread = figures;
        }
        if (fsync is null || fsync.Operations == 0)
            yield break;
        long p99 = UpperBoundAt(fsync.LatencyBuckets, 0.99);
        double recentMax = 0;
        foreach (double value in input.Recent(MetricNames.FsyncMaxMicros, RecentSeconds))
            recentMax = Math.Max(recentMax, value);
        if (p99 < SlowMicros && recentMax < SlowMicros && fsync.MaxMicros < SlowMicros)
            yield break;
        string policy = input.Config.TryGetValue("appendfsync", out var p) ? p : "everysec";
        // The worst is measured (packages before it carried only the histogram: its bucket bound then).
        long worst = fsync.MaxMicros > 0 ? fsync.MaxMicros : UpperBoundAt(fsync.LatencyBuckets, 1.0);
        string where = fsync.SlowestFile is { } file ? $" on {file}" : "";
        string who = slowestThread is null ? "" : $", synced by thread {slowestThread.ThreadName} ({slowestThread.OsThreadId})";
        var evidence = new Dictionary<string, string>
        {
            ["fsyncs"] = fsync.Operations.ToString(CultureInfo.InvariantCulture),
            ["p99_us"] = p99.ToString(CultureInfo.InvariantCulture),
            ["max_us"] = worst.ToString(CultureInfo.InvariantCulture),
            ["recent_max_us"] = ((long)recentMax).ToString(CultureInfo.InvariantCulture),
        };
        if (fsync.SlowestFile is not null)
            evidence["file"] = fsync.SlowestFile;
        if (slowestThread is not null)
            evidence["thread"] = $"{slowestThread.ThreadName} ({slowestThread.OsThreadId})";
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = policy == "always" ? FindingSeverity.Warning : FindingSeverity.Info,
            Title = "fsync of the append-only file is slow",
            Seen = $"{Human.Count(fsync.Operations)} fsyncs, average {Human.Micros((double)fsync.Micros / fsync.Operations)}, 99% under {Human.Micros(p99)}; "
                + $"the slowest took {Human.Micros(worst)}{where}{who}; slowest in the last 5 minutes {Human.Micros(recentMax)} (appendfsync {policy}).",
            Advice = policy == "always"
                ? "Every acknowledged write waits for fsync: move the AOF to a faster disk, or accept up to a second of loss with appendfsync everysec."
                : "Slow fsyncs delay the AOF and can stall writes when the buffer fills; check the disk's health and what else writes to it.",
            Evidence = evidence,
            Chart = MetricNames.FsyncMaxMicros,
        };
    }

    /// <summary>The upper bound of the power-of-two bucket where the quantile falls (bucket i holds durations under 2^i µs).</summary>
    public static long UpperBoundAt(long[] buckets, double quantile)
    {
        long total = 0;
        foreach (long n in buckets)
            total += n;
        long rank = (long)Math.Ceiling(total * quantile), seen = 0;
        for (int i = 0; i < buckets.Length; i++)
        {
            seen += buckets[i];
            if (seen >= rank && total > 0)
                return 1L << i;
        }
        return 0;
    }
}
