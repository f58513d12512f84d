using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>Puts what an RDB base file holds into a keyspace (the caller holds every shard).</summary>
internal sealed unsafe class RdbLoadVisitor(Keyspace keyspace) : IRdbVisitor
{
    private int _database;

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

    public void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) { }
}
