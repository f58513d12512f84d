using System.Diagnostics;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Diagnostics.Disk;

/// <summary>
/// Where every disk operation of the server is counted: per thread (the thread that made the
/// system call) and per purpose. Recording touches only the calling thread's own record, so it
/// costs a thread-static read and a few additions. Records of exited threads are kept: the bytes a
/// finished rewrite thread wrote are still part of the story.
/// </summary>
public static class DiskIo
{
    private static readonly Lock s_gate = new();
    private static readonly List<DiskIoRecord> s_records = [];
    [ThreadStatic] private static DiskIoRecord? t_record;

    /// <summary>Timestamp to pass to <see cref="Record"/> when the operation ends.</summary>
    public static long Start() => Stopwatch.GetTimestamp();

    /// <summary>Counts one operation; <paramref name="file"/> (a path) is kept when it is the slowest so far.</summary>
    public static void Record(DiskIoPurpose purpose, long bytes, long startTimestamp, bool failed = false, string? file = null)
    {
        long micros = (long)Stopwatch.GetElapsedTime(startTimestamp).TotalMicroseconds;
        (t_record ?? Register()).Add(purpose, bytes, micros, failed, file);
    }

    /// <summary>The slowest operation of the purpose on any thread since the last call: the sampler's per-interval worst.</summary>
    internal static long TakeIntervalMax(DiskIoPurpose purpose)
    {
        long max = 0;
        foreach (var record in Snapshot())
            max = Math.Max(max, record.TakeIntervalMax(purpose));
        return max;
    }

    private static DiskIoRecord Register()
    {
        var record = new DiskIoRecord(Thread.CurrentThread, OsThread.CurrentId());
        lock (s_gate)
            s_records.Add(record);
        return t_record = record;
    }

    public static List<DiskIoRecord> Snapshot()
    {
        lock (s_gate)
            return [.. s_records];
    }

    /// <summary>Every thread's figures summed per purpose (purposes never used included, at zero).</summary>
    public static Dictionary<DiskIoPurpose, DiskIoStats> Totals()
    {
        var records = Snapshot();
        var totals = new Dictionary<DiskIoPurpose, DiskIoStats>();
        foreach (var purpose in Enum.GetValues<DiskIoPurpose>())
        {
            var total = new DiskIoStats(purpose, 0, 0, 0, 0, new long[LatencyHistogram.BucketCount]);
            foreach (var record in records)
                total = total.Plus(record.Read(purpose));
            totals[purpose] = total;
        }
        return totals;
    }

    /// <summary>Purposes that read from the disk; every other one writes (or syncs, opens, cuts).</summary>
    public static bool IsRead(DiskIoPurpose purpose) => purpose is DiskIoPurpose.RewriteRead or DiskIoPurpose.LoadRead or DiskIoPurpose.SnapshotRead;
}
