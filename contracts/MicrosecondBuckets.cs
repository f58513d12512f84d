using System.Numerics;

namespace Diagnostics.Contracts;

/// <summary>
/// The latency histogram layout every contract uses: power-of-two microsecond buckets, bucket 0
/// holds [0, 1) µs and bucket i holds [2^(i-1), 2^i) µs. Percentiles read off a bucket's upper
/// bound are within a factor of 2: enough to tell a page-cache write from a disk flush from a
/// stalled device. Shared so that the server's and the monitor's histograms add up.
/// </summary>
public static class MicrosecondBuckets
{
    public const int Count = 40;

    public static int IndexOf(long microseconds)
    {
        int bucket = microseconds <= 0 ? 0 : 64 - BitOperations.LeadingZeroCount((ulong)microseconds);
        return Math.Min(bucket, Count - 1);
    }

    /// <summary>Upper bound of bucket <paramref name="index"/> in microseconds.</summary>
    public static long UpperBoundMicros(int index) => index == 0 ? 1 : 1L << index;

    /// <summary>The upper bucket bound under which <paramref name="quantile"/> of the samples fall; 0 with no samples.</summary>
    public static long Percentile(IReadOnlyList<long> buckets, double quantile)
    {
        long total = 0;
        foreach (long n in buckets)
            total += n;
        if (total == 0)
            return 0;
        long rank = (long)Math.Ceiling(total * quantile);
        long seen = 0;
        for (int i = 0; i < buckets.Count; i++)
        {
            seen += buckets[i];
            if (seen >= rank)
                return UpperBoundMicros(i);
        }
        return UpperBoundMicros(buckets.Count - 1);
    }
}
