namespace Diagnostics.Studio.Charts;

/// <summary>
/// One line of a chart: a history series (<see cref="Diagnostics.Contracts.MetricNames"/>), or one
/// figure of one thread's history (<see cref="ForThread"/>), and its legend label.
/// </summary>
public sealed record ChartSeries(string Metric, string Label)
{
    public const string ThreadPrefix = "thread/";

    public static ChartSeries ForThread(int osThreadId, ThreadFigure figure, string label) => new($"{ThreadPrefix}{osThreadId}/{figure}", label);

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
