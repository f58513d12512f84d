namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>
/// A copy of one command's latency histogram, summed over every thread: counts per
/// <see cref="LatencyBuckets"/> bucket, read without stopping anyone (a count may be one sample
/// behind another). What INFO latencystats, LATENCY HISTOGRAM and the doctor read.
/// </summary>
public sealed class LatencyDistribution
{
    // LATENCY HISTOGRAM reports at 2^10 ns, 2^11 ns... as Redis's log iterator over its
    // HdrHistogram (first bucket 1024 ns, base 2) does.
    private const int FirstReportedExponent = 10;

    public LatencyDistribution(long[] counts)
    {
        if (counts.Length != LatencyBuckets.Count)
            throw new ArgumentException($"expected {LatencyBuckets.Count} bucket counts", nameof(counts));
        Counts = counts;
        foreach (long n in counts)
            Calls += n;
    }

    /// <summary>Samples per bucket, indexed as <see cref="LatencyBuckets"/>.</summary>
    public long[] Counts { get; }

    /// <summary>Commands recorded (the histogram's total count).</summary>
    public long Calls { get; }

    /// <summary>
    /// The duration in nanoseconds under which <paramref name="percentile"/> (0..100) percent of
    /// the calls fell, as HdrHistogram's value_at_percentile answers it for Redis: the rank is
    /// percentile/100 * calls rounded, at least 1; the answer is the largest value of the bucket
    /// that rank falls in (the smallest for percentile 0). 0 when there are no calls.
    /// </summary>
    public long Percentile(double percentile)
    {
        if (Calls == 0)
            return 0;
        double requested = Math.Min(percentile, 100.0);
        long rank = Math.Clamp((long)(requested / 100 * Calls + 0.5), 1, Calls);
        long seen = 0;
        for (int i = 0; i < Counts.Length; i++)
        {
            seen += Counts[i];
            if (seen >= rank)
                return percentile == 0.0 ? LatencyBuckets.LowerBound(i) : LatencyBuckets.UpperBound(i);
        }
        return LatencyBuckets.MaxTrackableNanos;
    }

    /// <summary>
    /// LATENCY HISTOGRAM's "histogram_usec": at each power of two from 1024 ns, the number of calls
    /// shorter than it, listed only where that number grew, ending at <see cref="Calls"/>. The key
    /// is Redis's label for the level: the largest value of its HdrHistogram bucket at 2^k ns
    /// (2^k + 2^(k-7) - 1 ns, with two significant digits) in whole microseconds, so 1, 2, 4, 8,
    /// 16, 33, 66, 132... exactly as redis-server prints them.
    /// </summary>
    public List<(long Micros, long Cumulative)> CumulativeByPowerOfTwo()
    {
        var points = new List<(long, long)>();
        long previous = 0;
        long cumulative = 0;
        int bucket = 0;
        for (int exponent = FirstReportedExponent; previous < Calls; exponent++)
        {
            long level = 1L << exponent;
            while (bucket < Counts.Length && LatencyBuckets.LowerBound(bucket) < level)
                cumulative += Counts[bucket++];
            if (bucket == Counts.Length)
                cumulative = Calls; // the last bucket holds everything longer than the range
            if (cumulative > previous)
                points.Add(((level + (1L << (exponent - 7)) - 1) / 1000, cumulative));
            previous = cumulative;
        }
        return points;
    }
}
