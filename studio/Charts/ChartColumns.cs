using Diagnostics.Contracts;

namespace Diagnostics.Studio.Charts;

/// <summary>
/// A chart's points as charts.js takes them: times in unix seconds and one column per series,
/// a missing or not-a-number value as null (a gap in the line).
/// </summary>
public sealed record ChartColumns(string Id, double[] Times, double?[][] Columns)
{
    public static ChartColumns From(string id, MetricHistory history, IReadOnlyList<ChartSeries> series)
    {
        var times = new double[history.Times.Length];
        for (int i = 0; i < times.Length; i++)
            times[i] = history.Times[i] / 1000.0;
        var columns = new double?[series.Count][];
        for (int s = 0; s < series.Count; s++)
        {
            var column = new double?[times.Length];
            if (history.Series.TryGetValue(series[s].Metric, out var values))
            {
                for (int i = 0; i < column.Length && i < values.Length; i++)
                    column[i] = double.IsFinite(values[i]) ? values[i] : null;
            }
            else if (ThreadValues(history, series[s].Metric) is { } threadValues)
            {
                for (int i = 0; i < column.Length && i < threadValues.Length; i++)
                    column[i] = float.IsFinite(threadValues[i]) ? threadValues[i] : null;
            }
            columns[s] = column;
        }
        return new ChartColumns(id, times, columns);
    }

    /// <summary>"thread/{tid}/{figure}" (<see cref="ChartSeries.ForThread"/>) from the history's threads; null when absent.</summary>
    public static float[]? ThreadValues(MetricHistory history, string metric)
    {
        if (!metric.StartsWith(ChartSeries.ThreadPrefix, StringComparison.Ordinal))
            return null;
        var parts = metric.AsSpan(ChartSeries.ThreadPrefix.Length);
        int slash = parts.IndexOf('/');
        if (slash < 0 || !int.TryParse(parts[..slash], out int tid) || !Enum.TryParse(parts[(slash + 1)..], out ThreadFigure figure))
            return null;
        foreach (var thread in history.Threads)
        {
            if (thread.OsThreadId == tid)
                return Values(thread, figure);
        }
        return null;
    }

    public static float[] Values(ThreadHistory thread, ThreadFigure figure) => figure switch
    {
        ThreadFigure.Cpu => thread.CpuPercent,
        ThreadFigure.Tracked => thread.TrackedBytes,
        ThreadFigure.Net => thread.NetBytesPerSecond,
        _ => thread.DiskBytesPerSecond,
    };
}
