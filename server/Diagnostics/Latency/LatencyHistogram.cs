using Diagnostics.Contracts;

namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>
/// Durations in the contracts' power-of-two microsecond buckets (<see cref="MicrosecondBuckets"/>).
/// Recording is a few instructions with no allocation.
/// One writer (the owning thread); readers may see a count that is one sample ahead of a bucket.
/// </summary>
public sealed class LatencyHistogram
{
    public const int BucketCount = MicrosecondBuckets.Count;
    private readonly long[] _buckets = new long[BucketCount];

    public void Record(long microseconds) => _buckets[MicrosecondBuckets.IndexOf(microseconds)]++;

    /// <summary>Upper bound of bucket <paramref name="index"/> in microseconds.</summary>
    public static long UpperBoundMicros(int index) => MicrosecondBuckets.UpperBoundMicros(index);

    public long[] Snapshot()
    {
        var copy = new long[BucketCount];
        for (int i = 0; i < BucketCount; i++)
            copy[i] = Volatile.Read(ref _buckets[i]);
        return copy;
    }

    /// <summary>The upper bucket bound under which <paramref name="quantile"/> of the samples fall; 0 with no samples.</summary>
    public static long Percentile(long[] buckets, double quantile) => MicrosecondBuckets.Percentile(buckets, quantile);
}
