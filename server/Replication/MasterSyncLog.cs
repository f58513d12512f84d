namespace Diagnostics.Server.Replication;

/// <summary>
/// The last syncs this master served (oldest first), bounded as the replica side's
/// <see cref="SyncHistory"/>: enough to see a replica that keeps resyncing, not a log of every one.
/// </summary>
public sealed class MasterSyncLog
{
    private const int Kept = 32;
    private readonly Lock _lock = new();
    private readonly Queue<MasterSyncEntry> _entries = new();

    public MasterSyncEntry Add(MasterSyncEntry entry)
    {
        lock (_lock)
        {
            if (_entries.Count == Kept)
                _entries.Dequeue();
            _entries.Enqueue(entry);
        }
        return entry;
    }

    public IReadOnlyList<MasterSyncEntry> Snapshot()
    {
        lock (_lock)
            return [.. _entries];
    }
}
