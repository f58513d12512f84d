using System.Runtime.InteropServices;

namespace Diagnostics.Server.Memory;

/// <summary>
/// Memory charged to one thread. The owning thread updates <see cref="_allocatedBytes"/> and
/// <see cref="_freedBytes"/> with plain arithmetic; other threads that free the owner's blocks add
/// to <see cref="_remoteFreedBytes"/> with Interlocked, and the owner folds that in later. Readers
/// on other threads may see slightly stale figures, never torn ones (64-bit fields, 64-bit runtime).
/// </summary>
public sealed class ThreadMemoryRecord
{
    // Owner-written counters first, the cross-thread counter on its own cache line after padding,
    // so remote frees do not invalidate the line the owner writes on every allocation.
    private long _allocatedBytes;
    private long _freedBytes;
    private long _allocations;
    private long _frees;
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

    internal void ChargeAllocation(long bytes)
    {
        _allocatedBytes += bytes;
        _allocations++;
        if (_remoteFreedBytes != 0)
            FoldRemoteFrees();
    }

    internal void ChargeOwnFree(long bytes)
    {
        _freedBytes += bytes;
        _frees++;
    }

    internal void ChargeRemoteFree(long bytes)
    {
        Interlocked.Add(ref _remoteFreedBytes, bytes);
        Interlocked.Increment(ref _remoteFrees);
    }

    /// <summary>Owner only: moves what other threads freed into the owner's plain counters.</summary>
    private void FoldRemoteFrees()
    {
        long bytes = Interlocked.Exchange(ref _remoteFreedBytes, 0);
        long count = Interlocked.Exchange(ref _remoteFrees, 0);
        _freedBytes += bytes;
        _frees += count;
    }

    [StructLayout(LayoutKind.Sequential, Size = 64)]
    private struct PaddingLine;
}
