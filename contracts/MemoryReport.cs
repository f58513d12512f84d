namespace Diagnostics.Contracts;

/// <summary>
/// Where the memory is: tracked native bytes (the data), by thread and by database, against
/// maxmemory; the managed heap and the process's resident set beside it.
/// </summary>
public sealed record MemoryReport
{
    public long TrackedBytes { get; init; }
    public long PeakTrackedBytes { get; init; }
    public long DatasetBytes { get; init; }
    public long OverheadBytes { get; init; }
    public long AofBufferBytes { get; init; }
    public long ClientBuffersBytes { get; init; }
    public long ResidentBytes { get; init; }
    /// <summary>The C allocator under the tracked allocator (INFO mem_allocator), e.g. "jemalloc-5.3.0"; empty in older packages.</summary>
    public string Allocator { get; init; } = "";
    /// <summary>What that allocator reports (INFO allocator_allocated / allocator_active / allocator_resident).</summary>
    public long AllocatorAllocatedBytes { get; init; }
    public long AllocatorActiveBytes { get; init; }
    public long AllocatorResidentBytes { get; init; }
    public long ManagedHeapBytes { get; init; }
    public long MaxMemoryBytes { get; init; }
    public string MaxMemoryPolicy { get; init; } = "noeviction";
    public long EvictedKeys { get; init; }
    public long Keys { get; init; }
    public IReadOnlyList<ThreadMemory> Threads { get; init; } = [];
    public IReadOnlyList<DatabaseMemory> Databases { get; init; } = [];
}
