using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Info;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>
/// Where the memory is: MEMORY STATS's figures (<see cref="MemoryOverview"/>, one computation for
/// both) as a contract record, with the tracked total split by thread beside the managed heap.
/// </summary>
public static class MemoryView
{
    public static MemoryReport Build(DataServer server)
    {
        var overview = MemoryOverview.Capture(server, readAllocator: false);
        var threads = new List<ThreadMemory>();
        foreach (var record in ThreadMemoryRegistry.Snapshot())
            threads.Add(new ThreadMemory(record.OsThreadId, record.Name, record.IsAlive, record.LiveBytes, record.AllocatedBytes, record.FreedBytes, record.Allocations, record.Frees));
        var databases = new List<Contracts.DatabaseMemory>(overview.Databases.Count);
        foreach (var db in overview.Databases)
            databases.Add(new Contracts.DatabaseMemory(db.Index, db.Keys, db.Expires, db.MainTableBytes + db.ExpiresBytes));

        return new MemoryReport
        {
            TrackedBytes = overview.TotalAllocated,
            PeakTrackedBytes = overview.PeakAllocated,
            DatasetBytes = overview.DatasetBytes,
            OverheadBytes = overview.OverheadTotal,
            AofBufferBytes = overview.AofBuffer,
            ClientBuffersBytes = overview.ClientsNormal,
            ResidentBytes = overview.Rss,
            Allocator = overview.AllocatorName,
            AllocatorAllocatedBytes = overview.AllocatorAllocated,
            AllocatorActiveBytes = overview.AllocatorActive,
            AllocatorResidentBytes = overview.AllocatorResident,
            ManagedHeapBytes = GC.GetTotalMemory(false),
            MaxMemoryBytes = overview.MaxMemory,
            MaxMemoryPolicy = EvictionPolicyNames.Of(overview.Policy),
            EvictedKeys = overview.EvictedKeys,
            Keys = overview.KeysCount,
            Threads = threads,
            Databases = databases,
        };
    }
}
