using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// A list as Redis 7.0 keeps it: a quicklist, a chain of <see cref="ListNode"/>s that are
/// listpacks (<see cref="NativeListpack"/>, Redis's encoding: integers stored as integers) cut
/// where Redis cuts them (<see cref="ListNodeLimits"/>, the list's fill taken from
/// list-max-listpack-size when it was created), so RDB files and DUMP payloads are the nodes
/// themselves. The node records sit in a ring (one record inline in this header while the list
/// has a single node, the common small list), so pushes and pops at both ends stay O(1) and an
/// index finds its node by summing per-node counts from the nearer end. An element read from
/// the list (<see cref="ListpackElement"/>) is valid until the list next changes; an integer
/// element's text goes to the caller's scratch (<see cref="ListpackElement.AsBytes"/>).
/// <see cref="Bytes"/> is what the allocator charged, counted on demand. Owned by one shard.
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = 32)]
public unsafe partial struct ListValue
{
    private const int FirstRingCapacity = 4;
    private const int EmptyListpackBytes = NativeListpack.HeaderSize + 1;
    private const ushort UnknownCount = ushort.MaxValue;

    // While _capacity is 0 the list has at most one node, held right here; otherwise the same
    // bytes point at a ring of _capacity records, the first at _ringHead.
    [FieldOffset(0)] private ListNode _only;
    [FieldOffset(0)] private ListNode* _ring;
    [FieldOffset(8)] private int _ringHead;
    [FieldOffset(16)] private int _capacity;
    [FieldOffset(20)] private int _nodeCount;
    [FieldOffset(24)] private int _count;
    [FieldOffset(28)] private short _fill;
    [FieldOffset(30)] private ushort _compressDepth;

    public readonly int Count => _count;
    public readonly int NodeCount => _nodeCount;

    /// <summary>The node limit this list was created with (list-max-listpack-size, clamped as Redis clamps it).</summary>
    public readonly int Fill => _fill;

    /// <summary>list-compress-depth when the list was created (recorded; nodes are not compressed here).</summary>
    public readonly int CompressDepth => _compressDepth;

    public static ListValue* Create(int fill = -2, int compressDepth = 0)
    {
        var list = (ListValue*)TrackedAllocator.Alloc((nuint)sizeof(ListValue));
        *list = default;
        list->_fill = (short)ListNodeLimits.ClampFill(fill);
        list->_compressDepth = (ushort)ListNodeLimits.ClampCompressDepth(compressDepth);
        return list;
    }

    public static void Destroy(ListValue* list)
    {
        for (int i = 0; i < list->_nodeCount; i++)
            TrackedAllocator.Free(list->NodeAt(i)->Block);
        if (list->_capacity > 0)
            TrackedAllocator.Free((byte*)list->_ring);
        TrackedAllocator.Free((byte*)list);
    }

    /// <summary>Sets the node limit and compress depth of a list that has no element yet (Redis sets them when it creates the list).</summary>
    public void Configure(int fill, int compressDepth)
    {
        _fill = (short)ListNodeLimits.ClampFill(fill);
        _compressDepth = (ushort)ListNodeLimits.ClampCompressDepth(compressDepth);
    }

    /// <summary>Bytes held: this header, the node ring and every node's block, as the allocator charged them.</summary>
    public readonly long Bytes
    {
        get
        {
            long total = TrackedAllocator.ChargedSize((byte*)Unsafe.AsPointer(ref Unsafe.AsRef(in this)));
            if (_capacity > 0)
                total += TrackedAllocator.ChargedSize((byte*)_ring);
            for (int i = 0; i < _nodeCount; i++)
                total += TrackedAllocator.ChargedSize(NodeAt(i)->Block);
            return total;
        }
    }

    /// <summary>The sum of the nodes' sizes (DEBUG OBJECT's ql_uncompressed_size).</summary>
    public readonly long NodeBytes
    {
        get
        {
            long total = 0;
            for (int i = 0; i < _nodeCount; i++)
                total += NodeAt(i)->Size;
            return total;
        }
    }

