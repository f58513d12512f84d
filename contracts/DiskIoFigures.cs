namespace Diagnostics.Contracts;

/// <summary>
/// Disk operations of one purpose ("aof_write", "aof_fsync"...) by one thread, or by all threads
/// when <see cref="OsThreadId"/> is 0: count, bytes, time, errors and a latency histogram in
/// power-of-two microsecond buckets (bucket i counts operations under 2^i µs, not cumulative),
/// and the slowest single operation as measured, with the file it was on.
/// </summary>
public sealed record DiskIoFigures(int OsThreadId, string ThreadName, string Purpose, long Operations, long Bytes, long Micros, long Errors, long[] LatencyBuckets)
{
    /// <summary>The slowest single operation in µs (0 in packages that predate it).</summary>
    public long MaxMicros { get; init; }
    /// <summary>The path of the file the slowest operation was on, when known.</summary>
    public string? SlowestFile { get; init; }
}
