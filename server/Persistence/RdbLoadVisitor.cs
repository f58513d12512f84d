using System.Text;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;
using ValueType = Diagnostics.Server.Engine.ValueType;

namespace Diagnostics.Server.Persistence;

/// <summary>Puts what an RDB base file holds into a keyspace (the caller holds every shard).</summary>
internal sealed unsafe class RdbLoadVisitor(Keyspace keyspace) : IRdbVisitor
{
    private int _database;
    // The collection being read: built detached, put in the keyspace once complete.
    private Entry* _building;
    private long _buildingExpireAt;

    public long Keys { get; private set; }

    public void SelectDatabase(int index)
    {
        if (index < 0 || index >= keyspace.DatabaseCount)
            throw new AofFormatException($"The RDB base file selects database {index}, but the server has {keyspace.DatabaseCount} (databases setting)");
        _database = index;
    }

    public void ResizeDatabase(long keys, long expires) { }

    public void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs)
    {
        uint hash = Keyspace.Hash(key);
        // Nothing expires while loading; a key loaded past its time goes at its first access or
        // the expiry cycle, as the keys the AOF commands create.
        keyspace.ShardOf(hash).Databases[_database].SetString(key, hash, value, expireAtUnixMs, 0);
        Keys++;
    }

    public void BeginCollection(RdbCollection kind, ReadOnlySpan<byte> key, long expireAtUnixMs, long sizeHint)
    {
        var type = kind switch
        {
            RdbCollection.List => ValueType.List,
            RdbCollection.Set => ValueType.Set,
            RdbCollection.Hash => ValueType.Hash,
            _ => ValueType.SortedSet,
        };
        _building = Values.NewEntry(key, Keyspace.Hash(key), type);
        _buildingExpireAt = expireAtUnixMs;
    }

    public void ListElement(ReadOnlySpan<byte> element) => Values.List(_building)->PushTail(element);

    // A member or field twice in one value is corrupt input for Redis (it refuses the file); here
    // the later one wins, as the AOF commands replaying the same data would have it.
    public void SetMember(ReadOnlySpan<byte> member) => Values.Set(_building)->Set(member, []);

    public void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value) => Values.Hash(_building)->Set(field, value);

    public void SortedSetMember(ReadOnlySpan<byte> member, double score)
    {
        var set = Values.SortedSet(_building);
        if (set->TryGetScore(member, out _))
            set->Rescore(member, score);
        else
            set->Add(member, score);
    }

    public void EndCollection()
    {
        Entry* e = _building;
        _building = null;
        // Redis skips empty collections when loading (they cannot exist); so does this.
        if (Values.Length(e) == 0)
        {
            EntryStore.Free(e);
            return;
        }
        var database = keyspace.ShardOf(e->Hash).Databases[_database];
        e->ExpireAt = _buildingExpireAt;
        Entry** slot = database.LookupSlot(Entry.KeyOf(e), e->Hash, 0);
        if (slot != null)
            database.RemoveAt(slot); // a key twice in the file: the later one wins, as for strings
        database.Add(e);
        Keys++;
    }

    public void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) { }

    /// <summary>The function libraries the RDB holds, in file order, for the caller to load (null: none).</summary>
    public List<byte[]>? FunctionLibraries { get; private set; }

    public void FunctionLibrary(ReadOnlySpan<byte> code) => (FunctionLibraries ??= []).Add(code.ToArray());

    // ---- streams: built detached like collections, put in place by EndStream -------------------

    private ConsumerGroup* _group;
    private StreamConsumer* _consumer;

    private StreamValue* Stream => Values.Stream(_building);

    public void BeginStream(ReadOnlySpan<byte> key, long expireAtUnixMs)
    {
        _building = Values.NewEntry(key, Keyspace.Hash(key), ValueType.Stream);
        _buildingExpireAt = expireAtUnixMs;
        _group = null;
        _consumer = null;
    }

    public void StreamNode(StreamId master, ReadOnlySpan<byte> listpack)
        => Stream->AddLoadedNode(master, NativeListpack.CopyOf(listpack));

    public void StreamCounters(long length, StreamId lastId, StreamId firstId, StreamId maxDeletedId, long entriesAdded)
    {
        StreamValue* stream = Stream;
        long live = 0;
        for (int i = 0; i < stream->NodeCount; i++)
            live += stream->Node(i)->Live();
        if (length != live)
            throw new AofFormatException($"The RDB says stream '{KeyText}' has {length} entries, its nodes hold {live}");
        stream->Length = length;
        // Appends rely on the last ID being past every entry.
        if (length > 0 && StreamValue.LastEntry(stream).Id > lastId)
            throw new AofFormatException($"The RDB gives stream '{KeyText}' last ID {lastId}, below its last entry {StreamValue.LastEntry(stream).Id}");
        stream->LastId = lastId;
        if (entriesAdded < 0)
        {
            // Before RDB 10 these were not kept: Redis derives them the same way.
            var first = new StreamIterator(stream, StreamId.Min, StreamId.Max);
            stream->FirstId = first.Next(out StreamEntry entry) ? entry.Id : default;
            stream->MaxDeletedId = default;
            stream->EntriesAdded = length;
        }
        else
        {
            stream->FirstId = firstId;
            stream->MaxDeletedId = maxDeletedId;
            stream->EntriesAdded = entriesAdded;
        }
    }

    public void StreamGroup(ReadOnlySpan<byte> name, StreamId lastDelivered, long entriesRead)
    {
        ConsumerGroups* groups = Stream->GroupsOrCreate();
        if (groups->Find(name) != null)
            throw new AofFormatException($"The RDB names consumer group '{Encoding.UTF8.GetString(name)}' of stream '{KeyText}' twice");
        if (entriesRead == long.MinValue)
            entriesRead = StreamLag.EntriesBefore(Stream, lastDelivered);
        _group = groups->Add(name, lastDelivered, entriesRead);
        _consumer = null;
    }

    public void StreamGroupPending(StreamId id, long deliveryTimeUnixMs, long deliveryCount)
    {
        if (_group->Pending->Find(id) != null)
            throw new AofFormatException($"The RDB lists pending entry {id} twice in a group of stream '{KeyText}'");
        PendingEntry* nack = _group->Pending->Insert(id);
        nack->DeliveryTime = deliveryTimeUnixMs;
        nack->DeliveryCount = deliveryCount;
    }

    public void StreamConsumer(ReadOnlySpan<byte> name, long seenTimeUnixMs)
    {
        if (_group->FindConsumer(name) != null)
            throw new AofFormatException($"The RDB names consumer '{Encoding.UTF8.GetString(name)}' twice in a group of stream '{KeyText}'");
        _consumer = _group->AddConsumer(name, seenTimeUnixMs);
    }

    public void StreamConsumerPending(StreamId id)
    {
        PendingEntry* nack = _group->Pending->Find(id);
        if (nack == null || nack->Consumer != null)
            throw new AofFormatException($"The RDB gives consumer of stream '{KeyText}' pending entry {id}, which its group does not hold or another consumer owns");
        nack->Consumer = _consumer;
        _consumer->Pending->Insert(id);
    }

    public void EndStream()
    {
        // Every pending entry must have its owner: the stream code relies on it.
        StreamValue* stream = Stream;
        if (stream->Groups != null)
            foreach (var (name, pointer) in stream->Groups->Sorted())
            {
                var group = (ConsumerGroup*)pointer;
                var cursor = group->Pending->From(StreamId.Min);
                for (PendingEntry* nack; (nack = group->Pending->At(cursor)) != null; group->Pending->MoveNext(ref cursor))
                    if (nack->Consumer == null)
                        throw new AofFormatException($"The RDB leaves pending entry {nack->Id} of group '{Encoding.UTF8.GetString(name)}' of stream '{KeyText}' without a consumer");
            }
        Entry* e = _building;
        _building = null;
        var database = keyspace.ShardOf(e->Hash).Databases[_database];
        e->ExpireAt = _buildingExpireAt;
        Entry** slot = database.LookupSlot(Entry.KeyOf(e), e->Hash, 0);
        if (slot != null)
            database.RemoveAt(slot);
        database.Add(e);
        Keys++;
    }

    private string KeyText => Encoding.UTF8.GetString(Entry.KeyOf(_building));

    /// <summary>Frees a collection a failed load left half built.</summary>
    public void Abandon()
    {
        if (_building != null)
            EntryStore.Free(_building);
        _building = null;
    }
}
