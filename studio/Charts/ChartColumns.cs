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
            columns[s] = column;
        }
        return new ChartColumns(id, times, columns);
    }
}
