using Diagnostics.Contracts;

namespace Diagnostics.Monitor.Runtime;

/// <summary>
/// The runtime's events of the current interval: each GC with its pause (suspension start to
/// restart end), allocation ticks by type, contention, thread pool adjustments and first-chance
/// exceptions. Events are few (tens to thousands a second), so one lock per event is enough.
/// Bounded: types past <see cref="TypesKept"/> in an interval are summed under "(other types)".
/// </summary>
public sealed class RuntimeAggregator
{
    public const int TypesKept = 1000;
    public const int ExceptionTypesKept = 200;
    public const int MessageLength = 200;
    private readonly Lock _gate = new();
    private readonly List<GcPause> _pauses = [];
    private readonly Dictionary<string, (long Bytes, long Ticks)> _allocations = new(StringComparer.Ordinal);
    private readonly Dictionary<string, (long Count, string Message)> _exceptions = new(StringComparer.Ordinal);
    private long _contentions;
    private long _contentionNanos;
    private int _workers = -1;
    private long _adjustments;
    private long _suspendStartUnixMicros = -1;
    private (long UnixMicros, int Number, int Generation, string Reason, string Type)? _collection;

    public void SuspendStarted(long unixMicros)
    {
        lock (_gate)
            _suspendStartUnixMicros = unixMicros;
    }

    public void CollectionStarted(long unixMicros, int number, int generation, string reason, string type)
    {
        lock (_gate)
            _collection = (unixMicros, number, generation, reason, type);
    }

    /// <summary>The runtime resumed: the GC that ran while it was suspended paused it from suspension to now.</summary>
    public void Restarted(long unixMicros)
    {
        lock (_gate)
        {
            if (_collection is { } gc && _suspendStartUnixMicros >= 0)
                _pauses.Add(new GcPause(_suspendStartUnixMicros, gc.Number, gc.Generation, gc.Reason, gc.Type, Math.Max(0, unixMicros - _suspendStartUnixMicros)));
            _collection = null;
            _suspendStartUnixMicros = -1;
        }
    }

    public void Allocated(string typeName, long bytes)
    {
        lock (_gate)
        {
            if (_allocations.Count >= TypesKept && !_allocations.ContainsKey(typeName))
                typeName = "(other types)";
            var (total, ticks) = _allocations.GetValueOrDefault(typeName);
            _allocations[typeName] = (total + bytes, ticks + 1);
        }
    }

    public void Contended(double durationNanos)
    {
        lock (_gate)
        {
            _contentions++;
            _contentionNanos += (long)durationNanos;
        }
    }

    public void ThreadPoolAdjusted(int workers)
    {
        lock (_gate)
        {
            _workers = workers;
            _adjustments++;
        }
    }

    public void ExceptionThrown(string typeName, string message)
    {
        lock (_gate)
        {
            if (_exceptions.Count >= ExceptionTypesKept && !_exceptions.ContainsKey(typeName))
                typeName = "(other types)";
            var (count, _) = _exceptions.GetValueOrDefault(typeName);
            _exceptions[typeName] = (count + 1, message.Length > MessageLength ? message[..MessageLength] + "…" : message);
        }
    }

    /// <summary>The interval's events; the next interval starts empty (a GC in progress carries over).</summary>
    public RuntimeInterval Cut()
    {
        lock (_gate)
        {
            var allocations = new List<TypeAllocation>(_allocations.Count);
            foreach (var (type, (bytes, ticks)) in _allocations)
                allocations.Add(new TypeAllocation(type, bytes, ticks));
            allocations.Sort(static (a, b) => b.Bytes.CompareTo(a.Bytes));
            var exceptions = new List<ExceptionCount>(_exceptions.Count);
            foreach (var (type, (count, message)) in _exceptions)
                exceptions.Add(new ExceptionCount(type, count, message));
            var interval = new RuntimeInterval
            {
                GcPauses = [.. _pauses],
                Allocations = allocations,
                Contentions = _contentions,
                ContentionMicros = _contentionNanos / 1000,
                ThreadPoolWorkers = _workers,
                ThreadPoolAdjustments = _adjustments,
                Exceptions = exceptions,
            };
            _pauses.Clear();
            _allocations.Clear();
            _exceptions.Clear();
            _contentions = _contentionNanos = _adjustments = 0;
            _workers = -1;
            return interval;
        }
    }
}
