namespace Diagnostics.Server.Replication;

/// <summary>The last syncs with a master (oldest first), and the totals since start.</summary>
public sealed class SyncHistory
{
    private const int Kept = 16;
    private readonly Lock _lock = new();
    private readonly Queue<SyncRecord> _records = new();

    public long FullSyncs { get; private set; }
    public long PartialSyncs { get; private set; }

    public void Add(SyncRecord record)
    {
        lock (_lock)
        {
            if (_records.Count == Kept)
                _records.Dequeue();
            _records.Enqueue(record);
            if (record.Full)
                FullSyncs++;
            else
                PartialSyncs++;
        }
    }

    /// <summary>A copy of the kept records, oldest first.</summary>
    public IReadOnlyList<SyncRecord> Snapshot()
    {
        lock (_lock)
            return [.. _records];
    }
}
