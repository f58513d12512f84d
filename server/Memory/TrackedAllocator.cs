using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Diagnostics.Server.Memory;

/// <summary>
/// The one way the server obtains unmanaged memory. Each block carries an 8-byte header naming
/// the thread that allocated it and its usable size; the owner is charged on allocation, and on
/// free either the owner's plain counter (free on the owning thread) or its Interlocked remote
/// counter (free anywhere else). The global total is kept with Interlocked so INFO, maxmemory and
/// the studio read one figure without walking threads.
/// </summary>
public static unsafe class TrackedAllocator
{
    public const int HeaderSize = 8;
    /// <summary>The largest block served: sizes are kept in the header's 32-bit field.</summary>
    public const long MaxBlockBytes = int.MaxValue - 64;

    [ThreadStatic] private static ThreadMemoryRecord? t_record;
    private static long s_totalBytes;
    private static long s_peakBytes;

    /// <summary>Bytes currently held by all tracked blocks (usable sizes, headers included).</summary>
    public static long TotalBytes => Volatile.Read(ref s_totalBytes);

    /// <summary>Highest <see cref="TotalBytes"/> seen at an allocation.</summary>
    public static long PeakBytes => Volatile.Read(ref s_peakBytes);

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
        byte* block = (byte*)NativeMemory.Alloc(size + HeaderSize);
        if (block == null)
            throw new OutOfMemoryException($"native allocation of {size} bytes failed");
        return Track(block, size, record);
    }

    /// <summary>Writes the header of a block just obtained and charges it to <paramref name="record"/>'s thread.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* Track(byte* block, nuint size, ThreadMemoryRecord record)
    {
        int charged = (int)Math.Min(NativeBlockSize.Of(block, size + HeaderSize), (nuint)int.MaxValue);
        *(int*)block = record.Id;
        *(int*)(block + 4) = charged;
        record.ChargeAllocation(charged);
        long total = Interlocked.Add(ref s_totalBytes, charged);
        if (total > s_peakBytes)
            s_peakBytes = total; // racy max: a peak is a diagnostic figure, not an invariant
        return block + HeaderSize;
    }

    /// <summary>
    /// A block whose bytes are zero, from calloc: a big one comes as fresh pages the OS zeroes on
    /// first touch, so the caller pays no clearing pass (a hash table's new bucket array).
    /// </summary>
    public static byte* AllocZeroed(nuint size)
    {
        if (size > MaxBlockBytes)
            ThrowTooLarge(size);
        var record = CurrentThread;
        byte* block = (byte*)NativeMemory.AllocZeroed(size + HeaderSize);
        if (block == null)
            throw new OutOfMemoryException($"native allocation of {size} bytes failed");
        return Track(block, size, record);
    }

    public static void Free(byte* pointer)
    {
        if (pointer == null)
            return;
        byte* block = pointer - HeaderSize;
        int owner = *(int*)block;
        int charged = *(int*)(block + 4);
        var current = CurrentThread;
        if (current.Id == owner)
            current.ChargeOwnFree(charged);
        else
            ThreadMemoryRegistry.Get(owner).ChargeRemoteFree(charged);
        Interlocked.Add(ref s_totalBytes, -charged);
        NativeMemory.Free(block);
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
