using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// An <see cref="IRdbVisitor"/> that builds each collection and stream detached with an
/// <see cref="RdbEntryBuilder"/> and hands the finished entry to <see cref="Built"/>: the RDB load
/// puts it in a keyspace, RESTORE takes the one value of its payload.
/// </summary>
internal abstract unsafe class RdbBuildingVisitor(RdbEntryBuilder builder) : IRdbVisitor
{
    /// <summary>A finished value (null when the builder dropped it, e.g. an empty collection) and its TTL (0: none).</summary>
    protected abstract void Built(Entry* e, long expireAt);

    public abstract void SelectDatabase(int index);
    public abstract void ResizeDatabase(long keys, long expires);
    public abstract void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs);
    public abstract void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value);

    /// <summary>Ignored unless the visitor loads functions (declared here so a subclass's override implements the interface).</summary>
    public virtual void FunctionLibrary(ReadOnlySpan<byte> code) { }

    public void CollectionEncoding(byte rdbType) => builder.CollectionEncoding(rdbType);

    public void BeginCollection(RdbCollection kind, ReadOnlySpan<byte> key, long expireAtUnixMs, long sizeHint)
        => builder.BeginCollection(kind, key, expireAtUnixMs, sizeHint);

    public void FromListpack() => builder.FromListpack();
    public void ListElement(ReadOnlySpan<byte> element) => builder.ListElement(element);
    public void ListNode(ReadOnlySpan<byte> listpack) => builder.ListNode(listpack);
    public void ListPlainNode(ReadOnlySpan<byte> element) => builder.ListPlainNode(element);

    public void SetMember(ReadOnlySpan<byte> member) => builder.SetMember(member);
    public void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value) => builder.HashField(field, value);
    public void SortedSetMember(ReadOnlySpan<byte> member, double score) => builder.SortedSetMember(member, score);
    public void EndCollection() => Built(builder.EndCollection(), builder.ExpireAt);

    public void BeginStream(ReadOnlySpan<byte> key, long expireAtUnixMs) => builder.BeginStream(key, expireAtUnixMs);
    public void StreamNode(StreamId master, ReadOnlySpan<byte> listpack) => builder.StreamNode(master, listpack);

    public void StreamCounters(long length, StreamId lastId, StreamId firstId, StreamId maxDeletedId, long entriesAdded)
        => builder.StreamCounters(length, lastId, firstId, maxDeletedId, entriesAdded);

    public void StreamGroup(ReadOnlySpan<byte> name, StreamId lastDelivered, long entriesRead) => builder.StreamGroup(name, lastDelivered, entriesRead);
    public void StreamGroupPending(StreamId id, long deliveryTimeUnixMs, long deliveryCount) => builder.StreamGroupPending(id, deliveryTimeUnixMs, deliveryCount);
    public void StreamConsumer(ReadOnlySpan<byte> name, long seenTimeUnixMs) => builder.StreamConsumer(name, seenTimeUnixMs);
    public void StreamConsumerPending(StreamId id) => builder.StreamConsumerPending(id);
    public void EndStream() => Built(builder.EndStream(), builder.ExpireAt);

    /// <summary>Frees a value a failed read left half built.</summary>
    public virtual void Abandon() => builder.Abandon();
}
