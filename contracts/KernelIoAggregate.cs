namespace Diagnostics.Contracts;

/// <summary>
/// The kernel's record of one thread's I/O on one target with one operation over an interval:
/// count, bytes moved (the calls' results), failures, time inside the kernel, and a latency
/// histogram in power-of-two microsecond buckets (bucket i counts calls under 2^i µs).
/// </summary>
/// <param name="ThreadId">The OS thread id; 0 for device requests the kernel issued on nobody's behalf (writeback).</param>
/// <param name="Target">A file path, "tcp 127.0.0.1:6379 &lt;- 127.0.0.1:50412", "pipe", or a block device name.</param>
/// <param name="TargetKind">"file", "socket", "pipe", "device" or "other".</param>
/// <param name="Operation">"read", "write", "fsync", "open", "close", "send", "receive", "disk_read", "disk_write", "disk_flush".</param>
/// <param name="Calls">The system calls or requests behind the operation ("pwrite64", "sendto"...), comma separated.</param>
public sealed record KernelIoAggregate(
    int ThreadId,
    string Target,
    string TargetKind,
    string Operation,
    string Calls,
    long Count,
    long Bytes,
    long Errors,
    long Micros,
    long[] LatencyBuckets);
