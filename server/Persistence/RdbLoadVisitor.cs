using Diagnostics.Server.DataTypes;
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

    /// <summary>Frees a collection a failed load left half built.</summary>
    public void Abandon()
    {
        if (_building != null)
            EntryStore.Free(_building);
        _building = null;
    }
}
