using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Diagnostics.Server.Memory;

/// <summary>
/// Memory charged to one thread. The owning thread updates <see cref="_allocatedBytes"/> and
/// <see cref="_freedBytes"/> with plain arithmetic; other threads that free the owner's blocks add
/// to <see cref="_remoteFreedBytes"/> with Interlocked, on a line of its own. Readers on other
/// threads may see slightly stale figures, never torn ones (64-bit fields, 64-bit runtime).
/// The record also carries the thread's share of the process total that it has not yet added to
/// the global figure (<see cref="TrackedAllocator"/> batches that figure per thread).
/// </summary>
public sealed class ThreadMemoryRecord
{
    // Owner-written counters first, the cross-thread counters on their own cache line after
    // padding, so remote frees do not invalidate the line the owner writes on every allocation,
    // and the owner never reads the remote line (the remote counters are summed by readers
    // instead of being folded in by the owner, which was a read of a contended line per allocation).
    private long _allocatedBytes;
    private long _freedBytes;
    private long _allocations;
    private long _frees;
    /// <summary>
    /// Allocations less frees this thread made (its own blocks or others') since it last added
    /// them to the global total; written by this thread only, published past a threshold.
    /// </summary>
    private long _unpublishedBytes;
#pragma warning disable CS0169, IDE0051 // padding fields are never read by design
    private readonly PaddingLine _padding;
#pragma warning restore CS0169, IDE0051
    private long _remoteFreedBytes;
    private long _remoteFrees;

    internal ThreadMemoryRecord(int id, Thread thread, int osThreadId)
    {
        Id = id;
        Thread = thread;
        ManagedThreadId = thread.ManagedThreadId;
        OsThreadId = osThreadId;
        Name = OsThread.NameOf(thread);
    }

    /// <summary>Slot in the registry; stored in the header of every block this thread allocates.</summary>
    public int Id { get; }
    public int ManagedThreadId { get; }
    public int OsThreadId { get; }
    public string Name { get; internal set; }
    internal Thread Thread { get; }
    public bool IsAlive => Thread.IsAlive;

    /// <summary>Set once a snapshot has reported this thread as exited.</summary>
    internal bool ReportedExited { get; set; }

    public long AllocatedBytes => Volatile.Read(ref _allocatedBytes);
    public long FreedBytes => Volatile.Read(ref _freedBytes) + Volatile.Read(ref _remoteFreedBytes);
    public long Allocations => Volatile.Read(ref _allocations);
    public long Frees => Volatile.Read(ref _frees) + Volatile.Read(ref _remoteFrees);
    public long LiveBytes => AllocatedBytes - FreedBytes;

    /// <summary>This thread's part of the process total not yet in the global figure.</summary>
    internal long UnpublishedBytes => Volatile.Read(ref _unpublishedBytes);

    /// <summary>Owner only. True when the unpublished share has passed the threshold and must be published.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool ChargeAllocation(long bytes)
    {
        _allocatedBytes += bytes;
        _allocations++;
        return (_unpublishedBytes += bytes) > TrackedAllocator.PublishThresholdBytes;
    }

    /// <summary>Owner only: a free of one of its own blocks. True when the share must be published.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool ChargeOwnFree(long bytes)
    {
        _freedBytes += bytes;
        _frees++;
        return (_unpublishedBytes -= bytes) < -TrackedAllocator.PublishThresholdBytes;
    }

    /// <summary>Owner only: this thread freed another thread's block (charged to that owner). True when the share must be published.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool NoteForeignFree(long bytes) => (_unpublishedBytes -= bytes) < -TrackedAllocator.PublishThresholdBytes;

    /// <summary>Any thread: one of this record's blocks was freed on another thread.</summary>
    internal void ChargeRemoteFree(long bytes)
    {
        Interlocked.Add(ref _remoteFreedBytes, bytes);
        Interlocked.Increment(ref _remoteFrees);
    }

    /// <summary>
    /// Owner (or, once the thread has exited, the registry under its lock): hands the unpublished
    /// share over and starts it again from zero.
    /// </summary>
    internal long TakeUnpublished()
    {
        long bytes = _unpublishedBytes;
        Volatile.Write(ref _unpublishedBytes, 0);
        return bytes;
    }

    [StructLayout(LayoutKind.Sequential, Size = 64)]
    private struct PaddingLine;
}
