using System.Diagnostics;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>
/// The log-linear bucket layout of command latency histograms (HdrHistogram's idea, cut down):
/// durations under 16 ns get a bucket each; above, every power-of-two range [2^e, 2^(e+1)) is split
/// into 16 equal sub-buckets, so any bucket is at most 1/16 (6.25%) of its value wide. 544 buckets
/// cover 1 ns to 2^37 ns (137 s); longer durations land in the last bucket. Finding a bucket is a
/// leading-zero count, a shift and an add.
/// </summary>
public static class LatencyBuckets
{
    private const int SubBucketBits = 4;
    private const int SubBuckets = 1 << SubBucketBits;
    private const int HighestExponent = 36;

    /// <summary>Buckets per histogram.</summary>
    public const int Count = (HighestExponent - SubBucketBits + 2) * SubBuckets;

    /// <summary>The longest duration told apart from longer ones: 2^37 - 1 ns.</summary>
    public const long MaxTrackableNanos = (1L << (HighestExponent + 1)) - 1;

    // Stopwatch ticks are nanoseconds on Linux; elsewhere (100 ns on Windows) they are scaled.
    // Both are static readonly, so the JIT folds the test away on the data path.
    private static readonly bool s_ticksAreNanos = Stopwatch.Frequency == 1_000_000_000;
    private static readonly double s_nanosPerTick = 1e9 / Stopwatch.Frequency;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static long TicksToNanos(long ticks) => s_ticksAreNanos ? ticks : (long)(ticks * s_nanosPerTick);

    /// <summary>The bucket holding a duration of <paramref name="nanos"/> nanoseconds.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int IndexOf(long nanos)
    {
        ulong value = (ulong)Math.Clamp(nanos, 0, MaxTrackableNanos);
        if (value < SubBuckets)
            return (int)value;
        int exponent = 63 - BitOperations.LeadingZeroCount(value);
        // The leading bit selects the range, the next four bits the sub-bucket within it.
        return ((exponent - SubBucketBits + 1) << SubBucketBits) + (int)((value >> (exponent - SubBucketBits)) & (SubBuckets - 1));
    }

    /// <summary>The smallest duration (ns) bucket <paramref name="index"/> holds.</summary>
    public static long LowerBound(int index)
    {
        if (index < SubBuckets)
            return index;
        int exponent = (index >> SubBucketBits) + SubBucketBits - 1;
        return (long)(SubBuckets + (index & (SubBuckets - 1))) << (exponent - SubBucketBits);
    }

    /// <summary>The largest duration (ns) bucket <paramref name="index"/> holds (HdrHistogram's highest equivalent value).</summary>
    public static long UpperBound(int index) => index + 1 < Count ? LowerBound(index + 1) - 1 : MaxTrackableNanos;
}
