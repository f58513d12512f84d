using Diagnostics.Server.Diagnostics.Threads;

namespace Diagnostics.Server.Diagnostics.Info;

/// <summary>
/// INFO's instantaneous_* figures, sampled as Redis does: every 100 ms the rate since the previous
/// sample goes into a ring of 16, and the figure is the ring's average (the last 1.6 seconds).
/// Runs on a timer thread; readers see a slightly stale average, which is what INFO promises.
/// </summary>
public sealed class InstantaneousMetrics : IDisposable
{
    private const int PeriodMs = 100;
    private const int Samples = 16;

    private readonly ServerStats _stats;
    private readonly Timer _timer;
    private readonly Lock _gate = new();
    private readonly Metric _commands = new();
    private readonly Metric _netInput = new();
    private readonly Metric _netOutput = new();

    public InstantaneousMetrics(ServerStats stats)
    {
        _stats = stats;
        _timer = new Timer(_ => Sample(), null, PeriodMs, PeriodMs);
    }

    /// <summary>Commands per second (instantaneous_ops_per_sec).</summary>
    public double OpsPerSecond => _commands.Average;
    /// <summary>Network bytes per second received and sent.</summary>
    public double InputBytesPerSecond => _netInput.Average;
    public double OutputBytesPerSecond => _netOutput.Average;

    /// <summary>Commands executed since start or the last CONFIG RESETSTAT, summed over all threads.</summary>
    public static long TotalCommands()
    {
        long total = 0;
        foreach (var row in ThreadCounters.All())
        {
            long[] calls = row.Calls;
            for (int i = 0; i < calls.Length; i++)
                total += calls[i];
        }
        return total;
    }

    private void Sample()
    {
        // A slow sample must not overlap the next timer tick.
        if (!_gate.TryEnter())
            return;
        try
        {
            long now = Environment.TickCount64;
            _commands.Add(TotalCommands(), now);
            _netInput.Add(_stats.NetInputBytes, now);
            _netOutput.Add(_stats.NetOutputBytes, now);
        }
        finally
        {
            _gate.Exit();
        }
    }

    public void Dispose() => _timer.Dispose();

    private sealed class Metric
    {
        private readonly double[] _rates = new double[Samples];
        private int _next;
        private long _lastValue = -1;
        private long _lastTime;

        public double Average
        {
            get
            {
                double sum = 0;
                foreach (double rate in _rates)
                    sum += rate;
                return sum / Samples;
            }
        }

        public void Add(long value, long nowMs)
        {
            if (_lastValue >= 0 && nowMs > _lastTime)
            {
                // A reset (CONFIG RESETSTAT) makes the counter go backwards: count that interval as idle.
                long delta = Math.Max(0, value - _lastValue);
                _rates[_next] = delta * 1000.0 / (nowMs - _lastTime);
                _next = (_next + 1) % Samples;
            }
            _lastValue = value;
            _lastTime = nowMs;
        }
    }
}
