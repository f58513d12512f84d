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

    void ListElement(ReadOnlySpan<byte> element);
    void SetMember(ReadOnlySpan<byte> member);
    void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value);
    void SortedSetMember(ReadOnlySpan<byte> member, double score);

    /// <summary>The collection begun last has no more elements.</summary>
    void EndCollection();

    /// <summary>An auxiliary field (redis-ver, ctime, used-mem, aof-base...). Integer-encoded values arrive as decimal text.</summary>
    void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value);
}
