using Diagnostics.Server.Diagnostics.Kernel;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Diagnostics.Info;

/// <summary>One database's structural memory, summed over the shards (MEMORY STATS db.N).</summary>
/// <param name="MainTableBytes">Bucket arrays plus every entry's header (Redis: dictEntry and robj per key).</param>
/// <param name="ExpiresBytes">The vector indexing the keys that have a TTL.</param>
public sealed record DatabaseMemory(int Index, long Keys, long Expires, long MainTableBytes, long ExpiresBytes);

/// <summary>
/// Where the server's memory goes, as Redis's getMemoryOverheadData computes it: the tracked
/// total split into fixed overhead (startup, clients, AOF buffer, hash tables and entry headers)
/// and the dataset, with the allocator's and the kernel's views beside it. MEMORY STATS and
/// INFO memory print it; the doctor and the HTTP API can read it as is. Figures are read
/// without stopping any shard, so they may be a moment apart.
/// </summary>
public sealed class MemoryOverview
{
    public long PeakAllocated { get; private init; }
    public long TotalAllocated { get; private init; }
    public long StartupAllocated { get; private init; }
    /// <summary>The replication stream's blocks (the backlog and what replicas have not been sent).</summary>
    public long ReplicationBacklog { get; private init; }
    /// <summary>Replicas' own buffers: their stream is the backlog's blocks, so nothing of their own.</summary>
    public long ClientsReplicas => 0;
    /// <summary>Tracked memory of normal clients: their request arenas.</summary>
    public long ClientsNormal { get; private init; }
    public long AofBuffer { get; private init; }
    public IReadOnlyList<DatabaseMemory> Databases { get; private init; } = [];
    public long OverheadTotal { get; private init; }
    public long KeysCount { get; private init; }
    public long BytesPerKey { get; private init; }
    public long DatasetBytes { get; private init; }
    public double DatasetPercentage { get; private init; }
    public double PeakPercentage { get; private init; }

    /// <summary>Process resident set size.</summary>
    public long Rss { get; private init; }
    /// <summary>The C allocator under the tracked allocator (mem_allocator), e.g. "jemalloc-5.3.0".</summary>
    public string AllocatorName { get; private init; } = "";
    /// <summary>
    /// Whether the allocator figures below are the tracked blocks' alone (jemalloc, mimalloc: a
    /// library only the tracked allocator uses, as in Redis) or the whole process's C heap (glibc,
    /// which the runtime also allocates from).
    /// </summary>
    public bool AllocatorServesOnlyTrackedBlocks { get; private init; }
    /// <summary>Bytes the C allocator has handed out; the tracked total when it cannot tell.</summary>
    public long AllocatorAllocated { get; private init; }
    /// <summary>Bytes in the allocator's active pages (handed out plus the free space between them).</summary>
    public long AllocatorActive { get; private init; }
    /// <summary>
    /// Bytes the allocator holds resident. glibc and mimalloc do not tell; the memory they hold
    /// (glibc's heap, mimalloc's committed segments) is the honest upper bound, so this equals
    /// <see cref="AllocatorActive"/> there, and the RSS where the allocator says nothing, as
    /// Redis does without jemalloc.
    /// </summary>
    public long AllocatorResident { get; private init; }

    public double AllocatorFragmentationRatio => Ratio(AllocatorActive, AllocatorAllocated);
    public long AllocatorFragmentationBytes => AllocatorActive - AllocatorAllocated;
    public double AllocatorRssRatio => Ratio(AllocatorResident, AllocatorActive);
    public long AllocatorRssBytes => AllocatorResident - AllocatorActive;
    /// <summary>RSS beyond the C allocator: the managed heap, code, stacks.</summary>
    public double RssOverheadRatio => Ratio(Rss, AllocatorResident);
    public long RssOverheadBytes => Rss - AllocatorResident;
    /// <summary>RSS over tracked memory (Redis's mem_fragmentation_ratio).</summary>
    public double Fragmentation => Ratio(Rss, TotalAllocated);
    public long FragmentationBytes => Rss - TotalAllocated;

    /// <summary>maxmemory (0: none) and what is compared with it.</summary>
    public long MaxMemory { get; private init; }
    public EvictionPolicy Policy { get; private init; }
    public long UsedForEviction { get; private init; }
    public long NotCountedForEviction { get; private init; }
    public long EvictedKeys { get; private init; }