    /// <summary>Node <paramref name="index"/> (0 = head).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly ListNode* NodeAt(int index)
        => _capacity == 0
            ? (ListNode*)Unsafe.AsPointer(ref Unsafe.AsRef(in _only))
            : _ring + ((_ringHead + index) & (_capacity - 1));

    // ---- reading ----------------------------------------------------------------------------

    public readonly ListpackElement Head => First(NodeAt(0));
    public readonly ListpackElement Tail => Last(NodeAt(_nodeCount - 1));

    /// <summary>Element <paramref name="index"/> (0 = head, below <see cref="Count"/>).</summary>
    public readonly ListpackElement Get(long index)
    {
        int position = Locate(index, out int node);
        ListNode* n = NodeAt(node);
        return n->IsPlain ? PlainElement(n) : NativeListpack.Read(n->Block, OffsetOf(n, position), out _);
    }

    /// <summary>An iterator from element <paramref name="index"/> towards the tail (or the head when not <paramref name="forward"/>).</summary>
    public ListIterator From(long index, bool forward)
    {
        int position = Locate(index, out int node);
        ListNode* n = NodeAt(node);
        int offset = n->IsPlain ? 0 : OffsetOf(n, position);
        return new ListIterator((ListValue*)Unsafe.AsPointer(ref this), node, offset, forward);
    }

    /// <summary>The node holding element <paramref name="index"/> and the element's position in it, counted from the nearer end.</summary>
    private readonly int Locate(long index, out int node)
    {
        if (index < _count - index)
        {
            long accumulated = 0;
            for (int i = 0; ; i++)
            {
                int count = NodeAt(i)->Count;
                if (index < accumulated + count)
                {
                    node = i;
                    return (int)(index - accumulated);
                }
                accumulated += count;
            }
        }
        long fromTail = _count - 1 - index;
        long behind = 0;
        for (int i = _nodeCount - 1; ; i--)
        {
            int count = NodeAt(i)->Count;
            if (fromTail < behind + count)
            {
                node = i;
                return count - 1 - (int)(fromTail - behind);
            }
            behind += count;
        }
    }

    /// <summary>The offset of element <paramref name="position"/> in a packed node, walked from its nearer end.</summary>
    private static int OffsetOf(ListNode* node, int position)
        => NativeListpack.Seek(node->Block, position <= node->Count / 2 ? position : position - node->Count);

    private static ListpackElement First(ListNode* node)
        => node->IsPlain ? PlainElement(node) : NativeListpack.Read(node->Block, NativeListpack.First, out _);

    private static ListpackElement Last(ListNode* node)
        => node->IsPlain ? PlainElement(node) : NativeListpack.Read(node->Block, NativeListpack.Last(node->Block), out _);

    internal static ListpackElement PlainElement(ListNode* node) => new(node->Block, (int)node->Size);

    // ---- pushes and pops --------------------------------------------------------------------

    /// <summary>quicklistPushHead: into the head node while it allows, else into a new head node.</summary>
    public void PushHead(ReadOnlySpan<byte> value)
    {
        if (value.Length >= ListNodeLimits.PackedThreshold)
        {
            InsertPlainNode(0, value);
            return;
        }
        ListNode* head = _nodeCount == 0 ? null : NodeAt(0);
        if (ListNodeLimits.AllowInsert(head, _fill, value.Length))
            InsertInto(head, NativeListpack.First, value);
        else
            *InsertNodeAt(0) = NewNode(value);
        _count++;
    }

    /// <summary>quicklistPushTail: into the tail node while it allows, else into a new tail node.</summary>
    public void PushTail(ReadOnlySpan<byte> value)
    {
        if (value.Length >= ListNodeLimits.PackedThreshold)
        {
            InsertPlainNode(_nodeCount, value);
            return;
        }
        ListNode* tail = _nodeCount == 0 ? null : NodeAt(_nodeCount - 1);
        if (ListNodeLimits.AllowInsert(tail, _fill, value.Length))
            InsertInto(tail, (int)tail->Size - 1, value);
        else
            *InsertNodeAt(_nodeCount) = NewNode(value);
        _count++;
    }

