using Diagnostics.Server.Engine;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Whole-database commands: DBSIZE, FLUSHDB, FLUSHALL and SWAPDB. Each numbered database is split
/// over every shard, so these run with all shards held and act on each shard's part.
/// </summary>
public static class DatabaseCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "server";
        CommandArgument flushType = new("flush-type", "oneof", Optional: true, Children: [
            new("async", "pure-token", Token: "ASYNC"), new("sync", "pure-token", Token: "SYNC")]);
        table.Add(new CommandSpec("dbsize", 1, ReadOnly | Fast | AllShards, 0, 0, 0, DbSize, g, "Returns the number of keys in the database."));
        table.Add(new CommandSpec("flushdb", -1, Write | AllShards, 0, 0, 0, FlushDb, g, "Removes all keys from the current database.", "1.0.0",
            "O(N) where N is the number of keys in the selected database")
        { Arguments = [flushType] });
        table.Add(new CommandSpec("flushall", -1, Write | AllShards, 0, 0, 0, FlushAll, g, "Removes all keys from all databases.", "1.0.0",
            "O(N) where N is the total number of keys in all databases")
        { Arguments = [flushType] });
        table.Add(new CommandSpec("swapdb", 3, Write | Fast | AllShards, 0, 0, 0, SwapDb, g, "Swaps two Redis databases.", "4.0.0",
            "O(N) where N is the count of clients watching or blocking on keys from both databases.")
        { Arguments = [new("index1", "integer"), new("index2", "integer")] });
    }

    /// <summary>Keys in the selected database, counting those whose TTL passed but were not yet removed (as Redis).</summary>
    private static void DbSize(ref CommandContext c) => c.Reply.Integer(c.Keyspace.KeyCount(c.Client.DatabaseIndex));

    private static void FlushDb(ref CommandContext c)
    {
        if (!TryParseFlushMode(ref c, out bool async))
            return;
        foreach (var shard in c.Keyspace.Shards)
            Flush(shard.Databases[c.Client.DatabaseIndex], async);
        c.Reply.Ok();
    }

    private static void FlushAll(ref CommandContext c)
    {
        if (!TryParseFlushMode(ref c, out bool async))
            return;
        foreach (var shard in c.Keyspace.Shards)
            foreach (var db in shard.Databases)
                Flush(db, async);
        c.Reply.Ok();
    }

    /// <summary>
    /// Empties one shard's part of a database. ASYNC detaches the entries in one sweep and hands
    /// them to the lazy-free thread, so the command's cost does not grow with the values' size.
    /// </summary>
    private static unsafe void Flush(Database db, bool async)
    {
        if (!async || db.Count == 0)
        {
            db.Clear();
            return;
        }
        long count = db.Count;
        LazyFree.FreeChain(db.DetachAll(), count);
    }

    /// <summary>[ASYNC | SYNC]; without either, lazyfree-lazy-user-flush decides, as in Redis 7.</summary>
    private static bool TryParseFlushMode(ref CommandContext c, out bool async)
    {
        async = false;
        if (c.ArgCount > 2)
        {
            c.SyntaxError();
            return false;
        }
        if (c.ArgCount == 1)
        {
            async = string.Equals(c.Server.Config.Find("lazyfree-lazy-user-flush")?.Get(), "yes", StringComparison.OrdinalIgnoreCase);
            return true;
        }
        if (c.ArgIs(1, "async"u8))
            async = true;
        else if (!c.ArgIs(1, "sync"u8))
        {
            c.SyntaxError();
            return false;
        }
        return true;
    }

    /// <summary>
    /// Swaps two databases in every shard. Clients address databases by number, so a client that
    /// selected one of them sees the other's data from its next command on.
    /// </summary>
    private static void SwapDb(ref CommandContext c)
    {
        if (!TryInt32(ref c, 1, "ERR invalid first DB index", out int first) || !TryInt32(ref c, 2, "ERR invalid second DB index", out int second))
            return;
        int databases = c.Keyspace.DatabaseCount;
        if (first < 0 || first >= databases || second < 0 || second >= databases)
        {
            c.Error(Errors.DbIndexOutOfRange);
            return;
        }
        if (first != second)
        {
            foreach (var shard in c.Keyspace.Shards)
            {
                Database[] dbs = shard.Databases;
                (dbs[first], dbs[second]) = (dbs[second], dbs[first]);
                dbs[first].Index = first;
                dbs[second].Index = second;
                Database.AfterSwap(dbs[first], dbs[second], c.ExpireClockMs);
            }
        }
        c.Reply.Ok();
    }

    private static bool TryInt32(ref CommandContext c, int argument, string error, out int value)
    {
        value = 0;
        if (!Protocol.NumberFormat.TryParseInt64(c.Arg(argument), out long parsed) || parsed < int.MinValue || parsed > int.MaxValue)
        {
            c.Error(error);
            return false;
        }
        value = (int)parsed;
        return true;
    }
}
