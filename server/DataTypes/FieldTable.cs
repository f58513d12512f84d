using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// One field of a <see cref="FieldTable"/>: this header, the field bytes, then the value bytes
/// (a hash's value, a sorted set's node pointer, nothing for a set member), in one native block.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct FieldNode
{
    public const int HeaderSize = 24;

    public FieldNode* Next;
    public uint Hash;
    public int FieldLength;
    public int ValueLength;
    private int _padding;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> FieldOf(FieldNode* node) => new((byte*)node + HeaderSize, node->FieldLength);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Span<byte> ValueOf(FieldNode* node) => new((byte*)node + HeaderSize + node->FieldLength, node->ValueLength);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static byte* ValuePointer(FieldNode* node) => (byte*)node + HeaderSize + node->FieldLength;
}

/// <summary>
/// A chained hash table of byte-string fields in tracked native memory: the storage of hashes,
/// sets and the member index of sorted sets. The table struct itself lives in a native block the
/// key's entry points to. <see cref="Bytes"/> is kept exact on every allocation and free, so
/// MEMORY USAGE reads it in O(1). Growth rehashes the whole table at once (doubling, so the cost
/// is amortised O(1) per insert); Redis rehashes incrementally, which only matters for tables
/// of millions of fields. Owned by one shard; not thread-safe.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct FieldTable
{
    private const long InitialSize = 4;

    private FieldNode** _buckets;
    private long _size;
    private long _count;
    private long _bytes;

    public readonly long Count => _count;

    /// <summary>Bytes held: this table's block, the bucket array and every node, as the allocator charges them.</summary>
    public readonly long Bytes => _bytes;

    public static FieldTable* Create()
    {
        var table = (FieldTable*)TrackedAllocator.Alloc((nuint)sizeof(FieldTable));
        *table = default;
        table->_bytes = TrackedAllocator.ChargedSize((byte*)table);
        return table;
    }

    /// <summary>Frees every node, the buckets and the table.</summary>
    public static void Destroy(FieldTable* table)
    {
        for (long i = 0; i < table->_size; i++)
        {
            FieldNode* node = table->_buckets[i];
            while (node != null)
            {
                FieldNode* next = node->Next;
                TrackedAllocator.Free((byte*)node);
                node = next;
            }
        }
        TrackedAllocator.Free((byte*)table->_buckets);
        TrackedAllocator.Free((byte*)table);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static uint HashOf(ReadOnlySpan<byte> field) => Engine.Keyspace.Hash(field);

    public FieldNode* Find(ReadOnlySpan<byte> field) => Find(field, HashOf(field));

    public readonly FieldNode* Find(ReadOnlySpan<byte> field, uint hash)
    {
        FieldNode** slot = SlotOf(field, hash);
        return slot == null ? null : *slot;
    }

    private readonly FieldNode** SlotOf(ReadOnlySpan<byte> field, uint hash)
    {
        if (_size == 0)
            return null;
        FieldNode** slot = &_buckets[hash & (_size - 1)];
        while (*slot != null)
        {
            FieldNode* node = *slot;
            if (node->Hash == hash && FieldNode.FieldOf(node).SequenceEqual(field))
                return slot;
            slot = &node->Next;
        }
        return null;
    }

    /// <summary>
    /// Sets <paramref name="field"/> to <paramref name="value"/>, reusing the node when the value
    /// fits. Returns true when the field was new.
    /// </summary>
    public bool Set(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value)
    {
        uint hash = HashOf(field);
        FieldNode** slot = SlotOf(field, hash);
        if (slot == null)
        {
            value.CopyTo(FieldNode.ValueOf(Add(field, hash, value.Length)));
            return true;
        }
        FieldNode* node = *slot;
        if (!Fits(node, value.Length))
        {
            FieldNode* fresh = NewNode(field, hash, value.Length);
            fresh->Next = node->Next;
            *slot = fresh;
            Release(node);
            node = fresh;
        }
        node->ValueLength = value.Length;
        value.CopyTo(FieldNode.ValueOf(node));
        return false;
    }

    /// <summary>Adds a field known to be absent with room for <paramref name="valueLength"/> value bytes, left for the caller to fill.</summary>
    public FieldNode* Add(ReadOnlySpan<byte> field, uint hash, int valueLength)
    {
        if (_count >= _size)
            Resize(_size == 0 ? InitialSize : _size * 2);
        FieldNode* node = NewNode(field, hash, valueLength);
        FieldNode** bucket = &_buckets[hash & (_size - 1)];
        node->Next = *bucket;
        *bucket = node;
        _count++;
        return node;
    }

    /// <summary>Removes a field; false when it was not there.</summary>
    public bool Remove(ReadOnlySpan<byte> field)
    {
        FieldNode** slot = SlotOf(field, HashOf(field));
        if (slot == null)
            return false;
        FieldNode* node = *slot;
        *slot = node->Next;
        Release(node);
        _count--;
        // Shrink when under 1/8 full (Redis shrinks under 10%), so a drained table gives memory back.
        if (_size > InitialSize && _count * 8 < _size)
            Resize(Math.Max(InitialSize, (long)System.Numerics.BitOperations.RoundUpToPowerOf2((ulong)Math.Max(_count, 1))));
        return true;
    }

    /// <summary>A random field, or null when empty (HRANDFIELD, SRANDMEMBER, SPOP). Picks a random non-empty bucket, then a node in its chain.</summary>
    public readonly FieldNode* Random(Random random)
    {
        if (_count == 0)
            return null;
        FieldNode* head;
        do
            head = _buckets[random.NextInt64(_size)];
        while (head == null);
        int length = 0;
        for (FieldNode* n = head; n != null; n = n->Next)
            length++;
        for (int skip = random.Next(length); skip > 0; skip--)
            head = head->Next;
        return head;
    }

    /// <summary>
    /// Redis's reverse-binary cursor scan (HSCAN, SSCAN, ZSCAN): visits the chains of one bucket
    /// and returns the next cursor, 0 when done. Every field present for the whole scan is seen
    /// at least once even if the table is resized in between.
    /// </summary>
    public readonly ulong Scan<TVisitor>(ulong cursor, ref TVisitor visitor) where TVisitor : struct, IFieldVisitor
    {
        if (_count == 0)
            return 0;
        ulong mask = (ulong)_size - 1;
        for (FieldNode* node = _buckets[cursor & mask]; node != null; node = node->Next)
            visitor.Visit(node);
        return Engine.ScanCursor.Advance(cursor, mask);
    }

    /// <summary>Iterates the fields; the table must not change meanwhile.</summary>
    public readonly Enumerator GetEnumerator() => new(_buckets, _size);

    public unsafe struct Enumerator(FieldNode** buckets, long size)
    {
        private long _bucket = -1;
        private FieldNode* _node;

        public readonly FieldNode* Current => _node;

        public bool MoveNext()
        {
            if (_node != null && _node->Next != null)
            {
                _node = _node->Next;
                return true;
            }
            while (++_bucket < size)
            {
                _node = buckets[_bucket];
                if (_node != null)
                    return true;
            }
            _node = null;
            return false;
        }
    }

    private FieldNode* NewNode(ReadOnlySpan<byte> field, uint hash, int valueLength)
    {
        long size = (long)FieldNode.HeaderSize + field.Length + valueLength;
        if (size > TrackedAllocator.MaxBlockBytes)
            throw new BlockTooLargeException(size);
        var node = (FieldNode*)TrackedAllocator.Alloc((nuint)size);
        node->Next = null;
        node->Hash = hash;
        node->FieldLength = field.Length;
        node->ValueLength = valueLength;
        field.CopyTo(new Span<byte>((byte*)node + FieldNode.HeaderSize, field.Length));
        _bytes += TrackedAllocator.ChargedSize((byte*)node);
        return node;
    }

    private void Release(FieldNode* node)
    {
        _bytes -= TrackedAllocator.ChargedSize((byte*)node);
        TrackedAllocator.Free((byte*)node);
    }

    /// <summary>True when the node can take a value of this length without wasting more than half its block.</summary>
    private static bool Fits(FieldNode* node, int valueLength)
    {
        nuint usable = TrackedAllocator.UsableSize((byte*)node);
        nuint needed = (nuint)((long)FieldNode.HeaderSize + node->FieldLength + valueLength);
        return needed <= usable && needed * 2 >= usable;
    }

    private void Resize(long size)
    {
        nuint bytes = (nuint)(size * sizeof(FieldNode*));
        var buckets = (FieldNode**)TrackedAllocator.Alloc(bytes);
        NativeMemory.Clear(buckets, bytes);
        long mask = size - 1;
        for (long i = 0; i < _size; i++)
        {
            FieldNode* node = _buckets[i];
            while (node != null)
            {
                FieldNode* next = node->Next;
                FieldNode** bucket = &buckets[node->Hash & mask];
                node->Next = *bucket;
                *bucket = node;
                node = next;
            }
        }
        if (_buckets != null)
        {
            _bytes -= TrackedAllocator.ChargedSize((byte*)_buckets);
            TrackedAllocator.Free((byte*)_buckets);
        }
        _buckets = buckets;
        _size = size;
        _bytes += TrackedAllocator.ChargedSize((byte*)buckets);
    }
}

/// <summary>Called once per field by <see cref="FieldTable.Scan{TVisitor}"/>; a struct so calls inline.</summary>
public unsafe interface IFieldVisitor
{
    void Visit(FieldNode* node);
}
