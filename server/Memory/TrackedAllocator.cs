using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Diagnostics.Server.Memory;

/// <summary>
/// The one way the server obtains unmanaged memory. Each block carries an 8-byte header naming
/// the thread that allocated it (and, in its top byte, the C allocator that served it) and its
/// usable size; the owner is charged on allocation, and on free either the owner's plain counter
/// (free on the owning thread) or its Interlocked remote counter (free anywhere else).
/// The process total is not one contended counter: each thread keeps its share of it and adds
/// the share to a global figure only once it passes <see cref="PublishThresholdBytes"/> either
/// way. Exact readers (INFO, MEMORY STATS) sum the thread records; maxmemory's checks read the
/// global figure and sum the records only when the limit is within the figure's slack
/// (<see cref="TotalBytesNear"/>).
/// </summary>
public static unsafe class TrackedAllocator
{
    public const int HeaderSize = 8;
    /// <summary>The largest block served: sizes are kept in the header's 32-bit field.</summary>
    public const long MaxBlockBytes = int.MaxValue - 64;

    /// <summary>
    /// How far a thread's unpublished share may stray from zero before it is added to the global
    /// figure: one Interlocked per 64 KB of net growth or shrinkage instead of one per call.
    /// </summary>
    public const long PublishThresholdBytes = 64 * 1024;

    private const int OwnerMask = ThreadMemoryRegistry.MaxId;
    private const int TagShift = 24;

    [ThreadStatic] private static ThreadMemoryRecord? t_record;
    /// <summary>The sum of the shares threads have published (off by at most the unpublished shares).</summary>
    private static long s_publishedBytes;
    private static long s_peakBytes;

    // The backend new blocks come from; blocks of an earlier one are freed through theirs (the tag).
    // glibc until Use says otherwise (initialisers, not a static constructor, so the hot paths
    // carry no class-initialisation checks).
    private static AllocatorBackend s_backend = AllocatorBackend.Glibc;
    private static delegate* unmanaged[SuppressGCTransition]<nuint, void*> s_malloc = s_backend.Malloc;
    private static delegate* unmanaged[SuppressGCTransition]<nuint, nuint, void*> s_calloc = s_backend.Calloc;
    private static delegate* unmanaged[SuppressGCTransition]<void*, void> s_free = s_backend.Free;
    private static delegate* unmanaged[SuppressGCTransition]<void*, nuint> s_usableSize = s_backend.UsableSize;
    private static int s_tagBits = s_backend.Tag << TagShift;

    /// <summary>The C allocator new blocks come from (INFO's mem_allocator).</summary>
    public static AllocatorBackend Backend => s_backend;

    /// <summary>
    /// Serves new blocks from <paramref name="backend"/>; blocks already handed out stay with the
    /// allocator that made them. Called once at startup, before the data path runs.
    /// </summary>
    public static void Use(AllocatorBackend backend)
    {
        s_malloc = backend.Malloc;
        s_calloc = backend.Calloc;
        s_free = backend.Free;
        s_usableSize = backend.UsableSize;
        s_tagBits = backend.Tag << TagShift;
        s_backend = backend;
    }

    /// <summary>
    /// Bytes currently held by all tracked blocks (usable sizes, headers included): the thread
    /// records summed, exact once no allocation is in flight. Costs a read per thread record.
    /// </summary>
    public static long TotalBytes
    {
        get
        {
            long total = ThreadMemoryRegistry.SumLiveBytes();
            NotePeak(total);
            return total;
        }
    }

    /// <summary>
    /// The total as far as a check against <paramref name="limit"/> needs it: the published
    /// figure plus the caller's own share when that is clearly on one side of the limit (one
    /// shared read), the exact sum when the limit is within what other threads may not have
    /// published yet. So maxmemory's check before every write costs one read while memory is
    /// well under the limit, and is exact near it.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static long TotalBytesNear(long limit)
    {
        long approximate = Volatile.Read(ref s_publishedBytes) + (t_record?.UnpublishedBytes ?? 0);
        long slack = PublishThresholdBytes * ThreadMemoryRegistry.Count;
        return approximate + slack < limit || approximate - slack > limit ? approximate : TotalBytes;
    }

    /// <summary>The published figure alone (what threads have added to it so far).</summary>
    internal static long PublishedBytes => Volatile.Read(ref s_publishedBytes);

    /// <summary>
    /// Highest total seen: at every publication (so within the unpublished shares of the true
    /// peak) and at every exact read, as Redis samples its peak in its cron and in INFO.
    /// </summary>
    public static long PeakBytes => Math.Max(Volatile.Read(ref s_peakBytes), TotalBytes);

