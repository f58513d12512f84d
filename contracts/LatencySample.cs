namespace Diagnostics.Contracts;

/// <summary>The worst latency of one event within one second.</summary>
public sealed record LatencySample(long UnixSeconds, long Millis);
