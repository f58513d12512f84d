using Diagnostics.Server.Diagnostics.Latency;

namespace Diagnostics.Server.Diagnostics.Disk;

/// <summary>
/// The disk operations one thread made, per <see cref="DiskIoPurpose"/>: count, bytes, total time,
/// a latency histogram and the slowest operation (its time and file: a histogram bucket's bound can
/// be half again the real worst). Only the owning thread writes, except that the sampler empties
/// the interval's worst; readers see possibly stale, never torn, 64-bit values.
/// </summary>
public sealed class DiskIoRecord
{
    private static readonly int PurposeCount = Enum.GetValues<DiskIoPurpose>().Length;
    private readonly long[] _counts = new long[PurposeCount];
    private readonly long[] _bytes = new long[PurposeCount];
    private readonly long[] _micros = new long[PurposeCount];
    private readonly long[] _errors = new long[PurposeCount];
    private readonly long[] _maxMicros = new long[PurposeCount];
    private readonly string?[] _slowestFile = new string?[PurposeCount];
    // The slowest since the sampler last took it (TakeIntervalMax).
    private readonly long[] _intervalMaxMicros = new long[PurposeCount];
    private readonly LatencyHistogram[] _latency = new LatencyHistogram[PurposeCount];

    internal DiskIoRecord(Thread thread, int osThreadId)
    {
        Thread = thread;
        OsThreadId = osThreadId;
        for (int i = 0; i < PurposeCount; i++)
            _latency[i] = new LatencyHistogram();
    }

    internal Thread Thread { get; }
    public int OsThreadId { get; }
    public string Name => Memory.OsThread.NameOf(Thread);
    public bool IsAlive => Thread.IsAlive;

    internal void Add(DiskIoPurpose purpose, long bytes, long micros, bool failed, string? file)
    {
        int p = (int)purpose;
        if (micros > _maxMicros[p])
        {
            _slowestFile[p] = file;
            Volatile.Write(ref _maxMicros[p], micros);
        }
        // Racing the sampler's exchange loses at most a value no larger than one it already took.
        if (micros > Volatile.Read(ref _intervalMaxMicros[p]))
            Volatile.Write(ref _intervalMaxMicros[p], micros);
        _counts[p]++;
        _bytes[p] += bytes;
        _micros[p] += micros;
        if (failed)
            _errors[p]++;
        _latency[p].Record(micros);
    }

    public DiskIoStats Read(DiskIoPurpose purpose)
    {
        int p = (int)purpose;
        return new DiskIoStats(purpose, Volatile.Read(ref _counts[p]), Volatile.Read(ref _bytes[p]),
            Volatile.Read(ref _micros[p]), Volatile.Read(ref _errors[p]), _latency[p].Snapshot())
        {
            MaxMicros = Volatile.Read(ref _maxMicros[p]),
            SlowestFile = Volatile.Read(ref _slowestFile[p]),
        };
    }

    /// <summary>The slowest operation of the purpose since the last call (the sampler's), and starts a new interval.</summary>
    internal long TakeIntervalMax(DiskIoPurpose purpose) => Interlocked.Exchange(ref _intervalMaxMicros[(int)purpose], 0);
}

/// <summary>One thread's (or the sum of all threads') figures for one purpose.</summary>
public sealed record DiskIoStats(DiskIoPurpose Purpose, long Count, long Bytes, long Micros, long Errors, long[] Buckets)
{
    /// <summary>The slowest single operation, measured.</summary>
    public long MaxMicros { get; init; }
    /// <summary>The file the slowest operation was on, when the caller named it.</summary>
    public string? SlowestFile { get; init; }

    public DiskIoStats Plus(DiskIoStats other)
    {
        var buckets = new long[Buckets.Length];
        for (int i = 0; i < buckets.Length; i++)
            buckets[i] = Buckets[i] + other.Buckets[i];
        var slowest = other.MaxMicros > MaxMicros ? other : this;
        return new DiskIoStats(Purpose, Count + other.Count, Bytes + other.Bytes, Micros + other.Micros, Errors + other.Errors, buckets)
        {
            MaxMicros = slowest.MaxMicros,
            SlowestFile = slowest.SlowestFile,
        };
    }
}