    /// <summary>
    /// Takes the figures. <paramref name="readAllocator"/> asks the C allocator now (glibc's
    /// mallinfo2 walks its free lists under the arena locks, jemalloc merges every arena's
    /// statistics: fine for MEMORY STATS); otherwise its figures are at most
    /// <see cref="AllocatorSampleMilliseconds"/> old, as Redis samples them in its cron for INFO.
    /// </summary>
    public static unsafe MemoryOverview Capture(DataServer server, bool readAllocator)
    {
        long total = TrackedAllocator.TotalBytes;
        long peak = Math.Max(TrackedAllocator.PeakBytes, total);
        long startup = server.StartupAllocatedBytes;
        long clients = server.Clients.Totals().ArenaBytes;
        long aof = server.Aof.Enabled ? server.Aof.BufferMemory : 0;
        long backlog = server.ReplicationMaster.Backlog.MemoryBytes;
        long overhead = startup + clients + aof + backlog;

        var keyspace = server.Keyspace;
        var databases = new List<DatabaseMemory>();
        long keys = 0;
        for (int i = 0; i < keyspace.DatabaseCount; i++)
        {
            long count = 0, expires = 0, main = 0, expiresBytes = 0;
            foreach (var shard in keyspace.Shards)
            {
                var db = shard.Databases[i];
                count += db.Count;
                expires += db.ExpiresCount;
                main += db.Keys.BucketCount * sizeof(Entry*) + db.Count * (Entry.HeaderSize + TrackedAllocator.HeaderSize);
                expiresBytes += db.VolatileVectorBytes;
            }
            if (count == 0)
                continue;
            keys += count;
            overhead += main + expiresBytes;
            databases.Add(new DatabaseMemory(i, count, expires, main, expiresBytes));
        }

        long net = total > startup ? total - startup : 1;
        long dataset = Math.Max(0, total - overhead);
        long rss = ProcFs.ResidentBytes();
        var backend = TrackedAllocator.Backend;
        long allocated = total, active = rss, resident = rss;
        if (AllocatorSample(backend, fresh: readAllocator) is { } figures)
            (allocated, active, resident) = (figures.Allocated, figures.Active, figures.Resident);
        var eviction = keyspace.Eviction;
        long notCounted = eviction.NotCountedMemory();
        return new MemoryOverview
        {
            PeakAllocated = peak,
            TotalAllocated = total,
            StartupAllocated = startup,
            ClientsNormal = clients,
            AofBuffer = aof,
            ReplicationBacklog = backlog,
            Databases = databases,
            OverheadTotal = overhead,
            KeysCount = keys,
            BytesPerKey = keys == 0 ? 0 : net / keys,
            DatasetBytes = dataset,
            // Single precision, as Redis computes these, so the printed digits look alike.
            DatasetPercentage = (float)dataset * 100 / net,
            PeakPercentage = peak == 0 ? 0 : (float)total * 100 / peak,
            Rss = rss,
            AllocatorName = backend.Name,
            AllocatorServesOnlyTrackedBlocks = backend.ServesOnlyTrackedBlocks,
            AllocatorAllocated = allocated,
            AllocatorActive = active,
            AllocatorResident = resident,
            MaxMemory = eviction.MaxMemory,
            Policy = eviction.Policy,
            NotCountedForEviction = notCounted,
            UsedForEviction = Math.Max(0, total - notCounted),
            EvictedKeys = eviction.EvictedKeys,
        };
    }

    /// <summary>How old INFO's allocator figures may be (Redis's cron refreshes them every 100 ms).</summary>
    public const int AllocatorSampleMilliseconds = 100;

    private static readonly Lock s_sampleGate = new();
    private static AllocatorBackend? s_sampledBackend;
    private static AllocatorFigures? s_sample;
    private static long s_sampledAt;

    private static AllocatorFigures? AllocatorSample(AllocatorBackend backend, bool fresh)
    {
        lock (s_sampleGate)
        {
            long now = Environment.TickCount64;
            if (fresh || s_sampledBackend != backend || now - s_sampledAt >= AllocatorSampleMilliseconds)
            {
                s_sample = backend.TryReadFigures(out var figures) ? figures : null;
                s_sampledBackend = backend;
                s_sampledAt = now;
            }
            return s_sample;
        }
    }

    private static double Ratio(long a, long b) => b == 0 ? 0 : (float)a / b;
}
