using Diagnostics.Server.Diagnostics.Latency;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The command latency histogram's bucket arithmetic: every duration lands in the bucket whose
/// bounds hold it, buckets tile 0..2^37 ns without gaps, and none is wider than 1/16 of its values.
/// Percentiles and LATENCY HISTOGRAM's power-of-two points are read off those buckets as Redis's
/// HdrHistogram answers them.
/// </summary>
public sealed class LatencyBucketsTests
{
    [Fact]
    public void BucketsTileTheRangeAndHoldTheirValues()
    {
        Assert.Equal(0, LatencyBuckets.LowerBound(0));
        for (int i = 0; i < LatencyBuckets.Count; i++)
        {
            long low = LatencyBuckets.LowerBound(i), high = LatencyBuckets.UpperBound(i);
            Assert.True(high >= low, $"bucket {i}: [{low}, {high}]");
            if (i + 1 < LatencyBuckets.Count)
                Assert.Equal(high + 1, LatencyBuckets.LowerBound(i + 1));
            Assert.True(high - low + 1 <= Math.Max(1, low / 16), $"bucket {i} [{low}, {high}] is wider than 1/16");
            Assert.Equal(i, LatencyBuckets.IndexOf(low));
            Assert.Equal(i, LatencyBuckets.IndexOf(high));
        }
        Assert.Equal(LatencyBuckets.MaxTrackableNanos, LatencyBuckets.UpperBound(LatencyBuckets.Count - 1));
        Assert.True(LatencyBuckets.MaxTrackableNanos > 100_000_000_000, "covers at least 100 s");
        Assert.Equal(LatencyBuckets.Count - 1, LatencyBuckets.IndexOf(long.MaxValue));
        Assert.Equal(0, LatencyBuckets.IndexOf(-5));
        var random = new Random(7);
        for (int n = 0; n < 100_000; n++)
        {
            long value = (long)Math.Pow(2, random.NextDouble() * 37);
            int index = LatencyBuckets.IndexOf(value);
            Assert.InRange(value, LatencyBuckets.LowerBound(index), LatencyBuckets.UpperBound(index));
        }
    }

    [Fact]
    public void PercentilesAreBucketBoundsAsHdrHistogramReportsThem()
    {
        var counts = new long[LatencyBuckets.Count];
        foreach (long nanos in new long[] { 3_000, 3_000, 5_000, 8_000, 1_000_000 })
            counts[LatencyBuckets.IndexOf(nanos)]++;
        var distribution = new LatencyDistribution(counts);
        Assert.Equal(5, distribution.Calls);
        int bucketOf3us = LatencyBuckets.IndexOf(3_000);
        Assert.Equal(LatencyBuckets.LowerBound(bucketOf3us), distribution.Percentile(0));
        Assert.Equal(LatencyBuckets.UpperBound(bucketOf3us), distribution.Percentile(10)); // rank at least 1
        Assert.Equal(LatencyBuckets.UpperBound(bucketOf3us), distribution.Percentile(40)); // rank 2.5 rounds to 2
        Assert.Equal(LatencyBuckets.UpperBound(LatencyBuckets.IndexOf(5_000)), distribution.Percentile(50));
        Assert.Equal(LatencyBuckets.UpperBound(LatencyBuckets.IndexOf(1_000_000)), distribution.Percentile(99.9));
        Assert.Equal(LatencyBuckets.UpperBound(LatencyBuckets.IndexOf(1_000_000)), distribution.Percentile(100));

        // Calls under each power of two of nanoseconds, under Redis's labels: 4 for 2^12, 8 for 2^13,
        // 1056 for 2^20; powers where the count did not grow are left out.
        Assert.Equal(new (long, long)[] { (4, 2), (8, 4), (1056, 5) }, distribution.CumulativeByPowerOfTwo());
        Assert.Empty(new LatencyDistribution(new long[LatencyBuckets.Count]).CumulativeByPowerOfTwo());
        Assert.Equal(0, new LatencyDistribution(new long[LatencyBuckets.Count]).Percentile(50));
    }
}
