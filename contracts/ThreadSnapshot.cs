namespace Diagnostics.Contracts;

/// <summary>
/// One operating-system thread of the server process: who it is, what it costs and what it is
/// doing. Threads that allocated tracked memory or did accounted I/O stay listed after they
/// exit (<see cref="Alive"/> false) until their figures have been reported.
/// </summary>
public sealed record ThreadSnapshot
{
    public required int OsThreadId { get; init; }
    /// <summary>The managed thread id, when the thread is known to the runtime (0 otherwise).</summary>
    public int ManagedThreadId { get; init; }
    public required string Name { get; init; }
    /// <summary>What the thread is for: "network I/O", "shard executor 3", "aof writer", "sampler"...</summary>
    public required string Role { get; init; }
    public required bool Alive { get; init; }
    public double CpuUserSeconds { get; init; }
    public double CpuSystemSeconds { get; init; }
    /// <summary>Share of one core over the last sampler interval (100 = one core busy).</summary>
    public double CpuPercent { get; init; }
    /// <summary>Tracked native bytes allocated by this thread and still alive.</summary>
    public long TrackedBytes { get; init; }
    public long TrackedAllocatedBytes { get; init; }
    public long TrackedFreedBytes { get; init; }
    public long NetInputBytes { get; init; }
    public long NetOutputBytes { get; init; }
    /// <summary>TLS handshakes this thread completed, and the microseconds they took (first byte to done).</summary>
    public long TlsHandshakes { get; init; }
    public long TlsHandshakeMicros { get; init; }
    public long CommandsProcessed { get; init; }
    /// <summary>The server's own disk accounting for this thread.</summary>
    public long DiskReadBytes { get; init; }
    public long DiskWriteBytes { get; init; }
    public long DiskOperations { get; init; }
    /// <summary>The kernel's per-thread I/O counters (Linux /proc/self/task/TID/io); null elsewhere.</summary>
    public KernelIoCounters? KernelIo { get; init; }
    /// <summary>What the thread is running now, if anything.</summary>
    public InFlightWork? Running { get; init; }
}
