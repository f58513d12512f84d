using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>Puts what an RDB base file holds into a keyspace (the caller holds every shard).</summary>
internal sealed unsafe class RdbLoadVisitor(Keyspace keyspace) : IRdbVisitor
{
    private int _database;
    // Collections and streams are built detached, put in the keyspace once complete. A member or
    // field twice in one value is corrupt input for Redis (it refuses the file); here the later
    // one wins, as the AOF commands replaying the same data would have it.
    private readonly RdbEntryBuilder _builder = new(strict: false, problem => new AofFormatException(problem));

    public long Keys { get; private set; }

    /// <summary>
    /// Unix ms before which a key's expiry means it is not loaded (a master loading its dump, as
    /// Redis's rdbLoad drops them); 0 keeps every key (an AOF base, a replica's sync).
    /// </summary>
    public long DropExpiredBefore { get; init; }

    /// <summary>Keys not loaded because they had expired (INFO rdb_last_load_keys_expired).</summary>
    public long Expired { get; private set; }

    private bool DropsExpired(long expireAtUnixMs)
    {
        if (expireAtUnixMs == 0 || expireAtUnixMs >= DropExpiredBefore)
            return false;
        Expired++;
        return true;
    }

    public void SelectDatabase(int index)
    {
        if (index < 0 || index >= keyspace.DatabaseCount)
            throw new AofFormatException($"The RDB base file selects database {index}, but the server has {keyspace.DatabaseCount} (databases setting)");
        _database = index;
    }

    public void ResizeDatabase(long keys, long expires) { }

    public void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs)
    {
        if (DropsExpired(expireAtUnixMs))
            return;
        uint hash = Keyspace.Hash(key);
        // Nothing expires while loading; a key loaded past its time goes at its first access or
        // the expiry cycle, as the keys the AOF commands create.
        keyspace.ShardOf(hash).Databases[_database].SetString(key, hash, value, expireAtUnixMs, 0);
        Keys++;
    }

    public void BeginCollection(RdbCollection kind, ReadOnlySpan<byte> key, long expireAtUnixMs, long sizeHint)
        => _builder.BeginCollection(kind, key, expireAtUnixMs);

    public void ListElement(ReadOnlySpan<byte> element) => _builder.ListElement(element);

    public void SetMember(ReadOnlySpan<byte> member) => _builder.SetMember(member);

    public void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value) => _builder.HashField(field, value);

    public void SortedSetMember(ReadOnlySpan<byte> member, double score) => _builder.SortedSetMember(member, score);

    // Redis skips empty collections when loading (they cannot exist); so does this.
    public void EndCollection() => Add(_builder.EndCollection());

    public void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) { }

    /// <summary>The function libraries read, for the caller to load once the keys are in.</summary>
    public List<byte[]> FunctionLibraries { get; } = [];

    public void FunctionLibrary(ReadOnlySpan<byte> code) => FunctionLibraries.Add(code.ToArray());

    public void BeginStream(ReadOnlySpan<byte> key, long expireAtUnixMs) => _builder.BeginStream(key, expireAtUnixMs);

    public void StreamNode(StreamId master, ReadOnlySpan<byte> listpack) => _builder.StreamNode(master, listpack);

    public void StreamCounters(long length, StreamId lastId, StreamId firstId, StreamId maxDeletedId, long entriesAdded)
        => _builder.StreamCounters(length, lastId, firstId, maxDeletedId, entriesAdded);

    public void StreamGroup(ReadOnlySpan<byte> name, StreamId lastDelivered, long entriesRead) => _builder.StreamGroup(name, lastDelivered, entriesRead);

    public void StreamGroupPending(StreamId id, long deliveryTimeUnixMs, long deliveryCount) => _builder.StreamGroupPending(id, deliveryTimeUnixMs, deliveryCount);

    public void StreamConsumer(ReadOnlySpan<byte> name, long seenTimeUnixMs) => _builder.StreamConsumer(name, seenTimeUnixMs);

    public void StreamConsumerPending(StreamId id) => _builder.StreamConsumerPending(id);

    public void EndStream() => Add(_builder.EndStream());

    /// <summary>Adds a built value; a key twice in the file: the later one wins, as for strings.</summary>
    private void Add(Entry* e)
    {
        if (e == null)
            return;
        if (DropsExpired(e->ExpireAt))
        {
            EntryStore.Free(e);
            return;
        }
        var database = keyspace.ShardOf(e->Hash).Databases[_database];
        Entry** slot = database.LookupSlot(Entry.KeyOf(e), e->Hash, 0);
        if (slot != null)
            database.RemoveAt(slot);
        database.Add(e);
        Keys++;
    }

    /// <summary>Frees a collection a failed load left half built.</summary>
    public void Abandon() => _builder.Abandon();
}
