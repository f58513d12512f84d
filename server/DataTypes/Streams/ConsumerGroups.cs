using System.Runtime.InteropServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.DataTypes.Streams;

/// <summary>
/// A stream's consumer groups by name (a <see cref="FieldTable"/> from name to group). Redis keeps
/// them in a radix tree, so XINFO GROUPS lists them in name order: callers sort when they list.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct ConsumerGroups
{
    private FieldTable* _byName;
    private long _ownBytes;
    private long _groupBytes;

    public readonly long Count => _byName->Count;
    public readonly long Bytes => _ownBytes + _byName->Bytes + _groupBytes + PendingBytes();

    /// <summary>The groups' pending lists and consumers grow without telling this table: summed when measured.</summary>
    private readonly long PendingBytes()
    {
        long total = 0;
        foreach (FieldNode* node in *_byName)
            total += GroupOf(node)->VariableBytes;
        return total;
    }

    public static ConsumerGroups* Create()
    {
        var groups = (ConsumerGroups*)TrackedAllocator.Alloc((nuint)sizeof(ConsumerGroups));
        *groups = default;
        groups->_byName = FieldTable.Create();
        groups->_ownBytes = TrackedAllocator.ChargedSize((byte*)groups);
        return groups;
    }

    public static void Destroy(ConsumerGroups* groups)
    {
        foreach (FieldNode* node in *groups->_byName)
            ConsumerGroup.Destroy(GroupOf(node));
        FieldTable.Destroy(groups->_byName);
        TrackedAllocator.Free((byte*)groups);
    }

    public static ConsumerGroup* GroupOf(FieldNode* node) => *(ConsumerGroup**)FieldNode.ValuePointer(node);

    public readonly ConsumerGroup* Find(ReadOnlySpan<byte> name)
    {
        FieldNode* node = _byName->Find(name, FieldTable.HashOf(name));
        return node == null ? null : GroupOf(node);
    }

    /// <summary>Adds a group (the name must be new).</summary>
    public ConsumerGroup* Add(ReadOnlySpan<byte> name, StreamId lastDelivered, long entriesRead)
    {
        ConsumerGroup* group = ConsumerGroup.Create(lastDelivered, entriesRead);
        FieldNode* node = _byName->Add(name, FieldTable.HashOf(name), sizeof(ConsumerGroup*));
        *(ConsumerGroup**)FieldNode.ValuePointer(node) = group;
        _groupBytes += group->FixedBytes;
        return group;
    }

    /// <summary>Removes and frees a group; false when there is none of that name.</summary>
    public bool Remove(ReadOnlySpan<byte> name)
    {
        ConsumerGroup* group = Find(name);
        if (group == null)
            return false;
        _groupBytes -= group->FixedBytes;
        _byName->Remove(name);
        ConsumerGroup.Destroy(group);
        return true;
    }

    /// <summary>The groups in name order (XINFO GROUPS, the AOF rewrite); allocates the list.</summary>
    public readonly List<(byte[] Name, nint Group)> Sorted()
    {
        var list = new List<(byte[] Name, nint Group)>((int)Count);
        foreach (FieldNode* node in *_byName)
            list.Add((FieldNode.FieldOf(node).ToArray(), (nint)GroupOf(node)));
        list.Sort(static (a, b) => a.Name.AsSpan().SequenceCompareTo(b.Name));
        return list;
    }
}

