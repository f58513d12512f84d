using Diagnostics.Contracts;

namespace Diagnostics.Server.Diagnostics.History;

/// <summary>
/// The last hour of every sampled figure in fixed rings: one slot per sample for the timestamps,
/// one ring of doubles per figure, one set of float rings per thread. Memory is bounded by
/// capacity x (figures + 4 x threads); <see cref="ApproximateBytes"/> says how much. The sampler
/// is the only writer, once a second; readers (HTTP, doctor, debug package) copy a window under
/// the same lock, so contention is a reader at most once per request.
/// </summary>
public sealed class MetricHistoryStore
{
    private readonly Lock _gate = new();
    private readonly long[] _times;
    private readonly Dictionary<string, double[]> _series = new(StringComparer.Ordinal);
    // Samples in a row each series was not given: a series absent for a whole ring is all zeros and
    // is dropped, as threads are (per-replica families come and go with their replicas).
    private readonly Dictionary<string, int> _missed = new(StringComparer.Ordinal);
    private readonly Dictionary<int, ThreadRings> _threads = [];
    private int _next;
    private int _count;

    public MetricHistoryStore(int capacity, int intervalMillis)
    {
        Capacity = capacity;
        IntervalMillis = intervalMillis;
        _times = new long[capacity];
    }

    public int Capacity { get; }
    public int IntervalMillis { get; }

    public int Count
    {
        get { lock (_gate) return _count; }
    }

    public int SeriesCount
    {
        get { lock (_gate) return _series.Count; }
    }

    public int ThreadCount
    {
        get { lock (_gate) return _threads.Count; }
    }

    /// <summary>Managed bytes held by the rings (arrays only; dictionary overhead is small beside them).</summary>
    public long ApproximateBytes
    {
        get
        {
            lock (_gate)
                return (long)Capacity * (sizeof(long) + _series.Count * sizeof(double) + _threads.Count * ThreadRings.Figures * sizeof(float));
        }
    }

    /// <summary>
    /// Appends one sample: its time, every figure's value and every thread's figures. A figure not
    /// given this time reads 0 in this slot; a figure seen for the first time reads 0 before it.
    /// Figures and threads absent for a whole ring's length are forgotten.
    /// </summary>
    public void Append(long unixMs, Dictionary<string, double> figures, Dictionary<int, ThreadSample> threads)
    {
        lock (_gate)
        {
            int slot = _next;
            _times[slot] = unixMs;
            List<string>? gone = null;
            foreach (var (name, ring) in _series)
            {
                if (figures.TryGetValue(name, out double value))
                {
                    ring[slot] = value;
                    _missed.Remove(name);
                    continue;
                }
                ring[slot] = 0;
                int missed = _missed.GetValueOrDefault(name) + 1;
                _missed[name] = missed;
                if (missed >= Capacity)
                    (gone ??= []).Add(name);
            }
            if (gone is not null)
            {
                foreach (string name in gone)
                {
                    _series.Remove(name);
                    _missed.Remove(name);
                }
            }
            foreach (var (name, value) in figures)
            {
                if (_series.ContainsKey(name))
                    continue;
                var ring = new double[Capacity];
                ring[slot] = value;
                _series[name] = ring;
            }

            List<int>? stale = null;
            foreach (var (tid, rings) in _threads)
            {
                if (threads.TryGetValue(tid, out var sample))
                    rings.Write(slot, sample);
                else if (++rings.MissedSamples >= Capacity)
                    (stale ??= []).Add(tid);
                else
                    rings.Write(slot, default);
            }
            if (stale is not null)
                foreach (int tid in stale)
                    _threads.Remove(tid);
            foreach (var (tid, sample) in threads)
            {
                if (_threads.ContainsKey(tid))
                    continue;
                var rings = new ThreadRings(Capacity);
                rings.Write(slot, sample);
                _threads[tid] = rings;
            }

            _next = (slot + 1) % Capacity;
            _count = Math.Min(_count + 1, Capacity);
        }
    }

    /// <summary>The samples taken within [fromMs, toMs], oldest first.</summary>
    public MetricHistory Window(long fromMs, long toMs)
    {
        lock (_gate)
        {
            int first = (_next - _count + Capacity) % Capacity;
            var slots = new List<int>(_count);
            for (int i = 0; i < _count; i++)
            {
                int slot = (first + i) % Capacity;
                if (_times[slot] >= fromMs && _times[slot] <= toMs)
                    slots.Add(slot);
            }
            var times = new long[slots.Count];
            for (int i = 0; i < slots.Count; i++)
                times[i] = _times[slots[i]];
            var series = new Dictionary<string, double[]>(_series.Count, StringComparer.Ordinal);
            foreach (var (name, ring) in _series)
            {
                var values = new double[slots.Count];
                for (int i = 0; i < slots.Count; i++)
                    values[i] = ring[slots[i]];
                series[name] = values;
            }
            var threads = new List<ThreadHistory>(_threads.Count);
            foreach (var (tid, rings) in _threads)
                threads.Add(rings.Window(tid, slots));
            threads.Sort((a, b) => a.OsThreadId.CompareTo(b.OsThreadId));
            return new MetricHistory { IntervalMillis = IntervalMillis, Times = times, Series = series, Threads = threads };
        }
    }

    /// <summary>The newest value of a figure, or null before its first sample.</summary>
    public double? Latest(string name)
    {
        lock (_gate)
        {
            if (_count == 0 || !_series.TryGetValue(name, out var ring))
                return null;
            return ring[(_next - 1 + Capacity) % Capacity];
        }
    }

    /// <summary>One thread's figures in one sample.</summary>
    public readonly record struct ThreadSample(string Name, string Role, float CpuPercent, float TrackedBytes, float NetBytesPerSecond, float DiskBytesPerSecond);

    private sealed class ThreadRings(int capacity)
    {
        public const int Figures = 4;
        private readonly float[] _cpu = new float[capacity];
        private readonly float[] _tracked = new float[capacity];
        private readonly float[] _net = new float[capacity];
        private readonly float[] _disk = new float[capacity];
        private string _name = "";
        private string _role = "";
        public int MissedSamples;

        public void Write(int slot, ThreadSample sample)
        {
            if (sample.Name is not null)
            {
                _name = sample.Name;
                _role = sample.Role;
                MissedSamples = 0;
            }
            _cpu[slot] = sample.CpuPercent;
            _tracked[slot] = sample.TrackedBytes;
            _net[slot] = sample.NetBytesPerSecond;
            _disk[slot] = sample.DiskBytesPerSecond;
        }

        public ThreadHistory Window(int tid, List<int> slots)
        {
            var cpu = new float[slots.Count];
            var tracked = new float[slots.Count];
            var net = new float[slots.Count];
            var disk = new float[slots.Count];
            for (int i = 0; i < slots.Count; i++)
            {
                int slot = slots[i];
                cpu[i] = _cpu[slot];
                tracked[i] = _tracked[slot];
                net[i] = _net[slot];
                disk[i] = _disk[slot];
            }
            return new ThreadHistory(tid, _name, _role, cpu, tracked, net, disk);
        }
    }
}
