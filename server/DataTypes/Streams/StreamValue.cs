using System.Runtime.InteropServices;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.DataTypes.Streams;

/// <summary>
/// A stream: entries in nodes that are Redis's own stream listpacks (<see cref="StreamNode"/>),
/// ordered by their first ID in one array instead of Redis's radix tree (nodes are found by binary
/// search; appends go to the last node, trimming removes from the front in O(1)), plus the stream's
/// counters (length, last ID, entries added, largest deleted ID) and its consumer groups. All in
/// tracked native memory; <see cref="Bytes"/> is what MEMORY USAGE reports.
///
/// Node layout, as Redis writes it: a master entry [live count, deleted count, field count,
/// fields..., 0], then per entry [flags, ms delta, seq delta, (field count, field, value)... or
/// values only when its fields equal the master's, element count]. Deleted entries stay, flagged,
/// until their node empties.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct StreamValue
{
    private StreamNode* _nodes;
    private int _head;
    private int _nodeCount;
    private int _capacity;
    private long _nodeBytes;
    private ConsumerGroups* _groups;

    /// <summary>Live entries.</summary>
    public long Length;
    public StreamId LastId;
    /// <summary>The first live entry's ID (0-0 when empty), as Redis 7 keeps it.</summary>
    public StreamId FirstId;
    /// <summary>The largest ID XDEL removed (XINFO max-deleted-entry-id).</summary>
    public StreamId MaxDeletedId;
    /// <summary>Entries ever added (XINFO entries-added), for consumer group lag.</summary>
    public long EntriesAdded;

    public readonly int NodeCount => _nodeCount;
    public readonly StreamNode* Node(int index) => _nodes + _head + index;

    /// <summary>The consumer groups, or null when the stream has none yet.</summary>
    public readonly ConsumerGroups* Groups => _groups;

    public ConsumerGroups* GroupsOrCreate()
    {
        if (_groups == null)
            _groups = ConsumerGroups.Create();
        return _groups;
    }

    /// <summary>Bytes charged for the stream: this struct, the node array, every node, the groups.</summary>
    public readonly long Bytes => _ownBytes + _nodeBytes + (_groups == null ? 0 : _groups->Bytes);
    private long _ownBytes;

    public static StreamValue* Create()
    {
        var stream = (StreamValue*)TrackedAllocator.Alloc((nuint)sizeof(StreamValue));
        *stream = default;
        stream->_ownBytes = TrackedAllocator.ChargedSize((byte*)stream);
        return stream;
    }

    /// <summary>An independent copy (COPY): nodes, counters, groups with their consumers and pending entries.</summary>
    public static StreamValue* Copy(StreamValue* source)
    {
        StreamValue* copy = Create();
        for (int i = 0; i < source->_nodeCount; i++)
        {
            StreamNode* node = source->Node(i);
            copy->AddLoadedNode(node->Master, NativeListpack.CopyOf(NativeListpack.AsSpan(node->Listpack)));
        }
        copy->Length = source->Length;
        copy->LastId = source->LastId;
        copy->FirstId = source->FirstId;
        copy->MaxDeletedId = source->MaxDeletedId;
        copy->EntriesAdded = source->EntriesAdded;
        if (source->_groups == null)
            return copy;
        ConsumerGroups* groups = copy->GroupsOrCreate();
        foreach (var (name, pointer) in source->_groups->Sorted())
        {
            var from = (ConsumerGroup*)pointer;
            ConsumerGroup* to = groups->Add(name, from->LastDelivered, from->EntriesRead);
            foreach (nint c in from->SortedConsumers())
            {
                var consumer = (StreamConsumer*)c;
                to->AddConsumer(StreamConsumer.NameOf(consumer), consumer->SeenTime);
            }
            var cursor = from->Pending->From(StreamId.Min);
            for (PendingEntry* entry; (entry = from->Pending->At(cursor)) != null; from->Pending->MoveNext(ref cursor))
            {
                StreamConsumer* owner = to->FindConsumer(StreamConsumer.NameOf(entry->Consumer));
                PendingEntry* added = to->Pending->Insert(entry->Id);
                added->DeliveryTime = entry->DeliveryTime;
                added->DeliveryCount = entry->DeliveryCount;
                added->Consumer = owner;
                owner->Pending->Insert(entry->Id);
            }
        }
        return copy;
    }

    public static void Destroy(StreamValue* stream)
    {
        for (int i = 0; i < stream->_nodeCount; i++)
            NativeListpack.Free(stream->Node(i)->Listpack);
        if (stream->_nodes != null)
            TrackedAllocator.Free((byte*)stream->_nodes);
        if (stream->_groups != null)
            ConsumerGroups.Destroy(stream->_groups);
        TrackedAllocator.Free((byte*)stream);
    }

    // ---- adding ------------------------------------------------------------------------------

    /// <summary>
    /// Appends an entry with ID <paramref name="id"/> (greater than <see cref="LastId"/>, checked
    /// by the caller) and the field/value pairs at <paramref name="args"/>[first..]. A new node is
    /// started where Redis starts one: when the last node's listpack plus the new fields would
    /// reach <paramref name="nodeMaxBytes"/>, or it holds <paramref name="nodeMaxEntries"/> entries
    /// (live and deleted).
    /// </summary>
    public void Append(StreamId id, ArgList args, int first, long nodeMaxBytes, long nodeMaxEntries)
    {
        int fieldCount = (args.Count - first) / 2;
        long dataBytes = 0;
        for (int i = first; i < args.Count; i++)
            dataBytes += args[i].Length;
        StreamNode* node = _nodeCount == 0 ? null : Node(_nodeCount - 1);
        if (node != null)
        {
            long maxBytes = nodeMaxBytes <= 0 || nodeMaxBytes > int.MaxValue ? int.MaxValue : nodeMaxBytes;
            if (NativeListpack.Bytes(node->Listpack) + dataBytes >= maxBytes
                || (nodeMaxEntries > 0 && node->Live() + node->Deleted() >= nodeMaxEntries))
            {
                Resize(node, NativeListpack.Shrink(node->Listpack));
                node = null;
            }
        }
        if (node == null)
            node = AddNode(id, args, first, fieldCount);
        else
            Resize(node, StreamNode.AddToCounters(node->Listpack, 1, 0));
        byte* lp = node->Listpack;
        bool sameFields = node->HasMasterFields(args, first, fieldCount);
        lp = NativeListpack.AppendInteger(lp, sameFields ? StreamNode.FlagSameFields : StreamNode.FlagNone);
        lp = NativeListpack.AppendInteger(lp, (long)(id.Ms - node->Master.Ms));
        lp = NativeListpack.AppendInteger(lp, (long)(id.Seq - node->Master.Seq));
        if (!sameFields)
            lp = NativeListpack.AppendInteger(lp, fieldCount);
        for (int i = first; i < args.Count; i += 2)
        {
            if (!sameFields)
                lp = NativeListpack.AppendString(lp, args[i]);
            lp = NativeListpack.AppendString(lp, args[i + 1]);
        }
        lp = NativeListpack.AppendInteger(lp, 3 + fieldCount + (sameFields ? 0 : fieldCount + 1));
        Resize(node, lp);
        Length++;
        EntriesAdded++;
        LastId = id;
        if (Length == 1)
            FirstId = id;
    }

    /// <summary>A new last node whose master entry holds the first entry's fields; its live count starts at 1.</summary>
    private StreamNode* AddNode(StreamId master, ArgList args, int first, int fieldCount)
    {
        if (_head + _nodeCount == _capacity)
            GrowNodes();
        StreamNode* node = _nodes + _head + _nodeCount;
        _nodeCount++;
        byte* lp = NativeListpack.Create(256);
        lp = NativeListpack.AppendInteger(lp, 1);
        lp = NativeListpack.AppendInteger(lp, 0);
        lp = NativeListpack.AppendInteger(lp, fieldCount);
        for (int i = first; i < args.Count; i += 2)
            lp = NativeListpack.AppendString(lp, args[i]);
        lp = NativeListpack.AppendInteger(lp, 0);
        node->Master = master;
        node->Listpack = lp;
        node->ChargedBefore = TrackedAllocator.ChargedSize(lp);
        _nodeBytes += node->ChargedBefore;
        return node;
    }

    /// <summary>Adds a node read from an RDB file (its listpack validated by the loader), after the others.</summary>
    public void AddLoadedNode(StreamId master, byte* listpack)
    {
        if (_head + _nodeCount == _capacity)
            GrowNodes();
        StreamNode* node = _nodes + _head + _nodeCount;
        _nodeCount++;
        node->Master = master;
        node->Listpack = listpack;
        node->ChargedBefore = TrackedAllocator.ChargedSize(listpack);
        _nodeBytes += node->ChargedBefore;
    }

    private void GrowNodes()
    {
        // Room freed at the front by trimming is reclaimed before the array grows.
        if (_head > 0 && _head >= _capacity / 2)
        {
            Buffer.MemoryCopy(_nodes + _head, _nodes, (long)_capacity * sizeof(StreamNode), (long)_nodeCount * sizeof(StreamNode));
            _head = 0;
            return;
        }
        ResizeNodes(Math.Max(4, _capacity * 2));
    }

    /// <summary>Points <paramref name="node"/> at its listpack after a change that may have moved it, keeping the charged total.</summary>
    internal void Resize(StreamNode* node, byte* listpack)
    {
        // The old block, when it moved, was freed by the move.
        _nodeBytes += TrackedAllocator.ChargedSize(listpack) - node->ChargedBefore;
        node->Listpack = listpack;
        node->ChargedBefore = TrackedAllocator.ChargedSize(listpack);
    }

    /// <summary>Removes the node at <paramref name="index"/> (it holds no live entry any more).</summary>
    internal void RemoveNode(int index)
    {
        StreamNode* node = Node(index);
        _nodeBytes -= TrackedAllocator.ChargedSize(node->Listpack);
        NativeListpack.Free(node->Listpack);
        if (index == 0)
            _head++;
        else
            Buffer.MemoryCopy(node + 1, node, (long)(_nodeCount - index - 1) * sizeof(StreamNode), (long)(_nodeCount - index - 1) * sizeof(StreamNode));
        _nodeCount--;
        if (_nodeCount == 0)
            _head = 0;
        // A stream trimmed far below its peak gives the node array's room back.
        if (_capacity > 16 && _nodeCount <= _capacity / 4)
            ResizeNodes(Math.Max(16, _capacity / 2));
    }

    private void ResizeNodes(int capacity)
    {
        var fresh = (StreamNode*)TrackedAllocator.Alloc((nuint)((long)capacity * sizeof(StreamNode)));
        if (_nodes != null)
        {
            Buffer.MemoryCopy(_nodes + _head, fresh, (long)capacity * sizeof(StreamNode), (long)_nodeCount * sizeof(StreamNode));
            _nodeBytes -= TrackedAllocator.ChargedSize((byte*)_nodes);
            TrackedAllocator.Free((byte*)_nodes);
        }
        _nodes = fresh;
        _head = 0;
        _capacity = capacity;
        _nodeBytes += TrackedAllocator.ChargedSize((byte*)_nodes);
    }

    // ---- finding -----------------------------------------------------------------------------

    /// <summary>The index of the last node whose first ID is at most <paramref name="id"/>; -1 when every node starts after it.</summary>
    public readonly int NodeAtOrBefore(StreamId id)
    {
        int lo = 0, hi = _nodeCount - 1, found = -1;
        while (lo <= hi)
        {
            int mid = (lo + hi) >>> 1;
            if (Node(mid)->Master <= id)
            {
                found = mid;
                lo = mid + 1;
            }
            else
                hi = mid - 1;
        }
        return found;
    }

    /// <summary>Finds a live entry by ID: its node and the offset of its flags; false when absent.</summary>
    public readonly bool TryFind(StreamId id, out int nodeIndex, out int offset)
    {
        offset = 0;
        nodeIndex = NodeAtOrBefore(id);
        if (nodeIndex < 0)
            return false;
        StreamNode* node = Node(nodeIndex);
        for (int at = node->FirstEntry(); !NativeListpack.IsEnd(node->Listpack, at); at = node->NextEntry(at))
        {
            StreamEntry entry = node->EntryAt(at);
            int order = entry.Id.CompareTo(id);
            if (order > 0)
                return false;
            if (order == 0 && !entry.Deleted)
            {
                offset = at;
                return true;
            }
        }
        return false;
    }

    /// <summary>The live entry with this ID, or null (as a default <see cref="StreamEntry"/> with <see cref="StreamEntry.Exists"/> false).</summary>
    public readonly StreamEntry Find(StreamId id)
        => TryFind(id, out int nodeIndex, out int offset) ? Node(nodeIndex)->EntryAt(offset) : default;

    // ---- removing ----------------------------------------------------------------------------

    /// <summary>XDEL: flags the entry deleted (its node goes once empty); false when it is not there.</summary>
    public bool Delete(StreamId id)
    {
        if (!TryFind(id, out int nodeIndex, out int offset))
            return false;
        MarkDeleted(nodeIndex, offset, out _);
        if (id > MaxDeletedId)
            MaxDeletedId = id;
        RefreshFirstId();
        return true;
    }

    /// <summary>
    /// Flags the entry at <paramref name="offset"/> deleted; removes its node when it was the last
    /// live one (true). <paramref name="shift"/> is how far the entries after it moved (the node's
    /// counters may have changed size).
    /// </summary>
    private bool MarkDeleted(int nodeIndex, int offset, out int shift)
    {
        shift = 0;
        StreamNode* node = Node(nodeIndex);
        Length--;
        if (node->Live() == 1)
        {
            RemoveNode(nodeIndex);
            return true;
        }
        int before = NativeListpack.Bytes(node->Listpack);
        long flags = NativeListpack.ReadInteger(node->Listpack, offset, out _);
        byte* lp = NativeListpack.ReplaceInteger(node->Listpack, offset, flags | StreamNode.FlagDeleted);
        lp = StreamNode.AddToCounters(lp, -1, +1);
        shift = NativeListpack.Bytes(lp) - before;
        Resize(node, lp);
        return false;
    }

    /// <summary>
    /// XTRIM and XADD's trimming, as Redis's streamTrim: whole nodes go from the front while the
    /// stream stays at or above MAXLEN (or their last ID is below MINID); then, unless
    /// <paramref name="approximate"/>, entries of the next node are flagged deleted one by one.
    /// <paramref name="limit"/> (0: none) caps the entries removed in whole nodes. Returns how many were removed.
    /// </summary>
    public long Trim(bool byMaxLength, long maxLength, StreamId minId, bool approximate, long limit)
    {
        long deleted = 0;
        while (_nodeCount > 0)
        {
            if (byMaxLength && Length <= maxLength)
                break;
            StreamNode* node = Node(0);
            long live = node->Live();
            if (limit > 0 && deleted + live > limit)
                break;
            bool removeNode = byMaxLength ? Length - live >= maxLength : node->LastId() < minId;
            if (removeNode)
            {
                RemoveNode(0);
                Length -= live;
                deleted += live;
                continue;
            }
            if (approximate)
                break;
            for (int at = node->FirstEntry(); !NativeListpack.IsEnd(node->Listpack, at); at = node->NextEntry(at))
            {
                StreamEntry entry = node->EntryAt(at);
                if (byMaxLength ? Length <= maxLength : entry.Id >= minId)
                    break;
                if (entry.Deleted)
                    continue;
                deleted++;
                // Its last live entry gone (the entries at or past MINID were all deleted already),
                // the node went with it: nothing more to trim.
                if (MarkDeleted(0, at, out int shift))
                    break;
                at += shift;
                node = Node(0);
            }
            break;
        }
        RefreshFirstId();
        return deleted;
    }

    /// <summary>FirstId after removals: the first live entry's, 0-0 when none is left.</summary>
    private void RefreshFirstId()
    {
        FirstId = default;
        for (int i = 0; i < _nodeCount; i++)
        {
            StreamNode* node = Node(i);
            for (int at = node->FirstEntry(); !NativeListpack.IsEnd(node->Listpack, at); at = node->NextEntry(at))
            {
                StreamEntry entry = node->EntryAt(at);
                if (!entry.Deleted)
                {
                    FirstId = entry.Id;
                    return;
                }
            }
        }
    }

    /// <summary>The last live entry, or one that does not <see cref="StreamEntry.Exists"/> when the stream is empty.</summary>
    public static StreamEntry LastEntry(StreamValue* stream)
    {
        var iterator = new StreamIterator(stream, StreamId.Min, StreamId.Max, reverse: true);
        return iterator.Next(out StreamEntry entry) ? entry : default;
    }
}

