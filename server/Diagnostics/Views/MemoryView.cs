using Diagnostics.Contracts;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>Where the memory is: the tracked total split by thread and by database, against maxmemory, beside the managed heap and RSS.</summary>
public static class MemoryView
{
    public static MemoryReport Build(DataServer server)
    {
        long tracked = TrackedAllocator.TotalBytes;
        var overview = MemoryOverview.Capture(server, readAllocator: false);
        long clientBuffers = 0;
        foreach (var client in server.Clients.Snapshot())
            clientBuffers += client.ArenaCapacity + client.QueryBufferBytes;

        var threads = new List<ThreadMemory>();
        foreach (var record in ThreadMemoryRegistry.Snapshot())
            threads.Add(new ThreadMemory(record.OsThreadId, record.Name, record.IsAlive, record.LiveBytes, record.AllocatedBytes, record.FreedBytes, record.Allocations, record.Frees));

        var databases = new List<Contracts.DatabaseMemory>();
        long keys = 0;
        for (int db = 0; db < server.Keyspace.DatabaseCount; db++)
        {
            long count = 0, expires = 0, table = 0;
            foreach (var shard in server.Keyspace.Shards)
            {
                var database = shard.Databases[db];
                count += database.Count;
                expires += database.ExpiresCount;
                table += database.Keys.BucketCount * IntPtr.Size;
            }
            keys += count;
            if (count > 0)
                databases.Add(new Contracts.DatabaseMemory(db, count, expires, table));
        }

        return new MemoryReport
        {
            TrackedBytes = tracked,
            PeakTrackedBytes = Math.Max(TrackedAllocator.PeakBytes, tracked),
            DatasetBytes = overview.DatasetBytes,
            OverheadBytes = overview.OverheadTotal,
            AofBufferBytes = server.Aof.BufferMemory,
            ClientBuffersBytes = clientBuffers,
            ResidentBytes = ProcFs.ResidentBytes(),
            ManagedHeapBytes = GC.GetTotalMemory(false),
            MaxMemoryBytes = MaxMemory(server),
            MaxMemoryPolicy = server.Config.Find("maxmemory-policy")?.Get() ?? "noeviction",
            EvictedKeys = server.Keyspace.Eviction.EvictedKeys,
            Keys = keys,
            Threads = threads,
            Databases = databases,
        };
    }

    public static long MaxMemory(DataServer server) => server.Keyspace.Eviction.MaxMemory;
}
