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
            else if (series[s].OsThreadId is int tid && ThreadValues(history, tid, series[s].Figure) is { } threadValues)
            {
                for (int i = 0; i < column.Length && i < threadValues.Length; i++)
                    column[i] = float.IsFinite(threadValues[i]) ? threadValues[i] : null;
            }
            columns[s] = column;
        }
        return new ChartColumns(id, times, columns);
    }

    /// <summary>One thread's figure from the history's threads; null when the thread is not in it.</summary>
    public static float[]? ThreadValues(MetricHistory history, int osThreadId, ThreadFigure figure)
    {
        foreach (var thread in history.Threads)
        {
            if (thread.OsThreadId == osThreadId)
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
