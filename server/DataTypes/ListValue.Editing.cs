using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// Edits inside a list, each the way Redis 7.0's quicklist makes it, so node boundaries stay
/// Redis's: LSET replaces in place (quicklistReplaceEntry), LINSERT fills the node, its
/// neighbour or a new node, or splits the node and merges around it (_quicklistInsert,
/// _quicklistMergeNodes), LREM and LTRIM delete and drop emptied nodes without merging
/// (quicklistDelIndex, quicklistDelRange).
/// </summary>
public unsafe partial struct ListValue
{
    /// <summary>LSET: replaces element <paramref name="index"/> (below <see cref="Count"/>).</summary>
    public void Set(long index, ReadOnlySpan<byte> value)
    {
        int position = Locate(index, out int node);
        ListNode* n = NodeAt(node);
        bool large = value.Length >= ListNodeLimits.PackedThreshold;
        if (!n->IsPlain && !large)
        {
            n->Block = NativeListpack.ReplaceString(n->Block, OffsetOf(n, position), value);
            n->Size = (uint)NativeListpack.Bytes(n->Block);
            return;
        }
        if (n->IsPlain && large)
        {
            byte* block = TrackedAllocator.Alloc((nuint)value.Length);
            value.CopyTo(new Span<byte>(block, value.Length));
            TrackedAllocator.Free(n->Block);
            n->Block = block;
            n->Size = (uint)value.Length;
            return;
        }
        // A plain node taking a small element, or a packed one taking a large element: the new
        // element goes in after the old one, then the old one goes (the node keeps its index:
        // an insertion after it never moves it).
        InsertAt(node, position, value, after: true);
        n = NodeAt(node);
        if (n->IsPlain || n->Count == 1)
        {
            _count--;
            RemoveNodeAt(node);
        }
        else
        {
            // After the insertion the replaced element is the node's last (a split cut there).
            RemoveOne(node, NativeListpack.Last(n->Block));
        }
    }

    /// <summary>LINSERT: inserts <paramref name="value"/> before or after the first element equal to <paramref name="pivot"/>; false when there is none.</summary>
    public bool InsertBeside(ReadOnlySpan<byte> pivot, ReadOnlySpan<byte> value, bool after)
    {
        var matcher = new Matcher(pivot);
        for (int node = 0; node < _nodeCount; node++)
        {
            ListNode* n = NodeAt(node);
            if (n->IsPlain)
            {
                if (matcher.Matches(PlainElement(n)))
                {
                    InsertAt(node, 0, value, after);
                    return true;
                }
                continue;
            }
            int position = 0;
            for (int offset = NativeListpack.First; !NativeListpack.IsEnd(n->Block, offset); position++)
            {
                var element = NativeListpack.Read(n->Block, offset, out int next);
                if (matcher.Matches(element))
                {
                    InsertAt(node, position, value, after);
                    return true;
                }
                offset = next;
            }
        }
        return false;
    }

    /// <summary>_quicklistInsert: <paramref name="value"/> next to element <paramref name="position"/> of node <paramref name="node"/>.</summary>
    private void InsertAt(int node, int position, ReadOnlySpan<byte> value, bool after)
    {
        ListNode* n = NodeAt(node);
        int length = value.Length;
        bool full = !ListNodeLimits.AllowInsert(n, _fill, length);
        bool atTail = after && position == n->Count - 1;
        bool atHead = !after && position == 0;
        bool nextHasRoom = atTail && node + 1 < _nodeCount && ListNodeLimits.AllowInsert(NodeAt(node + 1), _fill, length);
        bool previousHasRoom = atHead && node > 0 && ListNodeLimits.AllowInsert(NodeAt(node - 1), _fill, length);

        if (length >= ListNodeLimits.PackedThreshold)
        {
            if (n->IsPlain || atTail || atHead)
            {
                InsertPlainNode(after ? node + 1 : node, value);
                return;
            }
            // After: [node][plain][split part]; before: [split part][plain][node]. Either way
            // the plain node goes right after index `node` once the split is in place.
            Split(node, position, after);
            InsertPlainNode(node + 1, value);
            return;
        }

        if (!full)
        {
            int offset = OffsetOf(n, position);
            InsertInto(n, after ? NativeListpack.Skip(n->Block, offset) : offset, value);
        }
        else if (atTail && nextHasRoom)
        {
            InsertInto(NodeAt(node + 1), NativeListpack.First, value);
        }
        else if (atHead && previousHasRoom)
        {
            ListNode* previous = NodeAt(node - 1);
            InsertInto(previous, (int)previous->Size - 1, value);
        }
        else if (atTail || atHead)
        {
            *InsertNodeAt(after ? node + 1 : node) = NewNode(value);
        }
        else
        {
            int part = Split(node, position, after);
            ListNode* fresh = NodeAt(part);
            InsertInto(fresh, after ? NativeListpack.First : (int)fresh->Size - 1, value);
            MergeAround(after ? node : node + 1);
        }
        _count++;
    }

