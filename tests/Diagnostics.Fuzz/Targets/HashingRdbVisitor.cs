using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Persistence;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// Reads every span the RDB reader hands out (so a span past its buffer faults here) and folds
/// the events into a hash, so two reads of the same file can be compared event for event.
/// Also checks the call order the visitor contract promises.
/// </summary>
public sealed class HashingRdbVisitor : IRdbVisitor
{
    private HashCode _hash;
    private bool _inCollection;

    public int Events { get; private set; }
    public int Hash => _hash.ToHashCode();

    public void SelectDatabase(int index) => Add(1, index);
    public void ResizeDatabase(long keys, long expires) => Add(2, keys, expires);
    public void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs) => Add(3, key, value, expireAtUnixMs);

    public void BeginCollection(RdbCollection kind, ReadOnlySpan<byte> key, long expireAtUnixMs, long sizeHint)
    {
        if (_inCollection)
            throw new InvalidOperationException("BeginCollection inside an open collection");
        _inCollection = true;
        Add(4 + (int)kind * 16, key, default, expireAtUnixMs);
        _hash.Add(sizeHint);
    }

    public void ListElement(ReadOnlySpan<byte> element) => Element(5, element, default);
    public void SetMember(ReadOnlySpan<byte> member) => Element(6, member, default);
    public void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value) => Element(7, field, value);

    public void SortedSetMember(ReadOnlySpan<byte> member, double score)
    {
        Element(8, member, default);
        _hash.Add(score);
    }

    public void EndCollection()
    {
        if (!_inCollection)
            throw new InvalidOperationException("EndCollection without BeginCollection");
        _inCollection = false;
        Add(9, 0);
    }

    public void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => Add(10, name, value, 0);

    // Streams: their events are folded in like a collection's (the nodes were validated by the reader).
    public void BeginStream(ReadOnlySpan<byte> key, long expireAtUnixMs)
    {
        Add(11, key, default, expireAtUnixMs);
        _inCollection = true;
    }

    public void StreamNode(StreamId master, ReadOnlySpan<byte> listpack) => Element(12, listpack, default);

    public void StreamCounters(long length, StreamId lastId, StreamId firstId, StreamId maxDeletedId, long entriesAdded)
    {
        Element(13, default, default);
        _hash.Add(length);
        _hash.Add(lastId);
        _hash.Add(firstId);
        _hash.Add(maxDeletedId);
        _hash.Add(entriesAdded);
    }

    public void StreamGroup(ReadOnlySpan<byte> name, StreamId lastDelivered, long entriesRead) => Element(14, name, default);
    public void StreamGroupPending(StreamId id, long deliveryTimeUnixMs, long deliveryCount) => Element(15, default, default);
    public void StreamConsumer(ReadOnlySpan<byte> name, long seenTimeUnixMs) => Element(16, name, default);
    public void StreamConsumerPending(StreamId id) => Element(17, default, default);
    public void EndStream() => EndCollection();

    private void Element(int kind, ReadOnlySpan<byte> first, ReadOnlySpan<byte> second)
    {
        if (!_inCollection)
            throw new InvalidOperationException("an element outside any collection");
        Add(kind, first, second, 0);
    }

    private void Add(int kind, long a, long b = 0)
    {
        if (_inCollection && kind != 9)
            throw new InvalidOperationException($"event {kind} inside an open collection");
        Events++;
        _hash.Add(kind);
        _hash.Add(a);
        _hash.Add(b);
    }

    private void Add(int kind, ReadOnlySpan<byte> first, ReadOnlySpan<byte> second, long number)
    {
        if (_inCollection && kind is 3 or 10)
            throw new InvalidOperationException($"event {kind} inside an open collection");
        Events++;
        _hash.Add(kind);
        _hash.Add(first.Length);
        _hash.AddBytes(first);
        _hash.Add(second.Length);
        _hash.AddBytes(second);
        _hash.Add(number);
    }
}
