namespace Diagnostics.Contracts;

/// <summary>What the server's runtime reported through EventPipe over one interval.</summary>
public sealed record RuntimeInterval
{
    public IReadOnlyList<GcPause> GcPauses { get; init; } = [];
    /// <summary>Managed allocations by type, estimated from the runtime's allocation ticks (one every ~100 KB).</summary>
    public IReadOnlyList<TypeAllocation> Allocations { get; init; } = [];
    public long Contentions { get; init; }
    public long ContentionMicros { get; init; }
    /// <summary>The thread pool's worker count at its last adjustment in the interval, or -1 when none was reported.</summary>
    public int ThreadPoolWorkers { get; init; } = -1;
    public long ThreadPoolAdjustments { get; init; }
    public IReadOnlyList<ExceptionCount> Exceptions { get; init; } = [];
}
