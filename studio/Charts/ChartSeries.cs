namespace Diagnostics.Studio.Charts;

/// <summary>One line of a chart: a history series (<see cref="Diagnostics.Contracts.MetricNames"/>) and its legend label.</summary>
public sealed record ChartSeries(string Metric, string Label);
