namespace Diagnostics.Contracts;

/// <summary>
/// A window of the sampler's history: one timestamp per sample (unix ms, oldest first) and, for
/// each figure, one value per timestamp. Names are <see cref="MetricNames"/>; per-thread figures
/// are in <see cref="Threads"/>.
/// </summary>
public sealed record MetricHistory
{
    public required int IntervalMillis { get; init; }
    public required long[] Times { get; init; }
    public required Dictionary<string, double[]> Series { get; init; }
    public IReadOnlyList<ThreadHistory> Threads { get; init; } = [];
}