    /// <summary>
    /// _quicklistSplitNode: after, node <paramref name="node"/> keeps elements [0, position] and a
    /// new node after it takes the rest; before, the node keeps [position, end] and a new node
    /// before it takes [0, position). Returns the new node's index.
    /// </summary>
    private int Split(int node, int position, bool after)
    {
        ListNode* n = NodeAt(node);
        byte* lp = n->Block;
        int count = n->Count;
        int cut = after ? position + 1 : position;   // first element of the second part
        int cutOffset = NativeListpack.Seek(lp, cut);
        if (cutOffset < 0)
            cutOffset = (int)n->Size - 1;
        int firstBytes = cutOffset - NativeListpack.First;
        int secondBytes = (int)n->Size - 1 - cutOffset;

        // The part that moves to the new node is copied out; the node deletes it from itself.
        bool newTakesSecond = after;
        int movedBytes = newTakesSecond ? secondBytes : firstBytes;
        int movedCount = newTakesSecond ? count - cut : cut;
        byte* moved = NativeListpack.Create(EmptyListpackBytes + movedBytes);
        Buffer.MemoryCopy(lp + (newTakesSecond ? cutOffset : NativeListpack.First), moved + NativeListpack.First, movedBytes, movedBytes);
        moved[NativeListpack.First + movedBytes] = 0xFF;
        SetHeader(moved, EmptyListpackBytes + movedBytes, movedCount);

        lp = newTakesSecond
            ? NativeListpack.Delete(lp, cutOffset, count - cut)
            : NativeListpack.Delete(lp, NativeListpack.First, cut);
        n->Block = lp;
        n->SetCount(count - movedCount);
        n->Size = (uint)NativeListpack.Bytes(lp);

        int at = after ? node + 1 : node;
        *InsertNodeAt(at) = ListNode.Packed(moved, movedCount);
        return at;
    }

    /// <summary>_quicklistMergeNodes: tries (prev-prev, prev), (next, next-next), (prev, center), then (center, next).</summary>
    private void MergeAround(int center)
    {
        if (center >= 2 && ListNodeLimits.AllowMerge(NodeAt(center - 2), NodeAt(center - 1), _fill))
        {
            Merge(center - 2);
            center--;
        }
        if (center + 2 < _nodeCount && ListNodeLimits.AllowMerge(NodeAt(center + 1), NodeAt(center + 2), _fill))
            Merge(center + 1);
        int target = center;
        if (center >= 1 && ListNodeLimits.AllowMerge(NodeAt(center - 1), NodeAt(center), _fill))
        {
            Merge(center - 1);
            target = center - 1;
        }
        if (target + 1 < _nodeCount && ListNodeLimits.AllowMerge(NodeAt(target), NodeAt(target + 1), _fill))
            Merge(target);
    }

    /// <summary>Joins node <paramref name="left"/> and the node after it into one listpack at <paramref name="left"/> (lpMerge's result).</summary>
    private void Merge(int left)
    {
        ListNode* a = NodeAt(left);
        ListNode* b = NodeAt(left + 1);
        int aElements = (int)a->Size - EmptyListpackBytes;
        int bElements = (int)b->Size - EmptyListpackBytes;
        int total = EmptyListpackBytes + aElements + bElements;
        int count = a->Count + b->Count;
        byte* lp = a->Block;
        if ((nuint)total > TrackedAllocator.UsableSize(lp))
            lp = TrackedAllocator.Realloc(lp, (nuint)total);
        Buffer.MemoryCopy(b->Block + NativeListpack.First, lp + NativeListpack.First + aElements, bElements, bElements);
        lp[total - 1] = 0xFF;
        SetHeader(lp, total, count);
        TrackedAllocator.Free(b->Block);
        a->Block = lp;
        a->SetCount(count);
        a->Size = (uint)total;
        DropNodeRecord(left + 1);
    }

