namespace Diagnostics.Monitor.Aggregation;

/// <summary>
/// One completed I/O from any kernel source, with its target already interned
/// (<see cref="TargetTable"/>) so that it can be summed without a string in sight.
/// </summary>
/// <param name="UnixMicros">When the call started, wall clock.</param>
/// <param name="Call">Index of the platform call ("pwrite64", "FileIo/Write") in the source's call table.</param>
/// <param name="Result">Bytes moved or the new handle; a negative error code when the call failed.</param>
public readonly record struct IoEvent(long UnixMicros, int ThreadId, int Target, IoOperation Operation, byte Call, long Result, long DurationNanos)
{
    public bool Failed => Result < 0;

    /// <summary>Bytes the call moved: its result for reads, writes, sends and receives that succeeded.</summary>
    public long Bytes => Result > 0 && Operation is IoOperation.Read or IoOperation.Write or IoOperation.Send or IoOperation.Receive
        or IoOperation.DiskRead or IoOperation.DiskWrite ? Result : 0;
}