    /// <summary>Drops the head element (read it first with <see cref="Head"/>).</summary>
    public void RemoveHead() => RemoveOne(0, NativeListpack.First);

    /// <summary>Drops the tail element (read it first with <see cref="Tail"/>).</summary>
    public void RemoveTail()
    {
        ListNode* tail = NodeAt(_nodeCount - 1);
        RemoveOne(_nodeCount - 1, tail->IsPlain ? 0 : NativeListpack.Last(tail->Block));
    }

    /// <summary>quicklistDelIndex: removes the element at <paramref name="offset"/> of node <paramref name="node"/>, and the node once empty (no merging, as Redis).</summary>
    private void RemoveOne(int node, int offset)
    {
        ListNode* n = NodeAt(node);
        _count--;
        if (n->IsPlain || n->Count == 1)
        {
            RemoveNodeAt(node);
            return;
        }
        n->Block = NativeListpack.Delete(n->Block, offset, 1);
        n->SetCount(n->Count - 1);
        n->Size = (uint)NativeListpack.Bytes(n->Block);
    }

    // ---- node building blocks ---------------------------------------------------------------

    /// <summary>A packed node holding <paramref name="value"/> alone, its listpack sized exactly.</summary>
    private static ListNode NewNode(ReadOnlySpan<byte> value)
    {
        byte* lp = NativeListpack.Create(EmptyListpackBytes + NativeListpack.StringSize(value));
        lp = NativeListpack.InsertString(lp, NativeListpack.First, value);
        return ListNode.Packed(lp, 1);
    }

    /// <summary>Inserts <paramref name="value"/> into a packed node before <paramref name="offset"/> (its terminator appends).</summary>
    private static void InsertInto(ListNode* node, int offset, ReadOnlySpan<byte> value)
    {
        node->Block = NativeListpack.InsertString(node->Block, offset, value);
        node->SetCount(node->Count + 1);
        node->Size = (uint)NativeListpack.Bytes(node->Block);
    }

    private void InsertPlainNode(int at, ReadOnlySpan<byte> value)
    {
        byte* block = TrackedAllocator.Alloc((nuint)Math.Max(value.Length, 1));
        value.CopyTo(new Span<byte>(block, value.Length));
        *InsertNodeAt(at) = ListNode.Plain(block, value.Length);
        _count++;
    }

    /// <summary>Appends a node holding a copy of <paramref name="listpack"/> (RDB quicklist nodes, already validated); empty ones are skipped, as Redis skips them.</summary>
    public void AppendListpack(ReadOnlySpan<byte> listpack)
    {
        byte* lp = NativeListpack.CopyOf(listpack);
        int count = NativeListpack.Count(lp);
        if (count == 0)
        {
            NativeListpack.Free(lp);
            return;
        }
        *InsertNodeAt(_nodeCount) = ListNode.Packed(lp, count);
        _count += count;
    }

    /// <summary>Appends a plain node holding <paramref name="element"/> (an RDB PLAIN node: kept plain whatever its size, as Redis keeps it).</summary>
    public void AppendPlain(ReadOnlySpan<byte> element) => InsertPlainNode(_nodeCount, element);

    /// <summary>An independent copy with the same nodes (COPY; Redis's quicklistDup).</summary>
    public ListValue* Copy()
    {
        ListValue* copy = Create(_fill, _compressDepth);
        for (int i = 0; i < _nodeCount; i++)
        {
            ListNode* node = NodeAt(i);
            int size = (int)node->Size;
            byte* block = TrackedAllocator.Alloc((nuint)Math.Max(size, 1));
            Buffer.MemoryCopy(node->Block, block, size, size);
            ListNode* added = copy->InsertNodeAt(i);
            *added = *node;
            added->Block = block;
        }
        copy->_count = _count;
        return copy;
    }

    // ---- the node ring ----------------------------------------------------------------------

