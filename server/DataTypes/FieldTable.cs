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
/// A chained hash table of byte-string fields in tracked native memory: the storage of big
/// hashes and sets and the member index of big sorted sets. The table struct itself lives in a
/// native block the key's entry points to. <see cref="Bytes"/> is kept exact on every allocation
/// and free, so MEMORY USAGE reads it in O(1). It grows and shrinks by incremental rehashing, as
/// Redis's dict does: a second bucket array is allocated and each
/// write moves a few buckets from the old array to the new, so no single command pays for moving
/// millions of fields. Reads never rehash, so a scan or an iteration of one table while another
/// is read stays valid; a table is not written while it is iterated. Owned by one shard; not
/// thread-safe.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct FieldTable
{
    private const long InitialSize = 4;
    // Each write moves up to 4 buckets (and skips up to 40 empty ones). Redis moves one, but a
    // shrink starts at 1/8 full and must be over before the removals that remain run out: at one
    // bucket a write the old array often outlived the last removal (and its memory with it).
    private const int BucketsPerStep = 4;
    private const int EmptyVisitsPerStep = 40;

    private FieldNode** _buckets;   // the table; during a rehash, the one being emptied
    private long _size;
    private FieldNode** _target;    // during a rehash, the table being filled; else null
    private long _targetSize;
    private long _rehashIndex;      // buckets of _buckets below it are already moved
    private long _count;
    private long _bytes;

    public readonly long Count => _count;

    /// <summary>Bytes held: this table's block, the bucket arrays and every node, as the allocator charges them.</summary>
    public readonly long Bytes => _bytes;

    /// <summary>True while fields move from the old bucket array to the new one.</summary>
    public readonly bool IsRehashing => _target != null;

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
        FreeChains(table->_buckets, table->_size);
        FreeChains(table->_target, table->_targetSize);
        TrackedAllocator.Free((byte*)table->_buckets);
        TrackedAllocator.Free((byte*)table->_target);
        TrackedAllocator.Free((byte*)table);
    }

    private static void FreeChains(FieldNode** buckets, long size)
    {
        for (long i = 0; i < size; i++)
        {
            FieldNode* node = buckets[i];
            while (node != null)
            {
                FieldNode* next = node->Next;
                TrackedAllocator.Free((byte*)node);
                node = next;
            }
        }
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
        FieldNode** slot = SlotIn(_buckets, _size, field, hash);
        if (slot == null && _target != null)
            slot = SlotIn(_target, _targetSize, field, hash);
        return slot;
    }

    private static FieldNode** SlotIn(FieldNode** buckets, long size, ReadOnlySpan<byte> field, uint hash)
    {
        FieldNode** slot = &buckets[hash & (size - 1)];
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
        if (_target != null)
            RehashStep();
        else if (_size == 0)
            _buckets = NewBuckets(_size = InitialSize);
        else if (_count >= _size)
            StartRehash(_size * 2);
        FieldNode* node = NewNode(field, hash, valueLength);
        // During a rehash new fields go to the new table, so the old one only empties.
        FieldNode** bucket = _target != null ? &_target[hash & (_targetSize - 1)] : &_buckets[hash & (_size - 1)];
        node->Next = *bucket;
        *bucket = node;
        _count++;
        return node;
    }

    /// <summary>Removes a field; false when it was not there.</summary>
    public bool Remove(ReadOnlySpan<byte> field)
    {
        if (_target != null)
            RehashStep();
        FieldNode** slot = SlotOf(field, HashOf(field));
        if (slot == null)
            return false;
        FieldNode* node = *slot;
        *slot = node->Next;
        Release(node);
        _count--;
        // Shrink when under 1/8 full (Redis shrinks under 10%), so a drained table gives memory back.
        if (_target == null && _size > InitialSize && _count * 8 < _size)
            StartRehash(Math.Max(InitialSize, (long)System.Numerics.BitOperations.RoundUpToPowerOf2((ulong)Math.Max(_count, 1))));
        return true;
    }

    /// <summary>A random field, or null when empty (HRANDFIELD, SRANDMEMBER, SPOP). Picks a random non-empty bucket, then a node in its chain.</summary>
    public readonly FieldNode* Random(Random random)
    {
        if (_count == 0)
            return null;
        FieldNode* head;
        if (_target == null)
        {
            do
                head = _buckets[random.NextInt64(_size)];
            while (head == null);
        }
        else
        {
            // Buckets of the old table below the rehash index are empty: draw from the rest of it and the new one.
            long span = _size - _rehashIndex + _targetSize;
            do
            {
                long pick = _rehashIndex + random.NextInt64(span);
                head = pick < _size ? _buckets[pick] : _target[pick - _size];
            }
            while (head == null);
        }
        int length = 0;
        for (FieldNode* n = head; n != null; n = n->Next)
            length++;
        for (int skip = random.Next(length); skip > 0; skip--)
            head = head->Next;
        return head;
    }

    /// <summary>
    /// Redis's reverse-binary cursor scan (HSCAN, SSCAN, ZSCAN): visits the chains of one bucket
    /// (during a rehash, that bucket of the smaller table and every bucket of the larger one it
    /// expands to) and returns the next cursor, 0 when done. Every field present for the whole
    /// scan is seen at least once even if the table is resized in between.
    /// </summary>
    public readonly ulong Scan<TVisitor>(ulong cursor, ref TVisitor visitor) where TVisitor : struct, IFieldVisitor
    {
        if (_count == 0)
            return 0;
        if (_target == null)
        {
            ulong mask = (ulong)_size - 1;
            VisitChain(_buckets[cursor & mask], ref visitor);
            return Engine.ScanCursor.Advance(cursor, mask);
        }
        bool oldIsSmaller = _size <= _targetSize;
        FieldNode** small = oldIsSmaller ? _buckets : _target, large = oldIsSmaller ? _target : _buckets;
        ulong smallMask = (ulong)(oldIsSmaller ? _size : _targetSize) - 1, largeMask = (ulong)(oldIsSmaller ? _targetSize : _size) - 1;
        VisitChain(small[cursor & smallMask], ref visitor);
        // Then every bucket of the larger table that the smaller one's bucket expands to.
        do
        {
            VisitChain(large[cursor & largeMask], ref visitor);
            cursor = Engine.ScanCursor.Advance(cursor, largeMask);
        }
        while ((cursor & (smallMask ^ largeMask)) != 0);
        return cursor;
    }

    private static void VisitChain<TVisitor>(FieldNode* node, ref TVisitor visitor) where TVisitor : struct, IFieldVisitor
    {
        for (; node != null; node = node->Next)
            visitor.Visit(node);
    }

    /// <summary>Iterates the fields (both bucket arrays during a rehash); the table must not change meanwhile.</summary>
    public readonly Enumerator GetEnumerator() => new(_buckets, _size, _target, _targetSize);

    public unsafe struct Enumerator(FieldNode** buckets, long size, FieldNode** target, long targetSize)
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
            while (++_bucket < size + targetSize)
            {
                _node = _bucket < size ? buckets[_bucket] : target[_bucket - size];
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

    private FieldNode** NewBuckets(long size)
    {
        // Only the allocation and clearing of the new array fall on the write that starts a
        // rehash; the fields move a few buckets per write after it.
        var buckets = (FieldNode**)TrackedAllocator.AllocZeroed((nuint)(size * sizeof(FieldNode*)));
        _bytes += TrackedAllocator.ChargedSize((byte*)buckets);
        return buckets;
    }

    private void StartRehash(long size)
    {
        _target = NewBuckets(size);
        _targetSize = size;
        _rehashIndex = 0;
        RehashStep();
    }

    /// <summary>
    /// Moves up to <see cref="BucketsPerStep"/> non-empty buckets (passing no more than
    /// <see cref="EmptyVisitsPerStep"/> empty ones) from the old array to the new; frees the old
    /// one when it is empty.
    /// </summary>
    private void RehashStep()
    {
        long mask = _targetSize - 1;
        int emptyVisits = 0;
        for (int moved = 0; moved < BucketsPerStep && _rehashIndex < _size; _rehashIndex++)
        {
            FieldNode* node = _buckets[_rehashIndex];
            if (node == null)
            {
                if (++emptyVisits > EmptyVisitsPerStep)
                    break;
                continue;
            }
            while (node != null)
            {
                FieldNode* next = node->Next;
                FieldNode** bucket = &_target[node->Hash & mask];
                node->Next = *bucket;
                *bucket = node;
                node = next;
            }
            _buckets[_rehashIndex] = null;
            moved++;
        }
        if (_rehashIndex < _size)
            return;
        _bytes -= TrackedAllocator.ChargedSize((byte*)_buckets);
        TrackedAllocator.Free((byte*)_buckets);
        _buckets = _target;
        _size = _targetSize;
        _target = null;
        _targetSize = 0;
        _rehashIndex = 0;
    }
}

/// <summary>Called once per field by <see cref="FieldTable.Scan{TVisitor}"/>; a struct so calls inline.</summary>
public unsafe interface IFieldVisitor
{
    void Visit(FieldNode* node);
}
