namespace Diagnostics.Contracts;

/// <summary>A latency monitor event (LATENCY LATEST / HISTORY): its recent samples and all-time maximum.</summary>
public sealed record LatencyEventSeries(string Event, long LatestUnixSeconds, long LatestMillis, long MaxMillis, IReadOnlyList<LatencySample> Samples);
