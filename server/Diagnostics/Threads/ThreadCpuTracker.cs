namespace Diagnostics.Server.Diagnostics.Threads;

/// <summary>
/// Each thread's CPU share over the last sampler interval, from the difference of its CPU time
/// between two samples. Written by the sampler only; the thread view reads the last figures.
/// </summary>
public sealed class ThreadCpuTracker
{
    private readonly Lock _gate = new();
    private Dictionary<int, (double Seconds, double Percent)> _threads = [];
    private long _lastTimestamp;

    /// <summary>Takes one sample of every thread's CPU seconds (user plus system) keyed by OS thread id.</summary>
    public void Sample(Dictionary<int, double> cpuSeconds)
    {
        long now = System.Diagnostics.Stopwatch.GetTimestamp();
        double elapsed = _lastTimestamp == 0 ? 0 : System.Diagnostics.Stopwatch.GetElapsedTime(_lastTimestamp, now).TotalSeconds;
        var next = new Dictionary<int, (double, double)>(cpuSeconds.Count);
        lock (_gate)
        {
            foreach (var (tid, seconds) in cpuSeconds)
            {
                double percent = 0;
                if (elapsed > 0 && _threads.TryGetValue(tid, out var previous))
                    percent = Math.Max(0, seconds - previous.Seconds) * 100 / elapsed;
                next[tid] = (seconds, percent);
            }
            _threads = next;
            _lastTimestamp = now;
        }
    }

    public double PercentOf(int osThreadId)
    {
        lock (_gate)
            return _threads.TryGetValue(osThreadId, out var figures) ? figures.Percent : 0;
    }
}
