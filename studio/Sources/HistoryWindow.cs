using Diagnostics.Contracts;

namespace Diagnostics.Studio.Sources;

/// <summary>Cuts the last seconds out of a history (a package holds the hour before it was taken).</summary>
public static class HistoryWindow
{
    public static MetricHistory Empty { get; } = new() { IntervalMillis = 1000, Times = [], Series = [] };

    public static MetricHistory Last(MetricHistory history, int seconds)
    {
        var times = history.Times;
        if (times.Length == 0)
            return history;
        long from = times[^1] - seconds * 1000L;
        int start = 0;
        while (start < times.Length && times[start] <= from)
            start++;
        if (start == 0)
            return history;
        var series = new Dictionary<string, double[]>(history.Series.Count, StringComparer.Ordinal);
        foreach (var (name, values) in history.Series)
            series[name] = values[start..];
        var threads = new List<ThreadHistory>(history.Threads.Count);
        foreach (var t in history.Threads)
            threads.Add(t with { CpuPercent = t.CpuPercent[start..], TrackedBytes = t.TrackedBytes[start..], NetBytesPerSecond = t.NetBytesPerSecond[start..], DiskBytesPerSecond = t.DiskBytesPerSecond[start..] });
        return new MetricHistory { IntervalMillis = history.IntervalMillis, Times = times[start..], Series = series, Threads = threads };
    }
}