    /// <summary>Makes room for a node record at position <paramref name="at"/> (moving the shorter side) and returns it.</summary>
    private ListNode* InsertNodeAt(int at)
    {
        if (_capacity == 0)
        {
            if (_nodeCount == 0)
            {
                _nodeCount = 1;
                return NodeAt(0);
            }
            ListNode only = _only;
            var ring = (ListNode*)TrackedAllocator.Alloc((nuint)(FirstRingCapacity * sizeof(ListNode)));
            ring[0] = only;
            _ring = ring;
            _ringHead = 0;
            _capacity = FirstRingCapacity;
        }
        else if (_nodeCount == _capacity)
        {
            Resize(_capacity * 2);
        }
        int mask = _capacity - 1;
        if (at < _nodeCount - at)
        {
            _ringHead = (_ringHead - 1) & mask;
            for (int i = 0; i < at; i++)
                _ring[(_ringHead + i) & mask] = _ring[(_ringHead + i + 1) & mask];
        }
        else
        {
            for (int i = _nodeCount; i > at; i--)
                _ring[(_ringHead + i) & mask] = _ring[(_ringHead + i - 1) & mask];
        }
        _nodeCount++;
        return NodeAt(at);
    }

    /// <summary>Frees node <paramref name="at"/> (its block, and the elements it counted) and closes the gap.</summary>
    private void RemoveNodeAt(int at)
    {
        TrackedAllocator.Free(NodeAt(at)->Block);
        DropNodeRecord(at);
    }

    /// <summary>Removes node record <paramref name="at"/> without freeing its block (a merge moved it).</summary>
    private void DropNodeRecord(int at)
    {
        if (_capacity == 0)
        {
            _only = default;
            _nodeCount = 0;
            return;
        }
        int mask = _capacity - 1;
        if (at < _nodeCount - 1 - at)
        {
            for (int i = at; i > 0; i--)
                _ring[(_ringHead + i) & mask] = _ring[(_ringHead + i - 1) & mask];
            _ringHead = (_ringHead + 1) & mask;
        }
        else
        {
            for (int i = at; i < _nodeCount - 1; i++)
                _ring[(_ringHead + i) & mask] = _ring[(_ringHead + i + 1) & mask];
        }
        _nodeCount--;
        if (_nodeCount == 1)
        {
            // Back to the inline record: a list that shrank to one node costs no ring.
            ListNode only = *NodeAt(0);
            TrackedAllocator.Free((byte*)_ring);
            _capacity = 0;
            _ringHead = 0;
            _only = only;
        }
        else if (_capacity > FirstRingCapacity * 4 && _nodeCount < _capacity / 4)
        {
            Resize(_capacity / 2);
        }
    }

    /// <summary>Moves the node records, in order, to a fresh ring of <paramref name="capacity"/> starting at 0.</summary>
    private void Resize(int capacity)
    {
        var ring = (ListNode*)TrackedAllocator.Alloc((nuint)((long)capacity * sizeof(ListNode)));
        for (int i = 0; i < _nodeCount; i++)
            ring[i] = *NodeAt(i);
        TrackedAllocator.Free((byte*)_ring);
        _ring = ring;
        _ringHead = 0;
        _capacity = capacity;
    }

    /// <summary>Writes a listpack's header: its total bytes and element count (65,535 once it overflows, "unknown", as Redis writes it).</summary>
    private static void SetHeader(byte* lp, int total, int count)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(new Span<byte>(lp, 4), (uint)total);
        BinaryPrimitives.WriteUInt16LittleEndian(new Span<byte>(lp + 4, 2), count >= UnknownCount ? UnknownCount : (ushort)count);
    }

    /// <summary>
    /// Compares elements with one text the way Redis's lpCompare does: bytes against a string
    /// element, the value against an integer element (only canonical integer text can match one).
    /// </summary>
    public readonly ref struct Matcher
    {
        private readonly ReadOnlySpan<byte> _text;
        private readonly long _integer;
        private readonly bool _isInteger;

        public Matcher(ReadOnlySpan<byte> text)
        {
            _text = text;
            _isInteger = NumberFormat.TryParseInt64(text, out _integer);
        }

        public bool Matches(in ListpackElement element)
            => element.IsInteger ? _isInteger && element.Integer == _integer : element.Span.SequenceEqual(_text);
    }
}
