using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Tracking;

/// <summary>
/// One shard's part of Redis's tracking table: for each key a tracking client read, the ids of
/// the clients that may have it cached. A key lives in one shard whatever the database (Redis's
/// table ignores databases too), so only the shard's holder touches this table: no lock.
/// Managed memory, not the tracked allocator: the ids sets are .NET collections, so the table is
/// counted in the GC heap (and INFO's tracking_total_keys/items), not in used_memory.
/// </summary>
public sealed class TrackedKeys
{
    private readonly Dictionary<byte[], List<long>> _keys = new(ByteArrayComparer.Instance);
    private readonly Dictionary<byte[], List<long>>.AlternateLookup<ReadOnlySpan<byte>> _byKey;

    public TrackedKeys() => _byKey = _keys.GetAlternateLookup<ReadOnlySpan<byte>>();

    /// <summary>Keys in the table (INFO tracking_total_keys), read racily by INFO.</summary>
    public int Count => Volatile.Read(ref _count);
    private int _count;

    /// <summary>Client ids over all keys (INFO tracking_total_items).</summary>
    public long Items => Volatile.Read(ref _items);
    private long _items;

    /// <summary>Remembers that client <paramref name="id"/> may cache <paramref name="key"/>.</summary>
    public void Add(ReadOnlySpan<byte> key, long id)
    {
        if (!_byKey.TryGetValue(key, out var ids))
        {
            ids = new List<long>(2);
            _byKey[key] = ids;
            Volatile.Write(ref _count, _keys.Count);
        }
        if (!ids.Contains(id))
        {
            ids.Add(id);
            Volatile.Write(ref _items, _items + 1);
        }
    }

    /// <summary>Takes <paramref name="key"/> out of the table: the clients to tell, or null when none tracked it.</summary>
    public List<long>? Remove(ReadOnlySpan<byte> key)
    {
        if (_keys.Count == 0 || !_byKey.Remove(key, out _, out var ids))
            return null;
        Volatile.Write(ref _count, _keys.Count);
        Volatile.Write(ref _items, _items - ids.Count);
        return ids;
    }

    /// <summary>FLUSHALL/FLUSHDB: every client was told to drop everything.</summary>
    public void Clear()
    {
        _keys.Clear();
        _keys.TrimExcess();
        Volatile.Write(ref _count, 0);
        Volatile.Write(ref _items, 0);
    }
}
