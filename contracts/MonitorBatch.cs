namespace Diagnostics.Contracts;

/// <summary>
/// What the monitor pushes to the server once a second: who it is and how its sources are doing,
/// and what the kernel and the runtime saw of the server process during [StartUnixMs, EndUnixMs).
/// </summary>
public sealed record MonitorBatch
{
    public required MonitorStatus Status { get; init; }
    public long StartUnixMs { get; init; }
    public long EndUnixMs { get; init; }
    /// <summary>Kernel I/O of the interval, summed by thread, target and operation.</summary>
    public IReadOnlyList<KernelIoAggregate> Io { get; init; } = [];
    /// <summary>A bounded, uniform sample of the interval's raw I/O events, for the live list.</summary>
    public IReadOnlyList<KernelIoEvent> Events { get; init; } = [];
    /// <summary>Each server thread's /proc/PID/task/TID/io counters at the end of the interval.</summary>
    public IReadOnlyList<ThreadKernelCounters> Threads { get; init; } = [];
    public RuntimeInterval? Runtime { get; init; }
}
