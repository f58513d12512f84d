using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Commands;

/// <summary>Key lookups shared by the generic key commands.</summary>
internal static unsafe class KeyLookup
{
    /// <summary>
    /// Finds a live key for a read that is not an access of the value (TYPE, EXISTS, TTL, OBJECT):
    /// counts the keyspace hit or miss but leaves the access clock and LFU counter alone, as
    /// Redis's LOOKUP_NOTOUCH does.
    /// </summary>
    public static Entry* Peek(ref CommandContext c, ReadOnlySpan<byte> key) => Peek(ref c, key, out _);

    /// <summary>As <see cref="Peek(ref CommandContext, ReadOnlySpan{byte})"/>, also giving the key's database (which holds its TTL).</summary>
    public static Entry* Peek(ref CommandContext c, ReadOnlySpan<byte> key, out Database database)
    {
        Entry** slot = c.LookupForRead(key, out database, out _, touch: false);
        return slot == null ? null : *slot;
    }

    /// <summary>
    /// Parses a database number argument the way Redis's getIntFromObjectOrReply does (a 32-bit
    /// integer, else <paramref name="notIntegerError"/>), then checks it names a database.
    /// </summary>
    public static bool TryDatabaseIndex(ref CommandContext c, int argument, out int index, string notIntegerError = Errors.NotInteger)
    {
        index = 0;
        if (!Protocol.NumberFormat.TryParseInt64(c.Arg(argument), out long value) || value < int.MinValue || value > int.MaxValue)
        {
            c.Error(notIntegerError);
            return false;
        }
        if (value < 0 || value >= c.Keyspace.DatabaseCount)
        {
            c.Error(Errors.DbIndexOutOfRange);
            return false;
        }
        index = (int)value;
        return true;
    }
}
