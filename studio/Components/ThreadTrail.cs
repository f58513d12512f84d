using Diagnostics.Contracts;
using Diagnostics.Studio.Charts;

namespace Diagnostics.Studio.Components;

/// <summary>
/// The last minute or two of every thread's history, for sparklines: filled from the page's
/// history at load, then extended with each tick's points, oldest dropped.
/// </summary>
public sealed class ThreadTrail
{
    public const int Points = 120;

    private readonly Dictionary<int, Dictionary<ThreadFigure, float[]>> _threads = [];

    public void Append(MetricHistory history)
    {
        foreach (var thread in history.Threads)
        {
            if (!_threads.TryGetValue(thread.OsThreadId, out var figures))
                _threads[thread.OsThreadId] = figures = [];
            foreach (var figure in Enum.GetValues<ThreadFigure>())
            {
                var added = ChartColumns.Values(thread, figure);
                figures[figure] = Keep(figures.TryGetValue(figure, out var old) ? old : [], added);
            }
        }
    }

    public float[] Of(int osThreadId, ThreadFigure figure) =>
        _threads.TryGetValue(osThreadId, out var figures) && figures.TryGetValue(figure, out var values) ? values : [];

    private static float[] Keep(float[] old, float[] added)
    {
        int total = Math.Min(Points, old.Length + added.Length);
        var result = new float[total];
        int fromAdded = Math.Min(added.Length, total);
        int fromOld = total - fromAdded;
        Array.Copy(old, old.Length - fromOld, result, 0, fromOld);
        Array.Copy(added, added.Length - fromAdded, result, fromOld, fromAdded);
        return result;
    }
}
