namespace Diagnostics.Server.Persistence;

/// <summary>
/// Receives what <see cref="RdbReader"/> finds in an RDB file, in file order. Spans are only valid
/// during the call: the reader reuses its buffers for the next key.
/// </summary>
public interface IRdbVisitor
{
    /// <summary>The following keys belong to database <paramref name="index"/> (SELECTDB).</summary>
    void SelectDatabase(int index);

    /// <summary>Size hint for the selected database (RESIZEDB): key count and how many of them expire.</summary>
    void ResizeDatabase(long keys, long expires);

    /// <summary>A string key. <paramref name="expireAtUnixMs"/> is the absolute expiry in unix ms, 0 when it has none.
    /// Keys already expired are delivered too: whether to drop them is the loader's decision (Redis keeps them
    /// when loading an AOF base, drops them when a master loads a dump).</summary>
    void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs);

    /// <summary>
    /// A list, set, hash or sorted set key begins: its elements follow through the calls below,
    /// then <see cref="EndCollection"/>. <paramref name="sizeHint"/> is the element count when the
    /// encoding states it, else 0. Expiry as for <see cref="String"/>.
    /// </summary>
    void BeginCollection(RdbCollection kind, ReadOnlySpan<byte> key, long expireAtUnixMs, long sizeHint);

    /// <summary>
    /// The RDB type byte the collection about to begin was written as (its encoding: plain,
    /// intset, listpack...), for a loader that keeps encodings as Redis chooses them on load.
    /// </summary>
    void CollectionEncoding(byte rdbType) { }

    /// <summary>
    /// The collection begun last arrives as one listpack blob (RDB types 16, 17, 20), reported right
    /// after <see cref="BeginCollection"/>; its elements follow as usual. Redis 7.0 keeps such a
    /// blob as it is when loading, where it checks the element lengths of the other encodings.
    /// </summary>
    void FromListpack() { }

    void ListElement(ReadOnlySpan<byte> element);

    /// <summary>
    /// A quicklist node (RDB types 14 and 18, a ziplist node already converted): a listpack of
    /// the list's next elements, checked element by element. A visitor that keeps nodes takes it
    /// whole; by default its elements go to <see cref="ListElement"/>.
    /// </summary>
    void ListNode(ReadOnlySpan<byte> listpack)
    {
        Span<byte> scratch = stackalloc byte[24];
        var reader = new Listpack(listpack);
        while (reader.Next(out var element))
            ListElement(element.AsBytes(scratch));
    }

    /// <summary>A PLAIN quicklist node: one element that Redis keeps in a node of its own.</summary>
    void ListPlainNode(ReadOnlySpan<byte> element) => ListElement(element);
    void SetMember(ReadOnlySpan<byte> member);
    void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value);
    void SortedSetMember(ReadOnlySpan<byte> member, double score);

    /// <summary>The collection begun last has no more elements.</summary>
    void EndCollection();

    /// <summary>A stream key begins; its nodes, counters and groups follow, then <see cref="EndStream"/>.</summary>
    void BeginStream(ReadOnlySpan<byte> key, long expireAtUnixMs);

    /// <summary>One node: its master ID and its listpack, already checked by <see cref="DataTypes.Streams.StreamNodeValidator"/>.</summary>
    void StreamNode(DataTypes.Streams.StreamId master, ReadOnlySpan<byte> listpack);

    /// <summary>
    /// The stream's counters. Files before RDB 10 (type 15) lack the first ID, the largest deleted
    /// ID and entries-added: <paramref name="entriesAdded"/> is then -1, to be derived as Redis does.
    /// </summary>
    void StreamCounters(long length, DataTypes.Streams.StreamId lastId, DataTypes.Streams.StreamId firstId,
        DataTypes.Streams.StreamId maxDeletedId, long entriesAdded);

    /// <summary>A consumer group; <paramref name="entriesRead"/> is long.MinValue when the file predates it (to be estimated).</summary>
    void StreamGroup(ReadOnlySpan<byte> name, DataTypes.Streams.StreamId lastDelivered, long entriesRead);

    /// <summary>An entry pending in the group begun last, its owner named later by a consumer.</summary>
    void StreamGroupPending(DataTypes.Streams.StreamId id, long deliveryTimeUnixMs, long deliveryCount);

    /// <summary>A consumer of the group begun last.</summary>
    void StreamConsumer(ReadOnlySpan<byte> name, long seenTimeUnixMs);

    /// <summary>An entry of the group's pending list owned by the consumer begun last.</summary>
    void StreamConsumerPending(DataTypes.Streams.StreamId id);

    /// <summary>The stream begun last is complete.</summary>
    void EndStream();

    /// <summary>A function library (RDB_OPCODE_FUNCTION2): its source code, shebang included. Ignored unless the visitor loads functions.</summary>
    void FunctionLibrary(ReadOnlySpan<byte> code) { }

    /// <summary>An auxiliary field (redis-ver, ctime, used-mem, aof-base...). Integer-encoded values arrive as decimal text.</summary>
    void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value);
}
