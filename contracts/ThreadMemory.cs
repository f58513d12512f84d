namespace Diagnostics.Contracts;

/// <summary>Tracked native memory charged to one thread.</summary>
public sealed record ThreadMemory(int OsThreadId, string Name, bool Alive, long LiveBytes, long AllocatedBytes, long FreedBytes, long Allocations, long Frees);
