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

    internal static ThreadMemoryRecord Get(int id) => Volatile.Read(ref s_records)[id]!;

    internal static ThreadMemoryRecord Register(Thread thread)
    {
        lock (s_gate)
        {
            int id = s_freeIds.Count > 0 ? s_freeIds.Pop() : s_nextId++;
            var records = s_records;
            if (id >= records.Length)
            {
                Array.Resize(ref records, records.Length * 2);
                Volatile.Write(ref s_records, records);
            }
            var record = new ThreadMemoryRecord(id, thread, OsThread.CurrentId());
            Volatile.Write(ref records[id], record);
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
                        records[i] = null;
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
