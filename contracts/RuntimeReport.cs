namespace Diagnostics.Contracts;

/// <summary>The .NET runtime's state: garbage collector and thread pool.</summary>
public sealed record RuntimeReport
{
    public required string Framework { get; init; }
    public bool ServerGc { get; init; }
    public string GcLatencyMode { get; init; } = "";
    public long HeapBytes { get; init; }
    public long CommittedBytes { get; init; }
    public long FragmentedBytes { get; init; }
    public long TotalAllocatedBytes { get; init; }
    public IReadOnlyList<long> Collections { get; init; } = [];
    public double TotalPauseMillis { get; init; }
    /// <summary>Share of time spent paused by the GC since the process started (0..100).</summary>
    public double PauseTimePercent { get; init; }
    public IReadOnlyList<double> LastPausesMillis { get; init; } = [];
    public int ThreadPoolThreads { get; init; }
    public long ThreadPoolPendingWorkItems { get; init; }
    public long ThreadPoolCompletedWorkItems { get; init; }
    public int ThreadPoolMinWorkers { get; init; }
    public int ThreadPoolMaxWorkers { get; init; }
    public int ThreadPoolAvailableWorkers { get; init; }
    public long LockContentions { get; init; }
    public int ProcessThreads { get; init; }
}
