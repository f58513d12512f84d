using System.Diagnostics;
using System.Runtime.CompilerServices;
using Diagnostics.Server.Commands;

namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>
/// Redis's latency monitor: while latency-monitor-threshold is above 0, every timed operation
/// (<see cref="LatencyEvents"/>) that takes at least that many milliseconds becomes a sample of its
/// event. The check is one comparison against a threshold kept in Stopwatch ticks; only a sample
/// over it takes the lock, which is rare by definition. Events appear on their first sample and
/// are listed in that order.
/// </summary>
public sealed class LatencyMonitor
{
    private static readonly long s_ticksPerMillisecond = Math.Max(1, Stopwatch.Frequency / 1000);

    private readonly Lock _gate = new();
    private readonly List<LatencyEventSeries> _events = [];
    private long _thresholdMilliseconds;
    private long _thresholdTicks = long.MaxValue;

    /// <summary>latency-monitor-threshold in milliseconds; 0 turns the monitor off.</summary>
    public long ThresholdMilliseconds
    {
        get => _thresholdMilliseconds;
        set
        {
            _thresholdMilliseconds = value;
            _thresholdTicks = value <= 0 ? long.MaxValue
                : value > long.MaxValue / s_ticksPerMillisecond ? long.MaxValue : value * s_ticksPerMillisecond;
        }
    }

    /// <summary>Records a command that ran for <paramref name="ticks"/> Stopwatch ticks, if it reached the threshold.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void RecordCommand(CommandSpec spec, long ticks)
    {
        if (ticks >= _thresholdTicks)
            Add((spec.Flags & CommandFlags.Fast) != 0 ? LatencyEvents.FastCommand : LatencyEvents.Command, ticks / s_ticksPerMillisecond);
    }

    /// <summary>Records <paramref name="eventName"/> for an operation started at Stopwatch timestamp <paramref name="started"/>, if it reached the threshold.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void RecordSince(string eventName, long started) => Record(eventName, Stopwatch.GetTimestamp() - started);

    /// <summary>Records <paramref name="eventName"/> for an operation that took <paramref name="ticks"/> Stopwatch ticks, if it reached the threshold.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Record(string eventName, long ticks)
    {
        if (ticks >= _thresholdTicks)
            Add(eventName, ticks / s_ticksPerMillisecond);
    }

    /// <summary>Adds a sample of <paramref name="milliseconds"/> now, if the monitor is on and it reaches the threshold (latencyAddSampleIfNeeded).</summary>
    public void Add(string eventName, long milliseconds)
    {
        long threshold = _thresholdMilliseconds;
        if (threshold <= 0 || milliseconds < threshold)
            return;
        long now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        lock (_gate)
        {
            var series = FindLocked(eventName);
            if (series is null)
            {
                series = new LatencyEventSeries(eventName);
                _events.Add(series);
            }
            series.Add(now, milliseconds);
        }
    }

    /// <summary>Every event with samples, in the order they first occurred (LATENCY LATEST, the doctor).</summary>
    public List<LatencyEventSnapshot> Events()
    {
        lock (_gate)
            return _events.ConvertAll(Snapshot);
    }

    /// <summary>One event by its exact name (case-sensitive, as Redis looks it up), or null without samples.</summary>
    public LatencyEventSnapshot? Find(string eventName)
    {
        lock (_gate)
            return FindLocked(eventName) is { } series ? Snapshot(series) : null;
    }

    /// <summary>
    /// Forgets the events named <paramref name="eventName"/> (ignoring case, as Redis's LATENCY
    /// RESET), or all of them when null; returns how many were dropped.
    /// </summary>
    public int Reset(string? eventName)
    {
        lock (_gate)
            return _events.RemoveAll(e => eventName is null || e.Name.Equals(eventName, StringComparison.OrdinalIgnoreCase));
    }

    private LatencyEventSeries? FindLocked(string eventName)
    {
        foreach (var series in _events)
            if (series.Name == eventName)
                return series;
        return null;
    }

    private static LatencyEventSnapshot Snapshot(LatencyEventSeries series)
        => new(series.Name, series.Samples(), series.Latest, series.MaxMilliseconds);
}
