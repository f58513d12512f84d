using Diagnostics.Contracts;

namespace Diagnostics.Monitor.Runtime;

/// <summary>
/// The runtime's events of the current interval: each GC with its pause (suspension start to
/// restart end), allocation ticks by type, contention, thread pool adjustments and first-chance
/// exceptions. Events are few (hundreds to some thousands a second), so one lock per event is
/// enough. Bounded: types past <see cref="TypesKept"/> in an interval are summed under
/// <see cref="OtherTypes"/>, exception types likewise, and at most <see cref="PausesKept"/> GCs.
/// Plain values in, no TraceEvent types, so it can be fed by hand.
/// </summary>
public sealed class RuntimeAggregator
{
    public const int TypesKept = 1000;
    public const int ExceptionTypesKept = 200;
    public const int MessageLength = 200;
    /// <summary>
    /// A safety bound only: a GC takes tens of microseconds at the very least, so a real server
    /// stays far below it in one interval; it keeps a never-cut aggregator from growing forever.
    /// </summary>
    public const int PausesKept = 10_000;
    public const string OtherTypes = "(other types)";

    private readonly Lock _gate = new();
    private readonly List<GcPause> _pauses = [];
    private readonly Dictionary<string, (long Bytes, long Ticks)> _allocations = new(StringComparer.Ordinal);
    private readonly Dictionary<string, (long Count, string Message)> _exceptions = new(StringComparer.Ordinal);
    private long _contentions;
    private long _contentionNanos;
    private int _workers = -1;
    private long _adjustments;

    // The suspension in progress (-1: none seen): GCs and suspensions span intervals, so a Cut
    // leaves these alone.
    private long _suspendStartUnixMicros = -1;
    private bool _suspendedForGc;
    private PendingCollection? _collection;
    // A background GC runs while managed code runs: it pauses the process at its start and
    // again for its final mark (a suspension with no GCStart of its own), so its pause is the
    // sum of both and is known only at its GCStop.
    private PendingCollection? _background;

    private sealed class PendingCollection(long startUnixMicros, int number, int generation, string reason, string type)
    {
        public long StartUnixMicros { get; } = startUnixMicros;
        public int Number { get; } = number;
        public int Generation { get; } = generation;
        public string Reason { get; } = reason;
        public string Type { get; } = type;
        public long PauseMicros { get; set; }
        public bool Ended { get; set; }

        public GcPause ToPause() => new(StartUnixMicros, Number, Generation, Reason, Type, PauseMicros);
    }

    /// <param name="forGc">The runtime suspends for a GC or a background GC's final phase (not for a debugger, say).</param>
    public void SuspendStarted(long unixMicros, bool forGc)
    {
        lock (_gate)
        {
            _suspendStartUnixMicros = unixMicros;
            _suspendedForGc = forGc;
        }
    }

    public void CollectionStarted(long unixMicros, int number, int generation, string reason, string type, bool background)
    {
        lock (_gate)
        {
            // Attached mid-suspension: the GC's own start is the best start known.
            long start = _suspendStartUnixMicros >= 0 ? _suspendStartUnixMicros : unixMicros;
            if (!background)
            {
                _collection = new PendingCollection(start, number, generation, reason, type);
                return;
            }
            if (_background is { } previous)
                AddPause(previous.ToPause()); // its GCStop was never seen: report what it paused
            _background = new PendingCollection(start, number, generation, reason, type);
        }
    }

    /// <summary>The runtime resumed: whatever GC ran in the suspension paused it from suspension to now.</summary>
    public void Restarted(long unixMicros)
    {
        lock (_gate)
        {
            if (_suspendStartUnixMicros >= 0 || _collection is not null)
            {
                long start = _suspendStartUnixMicros >= 0 ? _suspendStartUnixMicros : _collection!.StartUnixMicros;
                long pause = Math.Max(0, unixMicros - start);
                if (_collection is { } gc)
                {
                    // A blocking GC, or an ephemeral one run in the same suspension that started a
                    // background GC: the suspension is charged once, to the GC that did the work.
                    gc.PauseMicros = pause;
                    AddPause(gc.ToPause());
                }
                else if (_background is { } bgc && _suspendedForGc)
                {
                    bgc.PauseMicros += pause;
                    if (bgc.Ended)
                        EndBackground(bgc);
                }
            }
            _collection = null;
            _suspendStartUnixMicros = -1;
            _suspendedForGc = false;
        }
    }

    /// <summary>A GC ended: only a background GC is still open then, its pauses all seen.</summary>
    public void CollectionEnded(int number)
    {
        lock (_gate)
        {
            if (_background is not { } bgc || bgc.Number != number)
                return;
            // Ended while the runtime is still suspended: the restart completes its pause.
            if (_suspendStartUnixMicros >= 0)
                bgc.Ended = true;
            else
                EndBackground(bgc);
        }
    }

    private void EndBackground(PendingCollection bgc)
    {
        AddPause(bgc.ToPause());
        _background = null;
    }

    private void AddPause(GcPause pause)
    {
        if (_pauses.Count < PausesKept)
            _pauses.Add(pause);
    }

    /// <summary>One allocation tick: about 100 KB allocated, <paramref name="bytes"/> since the last tick, the last object of <paramref name="typeName"/>.</summary>
    public void Allocated(string typeName, long bytes)
    {
        lock (_gate)
        {
            if (_allocations.Count >= TypesKept && !_allocations.ContainsKey(typeName))
                typeName = OtherTypes;
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

    public void ExceptionThrown(string typeName, string? message)
    {
        lock (_gate)
        {
            if (_exceptions.Count >= ExceptionTypesKept && !_exceptions.ContainsKey(typeName))
                typeName = OtherTypes;
            var (count, _) = _exceptions.GetValueOrDefault(typeName);
            _exceptions[typeName] = (count + 1, Truncate(message ?? ""));
        }
    }

    private static string Truncate(string message)
        => message.Length > MessageLength ? string.Concat(message.AsSpan(0, MessageLength - 1), "…") : message;

    /// <summary>The interval's events, largest allocators first; the next interval starts empty (a GC in progress carries over).</summary>
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
            exceptions.Sort(static (a, b) => b.Count.CompareTo(a.Count));
            // A background GC is reported when it ends, after GCs that started later.
            var pauses = new List<GcPause>(_pauses);
            pauses.Sort(static (a, b) => a.StartUnixMicros.CompareTo(b.StartUnixMicros));
            var interval = new RuntimeInterval
            {
                GcPauses = pauses,
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