/// <summary>One node of a stream: the ID its entries are stored relative to, and its listpack.</summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct StreamNode
{
    public const long FlagNone = 0, FlagDeleted = 1, FlagSameFields = 2;

    public StreamId Master;
    public byte* Listpack;
    /// <summary>The listpack's charged size when last counted, so moves and growth adjust the stream's total.</summary>
    public int ChargedBefore;

    /// <summary>Live entries (the master entry's first integer).</summary>
    public readonly long Live() => NativeListpack.ReadInteger(Listpack, NativeListpack.First, out _);

    /// <summary>Entries flagged deleted (the master entry's second integer).</summary>
    public readonly long Deleted()
    {
        NativeListpack.ReadInteger(Listpack, NativeListpack.First, out int next);
        return NativeListpack.ReadInteger(Listpack, next, out _);
    }

    /// <summary>Adds to the live and deleted counters of a node's master entry.</summary>
    internal static byte* AddToCounters(byte* lp, long live, long deleted)
    {
        long count = NativeListpack.ReadInteger(lp, NativeListpack.First, out _);
        lp = NativeListpack.ReplaceInteger(lp, NativeListpack.First, count + live);
        if (deleted == 0)
            return lp;
        // Found after the first counter is rewritten: its size may have changed.
        int deletedAt = NativeListpack.Skip(lp, NativeListpack.First);
        long marked = NativeListpack.ReadInteger(lp, deletedAt, out _);
        return NativeListpack.ReplaceInteger(lp, deletedAt, marked + deleted);
    }

    /// <summary>The master entry's field count and the offset of its first field.</summary>
    public readonly int MasterFields(out int firstField)
    {
        int at = NativeListpack.Skip(Listpack, NativeListpack.First);
        at = NativeListpack.Skip(Listpack, at);
        int count = (int)NativeListpack.ReadInteger(Listpack, at, out firstField);
        return count;
    }

    /// <summary>True when the entry's fields are the master's, in order (then only its values are stored).</summary>
    public readonly bool HasMasterFields(ArgList args, int first, int fieldCount)
    {
        if (MasterFields(out int at) != fieldCount)
            return false;
        for (int i = first; i < args.Count; i += 2)
        {
            if (!NativeListpack.Read(Listpack, at, out at).Is(args[i]))
                return false;
        }
        return true;
    }

    /// <summary>The offset of the first entry (after the master entry and its 0 terminator).</summary>
    public readonly int FirstEntry()
    {
        int count = MasterFields(out int at);
        for (int i = 0; i < count; i++)
            at = NativeListpack.Skip(Listpack, at);
        return NativeListpack.Skip(Listpack, at);
    }

    /// <summary>The offset of the entry after the one at <paramref name="offset"/> (the terminator after the last).</summary>
    public readonly int NextEntry(int offset)
    {
        long flags = NativeListpack.ReadInteger(Listpack, offset, out int at);
        at = NativeListpack.Skip(Listpack, at);
        at = NativeListpack.Skip(Listpack, at);
        int elements;
        if ((flags & FlagSameFields) != 0)
            elements = MasterFields(out _);
        else
            elements = 2 * (int)NativeListpack.ReadInteger(Listpack, at, out at);
        for (int i = 0; i < elements; i++)
            at = NativeListpack.Skip(Listpack, at);
        return NativeListpack.Skip(Listpack, at); // the element count
    }

    /// <summary>The offset of the entry before the one at <paramref name="offset"/> (or the first entry's offset minus one when none: check against <see cref="FirstEntry"/>).</summary>
    public readonly int PreviousEntry(int offset)
    {
        int countAt = NativeListpack.Previous(Listpack, offset);
        long elements = NativeListpack.ReadInteger(Listpack, countAt, out _);
        int at = countAt;
        for (long i = 0; i < elements; i++)
            at = NativeListpack.Previous(Listpack, at);
        return at;
    }

    public readonly StreamEntry EntryAt(int offset)
    {
        long flags = NativeListpack.ReadInteger(Listpack, offset, out int at);
        ulong ms = Master.Ms + (ulong)NativeListpack.ReadInteger(Listpack, at, out at);
        ulong seq = Master.Seq + (ulong)NativeListpack.ReadInteger(Listpack, at, out at);
        int fieldCount;
        int fieldsAt;
        if ((flags & FlagSameFields) != 0)
        {
            fieldCount = MasterFields(out fieldsAt);
        }
        else
        {
            fieldCount = (int)NativeListpack.ReadInteger(Listpack, at, out at);
            fieldsAt = -1;
        }
        return new StreamEntry(Listpack, new StreamId(ms, seq), (flags & FlagDeleted) != 0, fieldCount, fieldsAt, at);
    }

    /// <summary>The ID of the node's last entry (deleted or not), as Redis's lpGetEdgeStreamID.</summary>
    public readonly StreamId LastId()
    {
        int end = NativeListpack.Bytes(Listpack) - 1;
        return EntryAt(PreviousEntry(end)).Id;
    }
}