    /// <summary>The calling thread's record, registering the thread on first use.</summary>
    public static ThreadMemoryRecord CurrentThread
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => t_record ?? RegisterCurrentThread();
    }

    /// <summary>Names the calling thread in memory and I/O views (e.g. "shard executor 2").</summary>
    public static void NameCurrentThread(string name) => CurrentThread.Name = name;

    public static byte* Alloc(nuint size)
    {
        if (size > MaxBlockBytes)
            ThrowTooLarge(size);
        var record = CurrentThread;
        return Charge(record, (byte*)s_malloc(size + HeaderSize), size);
    }

    /// <summary>
    /// A block whose bytes are zero (a hash table's new bucket array), from the allocator's calloc:
    /// a big one comes as fresh zero pages from the system, which fault in as they are first
    /// written, so the write that doubles a table of millions does not clear hundreds of MB at once.
    /// </summary>
    public static byte* AllocZeroed(nuint size)
    {
        if (size > MaxBlockBytes)
            ThrowTooLarge(size);
        var record = CurrentThread;
        return Charge(record, (byte*)s_calloc(1, size + HeaderSize), size);
    }

    /// <summary>Writes a new block's header (owner, backend, usable size) and charges its owner.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* Charge(ThreadMemoryRecord record, byte* block, nuint size)
    {
        if (block == null)
            throw new OutOfMemoryException($"native allocation of {size} bytes failed");
        int charged = (int)Math.Min(s_usableSize(block), (nuint)int.MaxValue);
        *(int*)block = record.Id | s_tagBits;
        *(int*)(block + 4) = charged;
        if (record.ChargeAllocation(charged))
            Publish(record.TakeUnpublished());
        return block + HeaderSize;
    }

    public static void Free(byte* pointer)
    {
        if (pointer == null)
            return;
        byte* block = pointer - HeaderSize;
        int word = *(int*)block;
        int owner = word & OwnerMask;
        int charged = *(int*)(block + 4);
        var current = CurrentThread;
        bool publish;
        if (current.Id == owner)
        {
            publish = current.ChargeOwnFree(charged);
        }
        else
        {
            ThreadMemoryRegistry.Get(owner).ChargeRemoteFree(charged);
            publish = current.NoteForeignFree(charged);
        }
        if (publish)
            Publish(current.TakeUnpublished());
        if ((word & ~OwnerMask) == s_tagBits)
            s_free(block);
        else
            AllocatorBackend.ByTag(word >>> TagShift).Free(block);
    }

    /// <summary>Adds a thread's share to the global figure, noting a new peak.</summary>
    internal static void Publish(long bytes)
    {
        if (bytes == 0)
            return;
        NotePeak(Interlocked.Add(ref s_publishedBytes, bytes));
    }

    private static void NotePeak(long total)
    {
        if (total > Volatile.Read(ref s_peakBytes))
            Volatile.Write(ref s_peakBytes, total); // racy max: a peak is a diagnostic figure, not an invariant
    }

    /// <summary>
    /// Grows or shrinks a block. The result is charged to the calling thread, like any allocation;
    /// the old block's charge goes back to its owner.
    /// </summary>
    public static byte* Realloc(byte* pointer, nuint size)
    {
        if (pointer == null)
            return Alloc(size);
        byte* fresh = Alloc(size);
        nuint oldSize = UsableSize(pointer);
        Buffer.MemoryCopy(pointer, fresh, size, Math.Min(oldSize, size));
        Free(pointer);
        return fresh;
    }

    /// <summary>
    /// Grows a buffer that must hold <paramref name="needed"/> bytes by doubling its capacity
    /// (starting at <paramref name="initial"/>), keeping its contents; capacities stay below 2 GB
    /// so lengths fit an int. Throws when <paramref name="needed"/> cannot fit.
    /// </summary>
    public static byte* GrowDoubling(byte* block, ref int capacity, long needed, int initial, string what)
    {
        long grown = Math.Max(initial, (long)capacity * 2);
        while (grown < needed)
            grown *= 2;
        grown = Math.Min(grown, int.MaxValue - 1024);
        if (grown < needed)
            throw new InsufficientMemoryException($"{what} exceeds 2 GB");
        byte* fresh = Realloc(block, (nuint)grown);
        capacity = (int)grown;
        return fresh;
    }

    /// <summary>Bytes the caller may use in the block (at least what it asked for).</summary>
    public static nuint UsableSize(byte* pointer) => (nuint)(ChargedSize(pointer) - HeaderSize);

    /// <summary>Bytes the block is charged for, header included.</summary>
    public static int ChargedSize(byte* pointer) => *(int*)(pointer - HeaderSize + 4); // header: owner id, then charged size

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ThreadMemoryRecord RegisterCurrentThread()
        => t_record = ThreadMemoryRegistry.Register(Thread.CurrentThread);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowTooLarge(nuint size) => throw new BlockTooLargeException((long)size);
}