    /// <summary>
    /// LREM: removes elements equal to <paramref name="value"/>, the first <paramref name="limit"/>
    /// from the head when positive, from the tail when negative, all when 0. Returns how many.
    /// </summary>
    public int RemoveMatching(ReadOnlySpan<byte> value, long limit)
    {
        var matcher = new Matcher(value);
        long wanted = limit == 0 ? long.MaxValue : Math.Abs(limit);
        int removed = 0;
        if (limit >= 0)
        {
            for (int node = 0; node < _nodeCount && removed < wanted;)
            {
                ListNode* n = NodeAt(node);
                if (n->IsPlain)
                {
                    if (matcher.Matches(PlainElement(n)))
                    {
                        RemoveOne(node, 0);
                        removed++;
                        continue;
                    }
                    node++;
                    continue;
                }
                int offset = NativeListpack.First;
                bool nodeGone = false;
                while (removed < wanted && !NativeListpack.IsEnd(n->Block, offset))
                {
                    var element = NativeListpack.Read(n->Block, offset, out int next);
                    if (!matcher.Matches(element))
                    {
                        offset = next;
                        continue;
                    }
                    removed++;
                    if (n->Count == 1)
                    {
                        RemoveOne(node, offset);
                        nodeGone = true;
                        break;
                    }
                    RemoveOne(node, offset); // the next element now starts at the same offset
                }
                if (!nodeGone)
                    node++;
            }
        }
        else
        {
            for (int node = _nodeCount - 1; node >= 0 && removed < wanted; node--)
            {
                ListNode* n = NodeAt(node);
                if (n->IsPlain)
                {
                    if (matcher.Matches(PlainElement(n)))
                    {
                        RemoveOne(node, 0);
                        removed++;
                    }
                    continue;
                }
                int offset = NativeListpack.Last(n->Block);
                while (removed < wanted)
                {
                    var element = NativeListpack.Read(n->Block, offset, out _);
                    bool first = offset == NativeListpack.First;
                    int previous = first ? 0 : NativeListpack.Previous(n->Block, offset);
                    if (matcher.Matches(element))
                    {
                        removed++;
                        bool last = n->Count == 1;
                        RemoveOne(node, offset); // elements before it keep their offsets
                        if (last)
                            break;
                    }
                    if (first)
                        break;
                    offset = previous;
                }
            }
        }
        return removed;
    }

    /// <summary>LTRIM: keeps only elements <paramref name="start"/>..<paramref name="stop"/> (inclusive, already clamped); an empty range (start &gt; stop) empties the list.</summary>
    public void Trim(long start, long stop)
    {
        if (start > stop)
        {
            DeleteRange(0, _count);
            return;
        }
        long fromTail = _count - 1 - stop;
        DeleteRange(0, start);
        DeleteRange(_count - fromTail, fromTail);
    }

    /// <summary>quicklistDelRange: removes <paramref name="length"/> elements from <paramref name="start"/>, node by node, dropping emptied nodes.</summary>
    public void DeleteRange(long start, long length)
    {
        length = Math.Min(length, _count - start); // as quicklistDelRange limits it to the list
        if (length <= 0 || start < 0)
            return;
        int position = Locate(start, out int node);
        long left = length;
        while (left > 0)
        {
            ListNode* n = NodeAt(node);
            int count = n->Count;
            if (position == 0 && left >= count)
            {
                _count -= count;
                RemoveNodeAt(node); // the next node moves to this index
                left -= count;
                continue;
            }
            int delete = (int)Math.Min(left, count - position);
            n->Block = NativeListpack.Delete(n->Block, NativeListpack.Seek(n->Block, position), delete);
            n->SetCount(count - delete);
            n->Size = (uint)NativeListpack.Bytes(n->Block);
            _count -= delete;
            left -= delete;
            node++;
            position = 0;
        }
    }
}
