using Diagnostics.Server.Engine;
using Diagnostics.Server.Persistence;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// DUMP and RESTORE: a key's value as an RDB-encoded payload (Redis 7.0's, so payloads move
/// between this server and redis-server both ways) and a key created from one.
/// </summary>
public static unsafe class DumpCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "generic";
        const string serialization = "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).";
        table.Add(new CommandSpec("dump", 2, ReadOnly, 1, 1, 1, Dump, g,
            "Returns a serialized representation of the value stored at a key.", "2.6.0", serialization)
        { Arguments = [new("key", "key")] });
        table.Add(new CommandSpec("restore", -4, Write | DenyOom, 1, 1, 1, Restore, g,
            "Creates a key from the serialized representation of a value.", "2.6.0",
            "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).")
        {
            Arguments = [new("key", "key"), new("ttl", "integer"), new("serialized-value", "string"),
                new("replace", "pure-token", Optional: true, Token: "REPLACE"),
                new("absttl", "pure-token", Optional: true, Token: "ABSTTL"),
                new("seconds", "integer", Optional: true, Token: "IDLETIME"),
                new("frequency", "integer", Optional: true, Token: "FREQ")],
        });
    }

    /// <summary>The key's payload, or a null reply when it does not exist (the lookup touches it, as Redis's does).</summary>
    private static void Dump(ref CommandContext c)
    {
        Entry* e = c.Read(c.Arg(1), out var database);
        if (e == null)
        {
            c.Reply.Null();
            return;
        }
        // The key's shard keeps the writer (held now, so no one else touches it).
        var shard = database.Shard!;
        var options = RdbWriteOptions.From(c.Server.Config);
        var writer = shard.DumpWriter;
        if (writer is null || writer.Options != options)
        {
            writer?.Dispose();
            shard.DumpWriter = writer = new RdbWriter(options);
        }
        DumpPayload.Write(writer, e);
        c.Reply.Bulk(writer.Written);
        writer.Clear();
        // A large value's buffer goes back rather than staying with the thread.
        if (writer.CapacityBytes > RetainedBytes)
        {
            writer.Dispose();
            shard.DumpWriter = null;
        }
    }

    private const int RetainedBytes = 64 * 1024;

    /// <summary>
    /// Redis 7.0's restoreCommand, its checks in its order: the options, BUSYKEY, the TTL, the
    /// payload's version and checksum, its value. A TTL already past deletes the key REPLACE named
    /// instead (propagated as DEL, as Redis does) or creates nothing; a relative TTL is propagated
    /// as the absolute time with ABSTTL, so a replay does not push the deadline out.
    /// </summary>
    private static void Restore(ref CommandContext c)
    {
        bool replace = false, absoluteTtl = false;
        long idleSeconds = -1, frequency = -1;
        for (int i = 4; i < c.ArgCount; i++)
        {
            bool more = i + 1 < c.ArgCount;
            if (c.ArgIs(i, "replace"u8))
            {
                replace = true;
            }
            else if (c.ArgIs(i, "absttl"u8))
            {
                absoluteTtl = true;
            }
            else if (c.ArgIs(i, "idletime"u8) && more && frequency == -1)
            {
                if (!c.TryInt64(i + 1, out idleSeconds))
                    return;
                if (idleSeconds < 0)
                {
                    c.Error("ERR Invalid IDLETIME value, must be >= 0");
                    return;
                }
                i++;
            }
            else if (c.ArgIs(i, "freq"u8) && more && idleSeconds == -1)
            {
                if (!c.TryInt64(i + 1, out frequency))
                    return;
                if (frequency is < 0 or > 255)
                {
                    c.Error("ERR Invalid FREQ value, must be >= 0 and <= 255");
                    return;
                }
                i++;
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }
        ReadOnlySpan<byte> key = c.Arg(1);
        Database db = c.Database(key, out uint hash);
        if (!replace && db.Lookup(key, hash, c.ExpireClockMs) != null)
        {
            c.Error("BUSYKEY Target key name already exists.");
            return;
        }
        if (!c.TryInt64(2, out long ttl))
            return;
        if (ttl < 0)
        {
            c.Error("ERR Invalid TTL value, must be >= 0");
            return;
        }
        ReadOnlySpan<byte> payload = c.Arg(3);
        if (!DumpPayload.Verify(payload))
        {
            c.Error(DumpPayload.WrongVersionOrChecksum);
            return;
        }
        Entry* e = DumpPayload.Read(payload, key, c.Server.Config);
        if (e == null)
        {
            c.Error(DumpPayload.BadDataFormat);
            return;
        }

        // Redis's dbDelete: the old value goes whether or not its time has passed.
        bool deleted = false;
        if (replace && db.Keys.FindSlot(key, hash) is var slot && slot != null)
        {
            db.RemoveAt(slot);
            deleted = true;
        }
        if (ttl != 0 && !absoluteTtl)
            ttl = unchecked(ttl + c.NowMs); // an overflow reads as long past, as in Redis
        // Already expired (never while the AOF replays, as Redis's checkAlreadyExpired when loading).
        if (ttl != 0 && ttl <= c.ExpireClockMs)
        {
            EntryStore.Free(e);
            if (deleted)
            {
                StringCommands.LogKeyCommand(ref c, "DEL"u8, key);
                c.Effects.Notify(KeyspaceEventTypes.Generic, "del"u8, key, c.Client.DatabaseIndex);
            }
            else
            {
                c.LogNothing();
            }
            c.Reply.Ok();
            return;
        }

        db.Add(e, hash, ttl);
        SetAccessStatistics(e, c.Server.Config.MaxMemoryPolicy, idleSeconds, frequency);
        if (ttl != 0 && !absoluteTtl && c.LogAs(c.ArgCount + 1) is { } log)
        {
            for (int i = 0; i < c.ArgCount; i++)
            {
                if (i == 2)
                    log.Argument(ttl);
                else
                    log.Argument(c.Arg(i));
            }
            log.Argument("ABSTTL"u8);
            log.EndCommand();
        }
        c.Effects.Notify(KeyspaceEventTypes.Generic, "restore"u8, key, c.Client.DatabaseIndex);
        c.Reply.Ok();
    }

    /// <summary>
    /// Redis's objectSetLRUOrLFU: FREQ sets the LFU counter under an LFU policy, IDLETIME backdates
    /// the last access under any other; the option that does not fit the policy is ignored.
    /// </summary>
    private static void SetAccessStatistics(Entry* e, EvictionPolicy policy, long idleSeconds, long frequency)
    {
        if ((policy & EvictionPolicy.Lfu) != 0)
        {
            if (frequency < 0)
                return;
            e->Frequency = (byte)frequency;
            e->AccessClock = LruClock.Now; // the counter's decay starts now
        }
        else if (idleSeconds >= 0)
        {
            // Rounded up to the clock's tick so OBJECT IDLETIME reads the seconds given; capped at
            // half the clock's range (about a year), which a wrapping clock still reads as past.
            long ticks = idleSeconds >= int.MaxValue ? int.MaxValue : Math.Min((idleSeconds * LruClock.TicksPerMinute + 59) / 60, int.MaxValue);
            e->AccessClock = unchecked(LruClock.Now - (uint)ticks);
        }
    }
}
