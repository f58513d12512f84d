namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>
/// One latency monitor event's recent history, as Redis's latencyTimeSeries keeps it: the latest
/// 160 samples in a ring (one per second at most: a second sample in the same second only raises
/// that second's value) and the all-time maximum. Not thread-safe: <see cref="LatencyMonitor"/>
/// holds its lock around every use.
/// </summary>
internal sealed class LatencyEventSeries(string name)
{
    /// <summary>Samples kept per event (Redis's LATENCY_TS_LEN).</summary>
    public const int Capacity = 160;

    private readonly LatencySample[] _samples = new LatencySample[Capacity];
    private int _next;

    public string Name { get; } = name;
    public long MaxMilliseconds { get; private set; }

    public void Add(long unixSeconds, long milliseconds)
    {
        MaxMilliseconds = Math.Max(MaxMilliseconds, milliseconds);
        ref var previous = ref _samples[(_next + Capacity - 1) % Capacity];
        if (previous.UnixSeconds == unixSeconds)
        {
            if (milliseconds > previous.Milliseconds)
                previous = previous with { Milliseconds = milliseconds };
            return;
        }
        _samples[_next] = new LatencySample(unixSeconds, milliseconds);
        _next = (_next + 1) % Capacity;
    }

    /// <summary>The newest sample (LATENCY LATEST).</summary>
    public LatencySample Latest => _samples[(_next + Capacity - 1) % Capacity];

    /// <summary>The samples held, oldest first (LATENCY HISTORY, GRAPH).</summary>
    public LatencySample[] Samples()
    {
        var list = new List<LatencySample>(Capacity);
        for (int j = 0; j < Capacity; j++)
        {
            var sample = _samples[(_next + j) % Capacity];
            if (sample.UnixSeconds != 0)
                list.Add(sample);
        }
        return [.. list];
    }
}