/// <summary>
/// A consumer group: the last ID delivered, the entries read (for lag, Redis 7's entries-read,
/// -1 when unknown), its pending entries (delivered, not acknowledged) and its consumers.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct ConsumerGroup
{
    public StreamId LastDelivered;
    public long EntriesRead;
    public PendingEntries* Pending;
    private FieldTable* _consumers;
    private long _ownBytes;

    /// <summary>Bytes fixed at creation (this struct).</summary>
    public readonly long FixedBytes => _ownBytes;

    /// <summary>Bytes that grow with use: the pending list, the consumer table and the consumers.</summary>
    public readonly long VariableBytes
    {
        get
        {
            long total = Pending->Bytes + _consumers->Bytes;
            foreach (FieldNode* node in *_consumers)
                total += ConsumerOf(node)->Bytes;
            return total;
        }
    }

    public readonly long ConsumerCount => _consumers->Count;

    public static ConsumerGroup* Create(StreamId lastDelivered, long entriesRead)
    {
        var group = (ConsumerGroup*)TrackedAllocator.Alloc((nuint)sizeof(ConsumerGroup));
        *group = default;
        group->LastDelivered = lastDelivered;
        group->EntriesRead = entriesRead;
        group->Pending = PendingEntries.Create();
        group->_consumers = FieldTable.Create();
        group->_ownBytes = TrackedAllocator.ChargedSize((byte*)group);
        return group;
    }

    public static void Destroy(ConsumerGroup* group)
    {
        foreach (FieldNode* node in *group->_consumers)
            StreamConsumer.Destroy(ConsumerOf(node));
        FieldTable.Destroy(group->_consumers);
        PendingEntries.Destroy(group->Pending);
        TrackedAllocator.Free((byte*)group);
    }

    public static StreamConsumer* ConsumerOf(FieldNode* node) => *(StreamConsumer**)FieldNode.ValuePointer(node);

    public readonly StreamConsumer* FindConsumer(ReadOnlySpan<byte> name)
    {
        FieldNode* node = _consumers->Find(name, FieldTable.HashOf(name));
        return node == null ? null : ConsumerOf(node);
    }

    /// <summary>Adds a consumer (the name must be new), seen at <paramref name="nowMs"/>.</summary>
    public StreamConsumer* AddConsumer(ReadOnlySpan<byte> name, long nowMs)
    {
        FieldNode* node = _consumers->Add(name, FieldTable.HashOf(name), sizeof(StreamConsumer*));
        StreamConsumer* consumer = StreamConsumer.Create(FieldNode.FieldOf(node), nowMs);
        *(StreamConsumer**)FieldNode.ValuePointer(node) = consumer;
        return consumer;
    }

    /// <summary>
    /// Removes a consumer and its pending entries from the group (XGROUP DELCONSUMER); returns how
    /// many entries it had pending, or -1 when there is no such consumer.
    /// </summary>
    public long RemoveConsumer(ReadOnlySpan<byte> name)
    {
        StreamConsumer* consumer = FindConsumer(name);
        if (consumer == null)
            return -1;
        long pending = consumer->Pending->Count;
        var cursor = consumer->Pending->From(StreamId.Min);
        for (PendingEntry* entry; (entry = consumer->Pending->At(cursor)) != null; consumer->Pending->MoveNext(ref cursor))
            Pending->Remove(entry->Id);
        _consumers->Remove(name);
        StreamConsumer.Destroy(consumer);
        return pending;
    }

    /// <summary>The consumers in name order (XINFO CONSUMERS, the AOF rewrite); allocates the list.</summary>
    public readonly List<nint> SortedConsumers()
    {
        var list = new List<nint>((int)ConsumerCount);
        foreach (FieldNode* node in *_consumers)
            list.Add((nint)ConsumerOf(node));
        list.Sort(static (a, b) => StreamConsumer.NameOf((StreamConsumer*)a).SequenceCompareTo(StreamConsumer.NameOf((StreamConsumer*)b)));
        return list;
    }
}

/// <summary>A consumer of a group: when it was last seen, and the entries pending for it.</summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct StreamConsumer
{
    /// <summary>Unix ms of its last read or claim (XINFO CONSUMERS idle).</summary>
    public long SeenTime;
    public PendingEntries* Pending;
    private int _nameLength;
    private long _ownBytes;

    public readonly long Bytes => _ownBytes + Pending->Bytes;

    /// <summary>The consumer's name, stored right after the struct.</summary>
    public static ReadOnlySpan<byte> NameOf(StreamConsumer* consumer) => new(consumer + 1, consumer->_nameLength);

    public static StreamConsumer* Create(ReadOnlySpan<byte> name, long nowMs)
    {
        var consumer = (StreamConsumer*)TrackedAllocator.Alloc((nuint)(sizeof(StreamConsumer) + name.Length));
        *consumer = default;
        consumer->SeenTime = nowMs;
        consumer->Pending = PendingEntries.Create();
        consumer->_nameLength = name.Length;
        name.CopyTo(new Span<byte>(consumer + 1, name.Length));
        consumer->_ownBytes = TrackedAllocator.ChargedSize((byte*)consumer);
        return consumer;
    }

    public static void Destroy(StreamConsumer* consumer)
    {
        PendingEntries.Destroy(consumer->Pending);
        TrackedAllocator.Free((byte*)consumer);
    }
}
