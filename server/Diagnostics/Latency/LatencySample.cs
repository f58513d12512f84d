namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>One latency monitor sample: when (unix seconds) and how long (milliseconds), as LATENCY HISTORY lists it.</summary>
public readonly record struct LatencySample(long UnixSeconds, long Milliseconds);
