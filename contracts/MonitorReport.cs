namespace Diagnostics.Contracts;

/// <summary>
/// GET /api/monitor: whether a monitor is attached and how its sources fare, and what the kernel
/// and the runtime saw of this server since it attached: totals by target and by thread, the
/// server's own accounting beside the kernel's, the latest events, GC pauses and allocations.
/// </summary>
public sealed record MonitorReport
{
    public bool Attached { get; init; }
    /// <summary>In words: "attached", "never attached: ...", "detached: no batch for 42 s".</summary>
    public required string State { get; init; }
    public long AttachedSinceUnixMs { get; init; }
    public long LastBatchUnixMs { get; init; }
    public long Batches { get; init; }
    /// <summary>Batches refused: a bad token, or a batch for another process.</summary>
    public long RejectedBatches { get; init; }
    /// <summary>Rows the server did not keep because their table was full (I/O rows, allocation and exception types, threads).</summary>
    public long DroppedRows { get; init; }
    public MonitorStatus? Status { get; init; }
    /// <summary>Since attach, all threads summed, by target and operation (ThreadId 0).</summary>
    public IReadOnlyList<KernelIoAggregate> ByTarget { get; init; } = [];
    /// <summary>Since attach, all targets summed, by thread and operation (Target "*").</summary>
    public IReadOnlyList<KernelIoAggregate> ByThread { get; init; } = [];
    public IReadOnlyList<IoComparison> Comparison { get; init; } = [];
    public IReadOnlyList<KernelIoEvent> RecentEvents { get; init; } = [];
    public IReadOnlyList<ThreadKernelCounters> ThreadCounters { get; init; } = [];
    public IReadOnlyList<GcPause> RecentGcPauses { get; init; } = [];
    /// <summary>Since attach, the types with the most allocated bytes, most first.</summary>
    public IReadOnlyList<TypeAllocation> TopAllocations { get; init; } = [];
    public IReadOnlyList<ExceptionCount> Exceptions { get; init; } = [];
    public long Contentions { get; init; }
    public long ContentionMicros { get; init; }
}
