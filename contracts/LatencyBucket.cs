namespace Diagnostics.Contracts;

/// <summary>Calls that took at most <paramref name="UpToMicros"/> microseconds (cumulative).</summary>
public sealed record LatencyBucket(long UpToMicros, long CumulativeCount);
