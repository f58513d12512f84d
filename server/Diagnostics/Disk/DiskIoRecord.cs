using Diagnostics.Server.Diagnostics.Latency;

namespace Diagnostics.Server.Diagnostics.Disk;

/// <summary>
/// The disk operations one thread made, per <see cref="DiskIoPurpose"/>: count, bytes, total time
/// and a latency histogram. Only the owning thread writes; readers see possibly stale, never torn,
/// 64-bit values.
/// </summary>
public sealed class DiskIoRecord
{
    private static readonly int PurposeCount = Enum.GetValues<DiskIoPurpose>().Length;
    private readonly long[] _counts = new long[PurposeCount];
    private readonly long[] _bytes = new long[PurposeCount];
    private readonly long[] _micros = new long[PurposeCount];
    private readonly long[] _errors = new long[PurposeCount];
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

    internal void Add(DiskIoPurpose purpose, long bytes, long micros, bool failed)
    {
        int p = (int)purpose;
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
            Volatile.Read(ref _micros[p]), Volatile.Read(ref _errors[p]), _latency[p].Snapshot());
    }
}

/// <summary>One thread's (or the sum of all threads') figures for one purpose.</summary>
public sealed record DiskIoStats(DiskIoPurpose Purpose, long Count, long Bytes, long Micros, long Errors, long[] Buckets)
{
    public DiskIoStats Plus(DiskIoStats other)
    {
        var buckets = new long[Buckets.Length];
        for (int i = 0; i < buckets.Length; i++)
            buckets[i] = Buckets[i] + other.Buckets[i];
        return new DiskIoStats(Purpose, Count + other.Count, Bytes + other.Bytes, Micros + other.Micros, Errors + other.Errors, buckets);
    }
}
