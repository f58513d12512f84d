namespace Diagnostics.Server.Engine;

/// <summary>
/// One key with a TTL in its database's volatile-key vector: the entry and its absolute expiry in
/// Unix milliseconds. The expiry lives here rather than in every entry because most keys have
/// none; the entry's <see cref="Entry.VolatileIndex"/> finds it.
/// </summary>
internal unsafe struct VolatileKey
{
    public Entry* Entry;
    public long ExpireAt;
}
