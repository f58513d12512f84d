using System.Numerics;

namespace Diagnostics.Server.Diagnostics;

/// <summary>
/// Durations in power-of-two microsecond buckets: bucket 0 holds [0, 1) µs, bucket i holds
/// [2^(i-1), 2^i) µs. Recording is a few instructions with no allocation; percentiles are read off
/// the bucket bounds (upper bound of the bucket the rank falls in), which is within a factor of 2,
/// the resolution that tells a page-cache write from a disk flush from a stalled device.
/// One writer (the owning thread); readers may see a count that is one sample ahead of a bucket.
/// </summary>
public sealed class LatencyHistogram
{
    public const int BucketCount = 40;
    private readonly long[] _buckets = new long[BucketCount];

    public void Record(long microseconds)
    {
        int bucket = microseconds <= 0 ? 0 : 64 - BitOperations.LeadingZeroCount((ulong)microseconds);
        _buckets[Math.Min(bucket, BucketCount - 1)]++;
    }

    /// <summary>Upper bound of bucket <paramref name="index"/> in microseconds.</summary>
    public static long UpperBoundMicros(int index) => index == 0 ? 1 : 1L << index;

    public long[] Snapshot()
    {
        var copy = new long[BucketCount];
        for (int i = 0; i < BucketCount; i++)
            copy[i] = Volatile.Read(ref _buckets[i]);
        return copy;
    }

    /// <summary>The upper bucket bound under which <paramref name="quantile"/> of the samples fall; 0 with no samples.</summary>
    public static long Percentile(long[] buckets, double quantile)
    {
        long total = 0;
        foreach (long n in buckets)
            total += n;
        if (total == 0)
            return 0;
        long rank = (long)Math.Ceiling(total * quantile);
        long seen = 0;
        for (int i = 0; i < buckets.Length; i++)
        {
            seen += buckets[i];
            if (seen >= rank)
                return UpperBoundMicros(i);
        }
        return UpperBoundMicros(buckets.Length - 1);
    }
}
