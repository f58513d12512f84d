namespace Diagnostics.Contracts;

/// <summary>Everything the server knows about latency: per-command distributions and monitor events.</summary>
public sealed record LatencyReport(IReadOnlyList<LatencyDistribution> Commands, IReadOnlyList<LatencyEventSeries> Events, long MonitorThresholdMillis);
