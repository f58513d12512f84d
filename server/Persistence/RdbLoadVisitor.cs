using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>Puts what an RDB base file holds into a keyspace (the caller holds every shard).</summary>
// Collections and streams are built detached, put in the keyspace once complete. A member or
// field twice in one value is corrupt input for Redis (it refuses the file); here the later one
// wins, as the AOF commands replaying the same data would have it.
internal sealed unsafe class RdbLoadVisitor(Keyspace keyspace, Configuration.ServerConfig config)
    : RdbBuildingVisitor(new RdbEntryBuilder(strict: false, problem => new AofFormatException(problem), config))
{
    private int _database;

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

    public override void SelectDatabase(int index)
    {
        if (index < 0 || index >= keyspace.DatabaseCount)
            throw new AofFormatException($"The RDB base file selects database {index}, but the server has {keyspace.DatabaseCount} (databases setting)");
        _database = index;
    }

    public override void ResizeDatabase(long keys, long expires) { }

    public override void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs)
    {
        if (DropsExpired(expireAtUnixMs))
            return;
        uint hash = Keyspace.Hash(key);
        // Nothing expires while loading; a key loaded past its time goes at its first access or
        // the expiry cycle, as the keys the AOF commands create.
        keyspace.ShardOf(hash).Databases[_database].SetString(key, hash, value, expireAtUnixMs, 0);
        Keys++;
    }

    public override void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) { }

    /// <summary>The function libraries read, for the caller to load once the keys are in.</summary>
    public List<byte[]> FunctionLibraries { get; } = [];

    public override void FunctionLibrary(ReadOnlySpan<byte> code) => FunctionLibraries.Add(code.ToArray());

    /// <summary>
    /// Adds a built value (none: an empty collection, which Redis skips when loading as it cannot
    /// exist); a key twice in the file: the later one wins, as for strings.
    /// </summary>
    protected override void Built(Entry* e, long expireAt)
    {
        if (e == null)
            return;
        if (DropsExpired(expireAt))
        {
            EntryStore.Free(e);
            return;
        }
        uint hash = Keyspace.Hash(Entry.KeyOf(e));
        var database = keyspace.ShardOf(hash).Databases[_database];
        Entry** slot = database.LookupSlot(Entry.KeyOf(e), hash, 0);
        if (slot != null)
            database.RemoveAt(slot);
        database.Add(e, hash, expireAt);
        Keys++;
    }

}