/// <summary>
/// One entry as read from its node: ID, deleted flag, and its fields and values, which live in
/// the node's listpack (fields in the master entry when they are the master's).
/// </summary>
public readonly unsafe struct StreamEntry
{
    private readonly byte* _listpack;
    private readonly int _masterFieldsAt; // -1: fields are stored with the values
    private readonly int _valuesAt;

    public StreamEntry(byte* listpack, StreamId id, bool deleted, int fieldCount, int masterFieldsAt, int valuesAt)
    {
        _listpack = listpack;
        Id = id;
        Deleted = deleted;
        FieldCount = fieldCount;
        _masterFieldsAt = masterFieldsAt;
        _valuesAt = valuesAt;
    }

    public bool Exists => _listpack != null;
    public StreamId Id { get; }
    public bool Deleted { get; }
    public int FieldCount { get; }

    /// <summary>Walks the field/value pairs in order.</summary>
    public FieldWalker Fields() => new(_listpack, _masterFieldsAt, _valuesAt);

    public struct FieldWalker
    {
        private readonly byte* _listpack;
        private readonly bool _shared;
        private int _fieldAt;
        private int _valueAt;

        internal FieldWalker(byte* listpack, int masterFieldsAt, int valuesAt)
        {
            _listpack = listpack;
            _shared = masterFieldsAt >= 0;
            _fieldAt = masterFieldsAt;
            _valueAt = valuesAt;
        }

        /// <summary>The next pair; call at most FieldCount times.</summary>
        public void Next(out ListpackElement field, out ListpackElement value)
        {
            if (_shared)
            {
                field = NativeListpack.Read(_listpack, _fieldAt, out _fieldAt);
                value = NativeListpack.Read(_listpack, _valueAt, out _valueAt);
            }
            else
            {
                field = NativeListpack.Read(_listpack, _valueAt, out _valueAt);
                value = NativeListpack.Read(_listpack, _valueAt, out _valueAt);
            }
        }
    }
}
