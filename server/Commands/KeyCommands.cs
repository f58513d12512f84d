using Diagnostics.Server.Engine;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Generic keyspace commands on named keys: DEL, UNLINK, EXISTS, TYPE, TOUCH, RENAME, RENAMENX,
/// COPY, MOVE. Keys on different shards are routed as one coordinated command, so RENAME and COPY
/// between shards are atomic without anything here knowing about it.
/// </summary>
public static unsafe class KeyCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "generic";
        CommandArgument[] keys = [new("key", "key", Multiple: true)];
        CommandArgument[] renameArgs = [new("key", "key"), new("newkey", "key")];
        table.Add(new CommandSpec("del", -2, Write, 1, -1, 1, Del, g, "Deletes one or more keys.", "1.0.0", "O(N)")
        { Arguments = keys });
        table.Add(new CommandSpec("unlink", -2, Write | Fast, 1, -1, 1, Del, g,
            "Asynchronously deletes one or more keys.", "4.0.0", "O(1) for each key removed regardless of its size.")
        { Arguments = keys });
        table.Add(new CommandSpec("exists", -2, ReadOnly | Fast, 1, -1, 1, Exists, g, "Determines whether one or more keys exist.", "1.0.0", "O(N)")
        { Arguments = keys });
        table.Add(new CommandSpec("type", 2, ReadOnly | Fast, 1, 1, 1, Type, g, "Determines the type of value stored at a key.")
        { Arguments = [new("key", "key")] });
        table.Add(new CommandSpec("touch", -2, ReadOnly | Fast, 1, -1, 1, Touch, g,
            "Returns the number of existing keys out of those specified after updating the time they were last accessed.", "3.2.1", "O(N)")
        { Arguments = keys });
        table.Add(new CommandSpec("rename", 3, Write, 1, 2, 1, Rename, g, "Renames a key and overwrites the destination.")
        { Arguments = renameArgs });
        table.Add(new CommandSpec("renamenx", 3, Write | Fast, 1, 2, 1, RenameNx, g, "Renames a key only when the target key name doesn't exist.")
        { Arguments = renameArgs });
        table.Add(new CommandSpec("copy", -3, Write | DenyOom, 1, 2, 1, Copy, g, "Copies the value of a key to a new key.", "6.2.0",
            "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.")
        {
            WrittenKey = 2,
            Arguments = [new("source", "key"), new("destination", "key"),
                new("destination-db", "integer", Optional: true, Token: "DB"),
                new("replace", "pure-token", Optional: true, Token: "REPLACE")],
        });
        table.Add(new CommandSpec("move", 3, Write | Fast, 1, 1, 1, Move, g, "Moves a key to another database.")
        { Arguments = [new("key", "key"), new("db", "integer")] });
    }

    /// <summary>
    /// DEL and UNLINK. A string value is one block, which Redis also frees synchronously on UNLINK
    /// (its lazy-free effort is 1), so both commands free in place.
    /// </summary>
    private static void Del(ref CommandContext c)
    {
        long deleted = 0;
        for (int i = 1; i < c.ArgCount; i++)
        {
            var key = c.Arg(i);
            var db = c.Database(key, out uint hash);
            if (db.Delete(key, hash, c.ExpireClockMs))
            {
                deleted++;
                c.Effects.Notify(Engine.KeyspaceEventTypes.Generic, "del"u8, key, c.Client.DatabaseIndex);
            }
        }
        c.Reply.Integer(deleted);
        if (deleted == 0)
            c.LogNothing();
    }

    /// <summary>Counts every argument that names a live key, so a key given twice counts twice.</summary>
    private static void Exists(ref CommandContext c)
    {
        long found = 0;
        for (int i = 1; i < c.ArgCount; i++)
            if (KeyLookup.Peek(ref c, c.Arg(i)) != null)
                found++;
        c.Reply.Integer(found);
    }

    private static void Type(ref CommandContext c)
    {
        Entry* e = KeyLookup.Peek(ref c, c.Arg(1));
        c.Reply.SimpleString(e == null ? "none"u8 : ValueTypeNames.Of(e->Type));
    }

    /// <summary>Counts the live keys and marks them accessed, even for a CLIENT NO-TOUCH client (as Redis 7.2).</summary>
    private static void Touch(ref CommandContext c)
    {
        long touched = 0;
        for (int i = 1; i < c.ArgCount; i++)
        {
            Entry* e = KeyLookup.Peek(ref c, c.Arg(i));
            if (e == null)
                continue;
            EntryAccess.Record(e);
            touched++;
        }
        c.Reply.Integer(touched);
    }

    private static void Rename(ref CommandContext c) => Rename(ref c, onlyIfAbsent: false);

    private static void RenameNx(ref CommandContext c) => Rename(ref c, onlyIfAbsent: true);

    /// <summary>
    /// Moves the source entry under the new name, keeping its value, TTL and access statistics.
    /// The two keys may be on different shards: the entry is detached from one database and added
    /// to the other while both shards are held.
    /// </summary>
    private static void Rename(ref CommandContext c, bool onlyIfAbsent)
    {
        ReadOnlySpan<byte> source = c.Arg(1), target = c.Arg(2);
        Database sourceDb = c.Database(source, out uint sourceHash);
        if (sourceDb.Lookup(source, sourceHash, c.ExpireClockMs) == null)
        {
            c.Error(Errors.NoSuchKey);
            return;
        }
        if (source.SequenceEqual(target))
        {
            if (onlyIfAbsent)
                c.Reply.Integer(0);
            else
                c.Reply.Ok();
            return;
        }
        Database targetDb = c.Database(target, out uint targetHash);
        if (targetDb.Lookup(target, targetHash, c.ExpireClockMs) != null)
        {
            if (onlyIfAbsent)
            {
                c.Reply.Integer(0);
                c.LogNothing();
                return;
            }
            targetDb.Delete(target, targetHash, c.ExpireClockMs);
        }
        // Slots go stale on any table operation (a lookup may take a rehash step), so the source
        // slot is found only now, right before it is unlinked.
        Entry** slot = sourceDb.Keys.FindSlot(source, sourceHash);
        Entry* moved = EntryCopier.Rekey(sourceDb.Detach(slot, out long expireAt), target);
        c.Effects.Notify(Engine.KeyspaceEventTypes.Generic, "rename_from"u8, source, c.Client.DatabaseIndex);
        targetDb.Add(moved, targetHash, expireAt);
        c.Effects.Notify(Engine.KeyspaceEventTypes.Generic, "rename_to"u8, target, c.Client.DatabaseIndex);
        if (onlyIfAbsent)
            c.Reply.Integer(1);
        else
            c.Reply.Ok();
    }

    private static void Copy(ref CommandContext c)
    {
        int targetIndex = c.Client.DatabaseIndex;
        bool replace = false;
        for (int i = 3; i < c.ArgCount; i++)
        {
            if (c.ArgIs(i, "replace"u8))
            {
                replace = true;
            }
            else if (c.ArgIs(i, "db"u8) && i + 1 < c.ArgCount)
            {
                if (!KeyLookup.TryDatabaseIndex(ref c, i + 1, out targetIndex))
                    return;
                i++;
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }
        ReadOnlySpan<byte> source = c.Arg(1), target = c.Arg(2);
        if (targetIndex == c.Client.DatabaseIndex && source.SequenceEqual(target))
        {
            c.Error(Errors.SourceDestinationSame);
            return;
        }
        Entry* original = c.Read(source, out Database sourceDb);
        if (original == null)
        {
            c.Reply.Integer(0);
            c.LogNothing();
            return;
        }
        uint targetHash = Keyspace.Hash(target);
        Database targetDb = c.Keyspace.ShardOf(targetHash).Databases[targetIndex];
        if (targetDb.Lookup(target, targetHash, c.ExpireClockMs) != null)
        {
            if (!replace)
            {
                c.Reply.Integer(0);
                c.LogNothing();
                return;
            }
            targetDb.Delete(target, targetHash, c.ExpireClockMs);
        }
        targetDb.Add(EntryCopier.Clone(original, target), targetHash, sourceDb.ExpireAtOf(original));
        c.Reply.Integer(1);
    }

    /// <summary>
    /// Moves a key to another database. Databases are numbered alike in every shard and the key's
    /// shard depends only on its name, so this stays within one shard: detach here, add there.
    /// </summary>
    private static void Move(ref CommandContext c)
    {
        if (!KeyLookup.TryDatabaseIndex(ref c, 2, out int targetIndex))
            return;
        if (targetIndex == c.Client.DatabaseIndex)
        {
            c.Error(Errors.SourceDestinationSame);
            return;
        }
        ReadOnlySpan<byte> key = c.Arg(1);
        Database sourceDb = c.Database(key, out uint hash);
        Database targetDb = c.Keyspace.ShardOf(hash).Databases[targetIndex];
        if (sourceDb.Lookup(key, hash, c.ExpireClockMs) == null || targetDb.Lookup(key, hash, c.ExpireClockMs) != null)
        {
            c.Reply.Integer(0);
            c.LogNothing();
            return;
        }
        Entry** slot = sourceDb.Keys.FindSlot(key, hash);
        targetDb.Add(sourceDb.Detach(slot, out long expireAt), hash, expireAt);
        // The key appears in the target database: who watches it there sees a change, as in
        // Redis (the source database's watchers are touched like any written key's).
        targetDb.Watched?.Touch(key);
        c.Effects.Notify(Engine.KeyspaceEventTypes.Generic, "move_from"u8, key, c.Client.DatabaseIndex);
        c.Effects.Notify(Engine.KeyspaceEventTypes.Generic, "move_to"u8, key, targetIndex);
        c.Reply.Integer(1);
    }
}
