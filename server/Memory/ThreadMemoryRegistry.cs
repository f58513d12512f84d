namespace Diagnostics.Server.Memory;

/// <summary>
/// Every thread that ever allocated through <see cref="TrackedAllocator"/>. Lookup by id is a
/// lock-free array read (frees from any thread need the owner's record); registration and
/// retirement take a lock, which happens once per thread lifetime.
/// A record outlives its thread until a snapshot has reported it as exited and nothing it
/// allocated is still alive; only then is its id recycled.
/// </summary>
public static class ThreadMemoryRegistry
{
    private static readonly Lock s_gate = new();
    private static ThreadMemoryRecord?[] s_records = new ThreadMemoryRecord?[64];
    private static readonly Stack<int> s_freeIds = new();
    private static int s_nextId = 1; // id 0 is never used, so a zeroed header is recognisably bad
    private static int s_count;

    /// <summary>The largest id a block header can hold (the header's top byte names the C allocator).</summary>
    internal const int MaxId = (1 << 24) - 1;

    internal static ThreadMemoryRecord Get(int id) => Volatile.Read(ref s_records)[id]!;

    /// <summary>Records held now (live threads and exited ones not yet retired).</summary>
    internal static int Count => Volatile.Read(ref s_count);

    /// <summary>
    /// Live bytes summed over every record, without the lock: the process total, exact once no
    /// allocation is in flight (a record's figures may be a moment old, never torn). Reads one
    /// line per record, so it is for readers, not for every allocation.
    /// </summary>
    internal static long SumLiveBytes()
    {
        var records = Volatile.Read(ref s_records);
        int end = Math.Min(Volatile.Read(ref s_nextId), records.Length);
        long sum = 0;
        for (int i = 1; i < end; i++)
            if (Volatile.Read(ref records[i]) is { } record)
                sum += record.LiveBytes;
        return sum;
    }

    internal static ThreadMemoryRecord Register(Thread thread)
    {
        lock (s_gate)
        {
            int id = s_freeIds.Count > 0 ? s_freeIds.Pop() : s_nextId;
            if (id > MaxId)
                throw new InvalidOperationException($"more than {MaxId} threads hold tracked memory at once");
            if (id == s_nextId)
                s_nextId++;
            var records = s_records;
            if (id >= records.Length)
            {
                Array.Resize(ref records, records.Length * 2);
                Volatile.Write(ref s_records, records);
            }
            var record = new ThreadMemoryRecord(id, thread, OsThread.CurrentId());
            Volatile.Write(ref records[id], record);
            s_count++;
            return record;
        }
    }

    /// <summary>
    /// All records, live and exited. Exited threads are reported once more after they die; a
    /// record that has been reported exited and holds no live bytes is then retired.
    /// </summary>
    public static List<ThreadMemoryRecord> Snapshot()
    {
        var result = new List<ThreadMemoryRecord>();
        lock (s_gate)
        {
            var records = s_records;
            for (int i = 1; i < s_nextId; i++)
            {
                var record = records[i];
                if (record is null)
                    continue;
                if (!record.IsAlive)
                {
                    if (record.ReportedExited && record.LiveBytes == 0)
                    {
                        // Its thread is gone: nobody else writes its share of the global total.
                        TrackedAllocator.Publish(record.TakeUnpublished());
                        records[i] = null;
                        s_count--;
                        s_freeIds.Push(i);
                        continue;
                    }
                    record.ReportedExited = true;
                }
                result.Add(record);
            }
        }
        return result;
    }
}
