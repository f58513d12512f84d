using System.Runtime.InteropServices;
using Diagnostics.Server.DataTypes;

namespace Diagnostics.Server.Tracking;

/// <summary>
/// One shard's part of Redis's tracking table: for each key a tracking client read, the ids of
/// the clients that may have it cached. A key lives in one shard whatever the database (Redis's
/// table ignores databases too), so only the shard's holder touches this table: no lock. It is a
/// <see cref="FieldTable"/> (key → the ids as 8-byte integers) in tracked native memory, charged
/// to the thread that ran the read, so it counts in used_memory and maxmemory like the data.
/// </summary>
public sealed unsafe class TrackedKeys : IDisposable
{
    private FieldTable* _table = FieldTable.Create();
    private long _items;

    /// <summary>Keys in the table (INFO tracking_total_keys); INFO reads it racily.</summary>
    public long Count => _table->Count;

    /// <summary>Client ids over all keys (INFO tracking_total_items).</summary>
    public long Items => Volatile.Read(ref _items);

    /// <summary>Tracked bytes the table holds.</summary>
    public long Bytes => _table->Bytes;

    /// <summary>Remembers that client <paramref name="id"/> may cache <paramref name="key"/> (<paramref name="hash"/>: Keyspace.Hash of it, which routed it here).</summary>
    public void Add(ReadOnlySpan<byte> key, uint hash, long id)
    {
        FieldNode* node = _table->Find(key, hash);
        if (node == null)
        {
            MemoryMarshal.Write(FieldNode.ValueOf(_table->Add(key, hash, sizeof(long))), id);
            Volatile.Write(ref _items, _items + 1);
            return;
        }
        var ids = MemoryMarshal.Cast<byte, long>(FieldNode.ValueOf(node));
        if (ids.Contains(id))
            return;
        // Usually a handful of clients per key: the grown list is built on the stack.
        int bytes = (ids.Length + 1) * sizeof(long);
        byte[]? rented = bytes > 1024 ? System.Buffers.ArrayPool<byte>.Shared.Rent(bytes) : null;
        Span<byte> grown = rented is null ? stackalloc byte[bytes] : rented.AsSpan(0, bytes);
        MemoryMarshal.AsBytes(ids).CopyTo(grown);
        MemoryMarshal.Write(grown[^sizeof(long)..], id);
        _table->Set(key, grown);
        if (rented is not null)
            System.Buffers.ArrayPool<byte>.Shared.Return(rented);
        Volatile.Write(ref _items, _items + 1);
    }

    /// <summary>The ids tracking <paramref name="key"/> (empty when none); valid until the table next changes.</summary>
    public ReadOnlySpan<long> IdsOf(ReadOnlySpan<byte> key, uint hash)
    {
        if (_table->Count == 0)
            return default;
        FieldNode* node = _table->Find(key, hash);
        return node == null ? default : MemoryMarshal.Cast<byte, long>(FieldNode.ValueOf(node));
    }

    /// <summary>Forgets <paramref name="key"/>: its clients were told.</summary>
    public void Remove(ReadOnlySpan<byte> key, uint hash)
    {
        int ids = IdsOf(key, hash).Length;
        if (ids > 0 && _table->Remove(key))
            Volatile.Write(ref _items, _items - ids);
    }

    /// <summary>FLUSHALL/FLUSHDB: every client was told to drop everything.</summary>
    public void Clear()
    {
        FieldTable.Destroy(_table);
        _table = FieldTable.Create();
        Volatile.Write(ref _items, 0);
    }

    public void Dispose()
    {
        if (_table != null)
        {
            FieldTable.Destroy(_table);
            _table = null;
        }
    }
}
