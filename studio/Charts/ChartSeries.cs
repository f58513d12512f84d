namespace Diagnostics.Studio.Charts;

/// <summary>
/// One line of a chart: a history series (<see cref="Diagnostics.Contracts.MetricNames"/>), or one
/// figure of one thread's history (<see cref="ForThread"/>), and its legend label.
/// </summary>
public sealed record ChartSeries(string Metric, string Label)
{
    /// <summary>For a thread's figure (<see cref="ForThread"/>): whose; null for a history series.</summary>
    public int? OsThreadId { get; private init; }
    public ThreadFigure Figure { get; private init; }

    /// <summary>One thread's figure; <see cref="Metric"/> ("thread/{tid}/{figure}") names it for people and tests.</summary>
    public static ChartSeries ForThread(int osThreadId, ThreadFigure figure, string label) =>
        new($"thread/{osThreadId}/{figure}", label) { OsThreadId = osThreadId, Figure = figure };

    /// <summary>
    /// One line per history series named "<paramref name="prefix"/>something" (ops by command
    /// family, disk bytes by purpose), labelled with the something, in order.
    /// </summary>
    public static ChartSeries[] WithPrefix(Diagnostics.Contracts.MetricHistory history, string prefix)
    {
        var series = new List<ChartSeries>();
        foreach (string name in history.Series.Keys)
        {
            if (name.StartsWith(prefix, StringComparison.Ordinal))
                series.Add(new ChartSeries(name, name[prefix.Length..]));
        }
        series.Sort((a, b) => string.CompareOrdinal(a.Label, b.Label));
        return [.. series];
    }
}

/// <summary>The figures a thread's history keeps each second.</summary>
public enum ThreadFigure
{
    Cpu,
    Tracked,
    Net,
    Disk,
}
