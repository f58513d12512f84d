using System.Collections.Concurrent;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Engine;

/// <summary>
/// Frees detached entries on a background thread (FLUSHALL ASYNC, FLUSHDB ASYNC), so the command
/// returns at once however many keys it dropped. The tracked allocator charges each free back to
/// the thread that allocated the block, so per-thread memory stays right when this thread frees.
/// </summary>
public static unsafe class LazyFree
{
    private static readonly ConcurrentQueue<(nint Chain, long Count)> s_queue = new();
    private static readonly SemaphoreSlim s_work = new(0);
    private static readonly Lock s_startGate = new();
    private static Thread? s_thread;
    private static long s_pendingObjects;
    private static long s_freedObjects;

    /// <summary>Entries queued and not yet freed (INFO lazyfree_pending_objects).</summary>
    public static long PendingObjects => Volatile.Read(ref s_pendingObjects);

    /// <summary>Entries freed in the background since start (INFO lazyfreed_objects).</summary>
    public static long FreedObjects => Volatile.Read(ref s_freedObjects);

    /// <summary>Queues a chain of detached entries (linked through Next) of <paramref name="count"/> entries.</summary>
    public static void FreeChain(Entry* chain, long count)
    {
        if (chain == null)
            return;
        EnsureStarted();
        Interlocked.Add(ref s_pendingObjects, count);
        s_queue.Enqueue(((nint)chain, count));
        s_work.Release();
    }

    private const long ProgressStep = 1024;

    private static void Publish(long freed)
    {
        Interlocked.Add(ref s_pendingObjects, -freed);
        Interlocked.Add(ref s_freedObjects, freed);
    }

    private static void EnsureStarted()
    {
        if (Volatile.Read(ref s_thread) is not null)
            return;
        lock (s_startGate)
        {
            if (s_thread is not null)
                return;
            var thread = new Thread(Run) { IsBackground = true, Name = "lazyfree" };
            thread.Start();
            Volatile.Write(ref s_thread, thread);
        }
    }

    private static void Run()
    {
        TrackedAllocator.NameCurrentThread("lazyfree");
        while (true)
        {
            s_work.Wait();
            while (s_queue.TryDequeue(out var item))
            {
                Entry* e = (Entry*)item.Chain;
                long freed = 0;
                while (e != null)
                {
                    Entry* next = e->Next;
                    EntryStore.Free(e);
                    e = next;
                    // Publish progress in steps so readers see it move without a locked add per entry.
                    if (++freed == ProgressStep)
                    {
                        Publish(freed);
                        freed = 0;
                    }
                }
                Publish(freed);
            }
        }
    }
}
