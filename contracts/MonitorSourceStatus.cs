namespace Diagnostics.Contracts;

/// <summary>
/// One event source of the monitor ("tracefs-syscalls", "tracefs-block", "eventpipe",
/// "etw-kernel"): its state, its rate, and every event it lost, by where it was lost.
/// </summary>
public sealed record MonitorSourceStatus
{
    public required string Name { get; init; }
    /// <summary>"running", "starting", "stopped", or "failed: why".</summary>
    public required string State { get; init; }
    /// <summary>What it watches: the tracefs instance, the devices, the session.</summary>
    public string Detail { get; init; } = "";
    public double EventsPerSecond { get; init; }
    public long TotalEvents { get; init; }
    /// <summary>Events the kernel or the runtime dropped before the monitor could read them (ring buffer overruns, lost EventPipe buffers).</summary>
    public long DroppedAtSource { get; init; }
    /// <summary>Events the monitor itself dropped (a bounded queue full, an exit event with no enter).</summary>
    public long DroppedInMonitor { get; init; }
}
