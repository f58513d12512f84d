using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Key lookups for the commands of one value type: they check the type (replying WRONGTYPE),
/// create the value when a write finds no key, and delete the key when a write empties it, as
/// Redis never keeps an empty hash, list, set or sorted set.
/// </summary>
internal static unsafe class TypedKeys
{
    /// <summary>
    /// The key's entry for a read (counting the hit or miss and touching it), or null: when the
    /// key is missing nothing is written; when it holds another type WRONGTYPE is replied and
    /// <paramref name="failed"/> is set.
    /// </summary>
    public static Entry* Read(ref CommandContext c, ReadOnlySpan<byte> key, Engine.ValueType type, out bool failed)
    {
        Entry* e = c.Read(key, out _);
        failed = e != null && e->Type != type;
        if (failed)
        {
            c.WrongType();
            return null;
        }
        return e;
    }

    /// <summary>The key's entry for a write that does not create it (Redis's lookupKeyWrite), or null as <see cref="Read"/>.</summary>
    public static Entry* Write(ref CommandContext c, ReadOnlySpan<byte> key, Engine.ValueType type, out bool failed)
    {
        Database db = c.Database(key, out uint hash);
        Entry* e = db.Lookup(key, hash, c.ExpireClockMs);
        failed = e != null && e->Type != type;
        if (failed)
        {
            c.WrongType();
            return null;
        }
        if (e != null)
            c.Touch(e);
        return e;
    }

    /// <summary>The key's entry for a write, created empty when missing; null only after WRONGTYPE.</summary>
    public static Entry* WriteOrCreate(ref CommandContext c, ReadOnlySpan<byte> key, Engine.ValueType type)
    {
        Database db = c.Database(key, out uint hash);
        Entry* e = db.Lookup(key, hash, c.ExpireClockMs);
        if (e == null)
        {
            e = Values.NewEntry(key, type);
            db.Add(e, hash);
            return e;
        }
        if (e->Type != type)
        {
            c.WrongType();
            return null;
        }
        c.Touch(e);
        return e;
    }

    /// <summary>
    /// The key's entry for a write that creates it unless told not to (XX, LPUSHX): null with
    /// <paramref name="failed"/> after WRONGTYPE, null without it when the key is missing and
    /// <paramref name="create"/> is false (the caller replies; nothing is logged).
    /// </summary>
    public static Entry* WriteOrCreate(ref CommandContext c, ReadOnlySpan<byte> key, Engine.ValueType type, bool create, out bool failed)
    {
        if (create)
        {
            Entry* created = WriteOrCreate(ref c, key, type);
            failed = created == null;
            return created;
        }
        Entry* e = Write(ref c, key, type, out failed);
        if (e == null && !failed)
            c.LogNothing();
        return e;
    }

    /// <summary>
    /// Replaces whatever <paramref name="key"/> holds with a value built by the caller (the STORE
    /// forms), without a TTL; an empty value deletes the key instead, as in Redis. The value is
    /// held in <paramref name="form"/> (a packed block, or the type's structure).
    /// </summary>
    public static void Store(ref CommandContext c, ReadOnlySpan<byte> key, Engine.ValueType type, void* structure, long count, ValueForm form = ValueForm.Structure)
    {
        Database db = c.Database(key, out uint hash);
        db.Delete(key, hash, c.ExpireClockMs);
        Entry* e = Values.NewEntry(key, type, structure);
        e->Form = form;
        if (count == 0)
        {
            EntryStore.Free(e);
            return;
        }
        db.Add(e, hash);
    }

    /// <summary>Publishes a keyspace event for <paramref name="key"/> in the client's database (commands that name their own events).</summary>
    public static void Notify(ref CommandContext c, Engine.KeyspaceEventTypes type, ReadOnlySpan<byte> eventName, ReadOnlySpan<byte> key)
        => c.Effects.Notify(type, eventName, key, c.Client.DatabaseIndex);

    /// <summary>
    /// SREM and ZREM: removes the members named from argument 2 on, deletes the key once it is
    /// empty, replies how many were removed (and logs nothing when none was).
    /// </summary>
    public static void RemoveMembers(ref CommandContext c, Engine.ValueType type, delegate*<Entry*, ReadOnlySpan<byte>, bool> remove)
    {
        Entry* e = Write(ref c, c.Arg(1), type, out bool failed);
        if (failed)
            return;
        long removed = 0;
        if (e != null)
        {
            for (int i = 2; i < c.ArgCount && Values.Length(e) > 0; i++)
                if (remove(e, c.Arg(i)))
                    removed++;
            DeleteIfEmpty(ref c, c.Arg(1), e);
        }
        if (removed == 0)
            c.LogNothing();
        c.Reply.Integer(removed);
    }

    /// <summary>Deletes the key when its value has no elements left.</summary>
    public static void DeleteIfEmpty(ref CommandContext c, ReadOnlySpan<byte> key, Entry* e)
    {
        if (Values.Length(e) != 0)
            return;
        Database db = c.Database(key, out uint hash);
        db.Delete(key, hash, c.ExpireClockMs);
        c.Effects.Defer(Engine.KeyspaceEventTypes.Generic, "del"u8, key, c.Client.DatabaseIndex);
    }
}
