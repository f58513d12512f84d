using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>fsync of the AOF is slow: under appendfsync always every write waits for it.</summary>
public sealed class FsyncLatencyRule : IDoctorRule
{
    private const long SlowMicros = 50_000;

    public string Id => "fsync-latency";
    public string Area => "persistence";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        DiskIoFigures? fsync = null;
        foreach (var figures in input.DiskIo)
            if (figures.OsThreadId == 0 && figures.Purpose == "aof_fsync")
                fsync = figures;
        if (fsync is null || fsync.Operations == 0)
            yield break;
        long p99 = UpperBoundAt(fsync.LatencyBuckets, 0.99);
        double recentMax = 0;
        foreach (double value in input.Recent(MetricNames.FsyncMaxMicros, 300))
            recentMax = Math.Max(recentMax, value);
        if (p99 < SlowMicros && recentMax < SlowMicros)
            yield break;
        string policy = input.Config.TryGetValue("appendfsync", out var p) ? p : "everysec";
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = policy == "always" ? FindingSeverity.Warning : FindingSeverity.Info,
            Title = "fsync of the append-only file is slow",
            Seen = $"{Human.Number(fsync.Operations)} fsyncs, average {Human.Micros((double)fsync.Micros / fsync.Operations)}, 99% under {Human.Micros(p99)}; slowest in the last 5 minutes about {Human.Micros(recentMax)} (appendfsync {policy}).",
            Advice = policy == "always"
                ? "Every acknowledged write waits for fsync: move the AOF to a faster disk, or accept up to a second of loss with appendfsync everysec."
                : "Slow fsyncs delay the AOF and can stall writes when the buffer fills; check the disk's health and what else writes to it.",
            Evidence = new() { ["fsyncs"] = fsync.Operations.ToString(System.Globalization.CultureInfo.InvariantCulture), ["p99_us"] = p99.ToString(System.Globalization.CultureInfo.InvariantCulture) },
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
