namespace Diagnostics.Studio.Charts;

/// <summary>
/// One line of a chart: a history series (<see cref="Diagnostics.Contracts.MetricNames"/>), or one
/// figure of one thread's history (<see cref="ForThread"/>), and its legend label.
/// </summary>
public sealed record ChartSeries(string Metric, string Label)
{
    public const string ThreadPrefix = "thread/";

    public static ChartSeries ForThread(int osThreadId, ThreadFigure figure, string label) => new($"{ThreadPrefix}{osThreadId}/{figure}", label);
}

/// <summary>The figures a thread's history keeps each second.</summary>
public enum ThreadFigure
{
    Cpu,
    Tracked,
    Net,
    Disk,
}
