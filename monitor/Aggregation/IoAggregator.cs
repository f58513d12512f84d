using Diagnostics.Contracts;

namespace Diagnostics.Monitor.Aggregation;

/// <summary>
/// Sums a source's I/O events by thread, target and operation for the current interval (count,
/// bytes, errors, time, latency histogram) and keeps a uniform sample of the raw events; each
/// <see cref="Cut"/> hands the interval over as contract records and starts the next. A source
/// adds a whole page or buffer of events under <see cref="Gate"/>, so the lock is taken per
/// batch, not per event; adding allocates only for a (thread, target, operation) not seen in
/// the interval before.
/// </summary>
public sealed class IoAggregator(IReadOnlyList<string> callNames)
{
    private readonly Dictionary<Key, Accumulator> _current = [];
    private readonly EventReservoir _sample = new();

    /// <summary>Held by whoever adds events; <see cref="Cut"/> takes it too.</summary>
    public Lock Gate { get; } = new();

    public TargetTable Targets { get; } = new();

    /// <summary>Events added since the monitor started.</summary>
    public long TotalEvents { get; private set; }

    /// <summary>Adds one completed I/O. The caller holds <see cref="Gate"/>.</summary>
    public void Add(in IoEvent e)
    {
        var key = new Key(e.ThreadId, e.Target, e.Operation);
        if (!_current.TryGetValue(key, out var sum))
            _current[key] = sum = new Accumulator();
        sum.Count++;
        sum.Bytes += e.Bytes;
        if (e.Failed)
            sum.Errors++;
        sum.Nanos += e.DurationNanos;
        sum.Calls |= 1UL << (e.Call & 63);
        sum.Buckets[MicrosecondBuckets.IndexOf(e.DurationNanos / 1000)]++;
        _sample.Offer(e);
        TotalEvents++;
    }

    /// <summary>The interval's sums and event sample, with names; the next interval starts empty.</summary>
    public (List<KernelIoAggregate> Sums, List<KernelIoEvent> Sample) Cut()
    {
        lock (Gate)
        {
            var sums = new List<KernelIoAggregate>(_current.Count);
            foreach (var (key, sum) in _current)
            {
                var (name, kind) = Targets[key.Target];
                sums.Add(new KernelIoAggregate(key.ThreadId, name, KindName(kind), key.Operation.Name(), CallList(sum.Calls),
                    sum.Count, sum.Bytes, sum.Errors, sum.Nanos / 1000, sum.Buckets));
            }
            _current.Clear();
            var events = _sample.Cut();
            var sample = new List<KernelIoEvent>(events.Length);
            foreach (var e in events)
                sample.Add(new KernelIoEvent(e.UnixMicros, e.ThreadId, callNames[e.Call], Targets[e.Target].Name, e.Result, e.DurationNanos));
            return (sums, sample);
        }
    }

    public static string KindName(TargetKind kind) => kind switch
    {
        TargetKind.File => "file",
        TargetKind.Socket => "socket",
        TargetKind.Pipe => "pipe",
        TargetKind.Device => "device",
        _ => "other",
    };

    private string CallList(ulong mask)
    {
        var names = new List<string>();
        for (int i = 0; i < callNames.Count && i < 64; i++)
            if ((mask & (1UL << i)) != 0)
                names.Add(callNames[i]);
        return string.Join(',', names);
    }

    private readonly record struct Key(int ThreadId, int Target, IoOperation Operation);

    private sealed class Accumulator
    {
        public long Count;
        public long Bytes;
        public long Errors;
        public long Nanos;
        public ulong Calls;
        public readonly long[] Buckets = new long[MicrosecondBuckets.Count];
    }
}
