namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>
/// A copy of one latency monitor event: its samples oldest first (at most 160, one per second),
/// the newest of them, and the all-time maximum in milliseconds, which survives the samples.
/// </summary>
public sealed record LatencyEventSnapshot(string Name, IReadOnlyList<LatencySample> Samples, LatencySample Latest, long MaxMilliseconds);
