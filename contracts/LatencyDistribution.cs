namespace Diagnostics.Contracts;

/// <summary>
/// One command's latency distribution as LATENCY HISTOGRAM reports it: calls, and cumulative
/// counts at power-of-two microsecond bounds.
/// </summary>
public sealed record LatencyDistribution(string Command, long Calls, IReadOnlyList<LatencyBucket> Buckets);
