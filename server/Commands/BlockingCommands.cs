using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Network;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX and BZMPOP. Each first tries at
/// once, exactly like its non-blocking form. Finding nothing, it queues the client on its keys
/// (<see cref="BlockedClient"/>) and writes no reply; the connection then waits. The write that
/// later creates one of the keys serves the oldest waiting client on the spot, through the same
/// code, and every pop is logged as its non-blocking form so an AOF replay never blocks. Inside
/// MULTI they never block: an empty result is answered as a timeout, as in Redis.
/// </summary>
public static unsafe class BlockingCommands
{
    public static void Register(CommandTable table)
    {
        CommandArgument keys = new("key", "key", Multiple: true);
        CommandArgument timeout = new("timeout", "double");
        CommandArgument whereFrom = new("wherefrom", "oneof", Children: [new("left", "pure-token", Token: "LEFT"), new("right", "pure-token", Token: "RIGHT")]);
        CommandArgument whereTo = new("whereto", "oneof", Children: [new("left", "pure-token", Token: "LEFT"), new("right", "pure-token", Token: "RIGHT")]);
        const string popComplexity = "O(N) where N is the number of provided keys.";
        const string zpopComplexity = "O(log(N)) with N being the number of elements in the sorted set.";

        table.Add(new CommandSpec("blpop", -3, Write | Blocking | NoScript, 1, -2, 1, BLPop, "list",
            "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "2.0.0", popComplexity)
        { Arguments = [keys, timeout] });
        table.Add(new CommandSpec("brpop", -3, Write | Blocking | NoScript, 1, -2, 1, BRPop, "list",
            "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "2.0.0", popComplexity)
        { Arguments = [keys, timeout] });
        table.Add(new CommandSpec("blmove", 6, Write | DenyOom | Blocking | NoScript, 1, 2, 1, BLMove, "list",
            "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", "6.2.0")
        { Arguments = [new("source", "key"), new("destination", "key"), whereFrom, whereTo, timeout] });
        table.Add(new CommandSpec("brpoplpush", 4, Write | DenyOom | Blocking | NoScript, 1, 2, 1, BRPopLPush, "list",
            "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", "2.2.0")
        { Arguments = [new("source", "key"), new("destination", "key"), timeout] });
        table.Add(new CommandSpec("blmpop", -5, Write | Blocking, 0, 0, 0, BLMPop, "list",
            "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "7.0.0",
            "O(N+M) where N is the number of provided keys and M is the number of elements returned.")
        {
            KeyCountIndex = 2,
            Arguments = [timeout, new("numkeys", "integer"), keys, whereFrom, new("count", "integer", Optional: true, Token: "COUNT")],
        });
        table.Add(new CommandSpec("bzpopmin", -3, Write | Fast | Blocking | NoScript, 1, -2, 1, BZPopMin, "sorted-set",
            "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", "5.0.0", zpopComplexity)
        { Arguments = [keys, timeout] });
        table.Add(new CommandSpec("bzpopmax", -3, Write | Fast | Blocking | NoScript, 1, -2, 1, BZPopMax, "sorted-set",
            "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", "5.0.0", zpopComplexity)
        { Arguments = [keys, timeout] });
        table.Add(new CommandSpec("bzmpop", -5, Write | Blocking, 0, 0, 0, BZMPop, "sorted-set",
            "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", "7.0.0",
            "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
        {
            KeyCountIndex = 2,
            Arguments = [timeout, new("numkeys", "integer"), keys,
                new("where", "oneof", Children: [new("min", "pure-token", Token: "MIN"), new("max", "pure-token", Token: "MAX")]),
                new("count", "integer", Optional: true, Token: "COUNT")],
        });
    }

    /// <summary>Parses a timeout in seconds (decimals allowed) as Redis does; 0 waits for ever. The result is a unix-ms deadline, 0 for none.</summary>
    private static bool TryDeadline(ref CommandContext c, int index, out long deadline)
    {
        deadline = 0;
        if (!NumberFormat.TryParseDouble(c.Arg(index), out double seconds) || double.IsInfinity(seconds))
        {
            c.Error("ERR timeout is not a float or out of range");
            return false;
        }
        if (seconds < 0)
        {
            c.Error("ERR timeout is negative");
            return false;
        }
        if (seconds == 0)
            return true;
        double ms = Math.Ceiling(seconds * 1000);
        if (ms > long.MaxValue / 2 - c.NowMs)
        {
            c.Error("ERR timeout is out of range");
            return false;
        }
        deadline = c.NowMs + Math.Max(1, (long)ms);
        return true;
    }

    /// <summary>Queues the client on the keys at arguments [from, to] and leaves the reply for later.</summary>
    internal static void Block(ref CommandContext c, int from, int to, Engine.ValueType wanted, long deadline, BlockedServe serve,
        bool timeoutIsNullBulk = false, BlockedReady? ready = null, object? state = null)
    {
        var waiter = new BlockedClient(c.Client, c.Client.CurrentCommandIndex, serve, wanted, deadline, timeoutIsNullBulk, ready, state);
        for (int k = from; k <= to; k++)
            c.Database(c.Arg(k), out _).BlockOn(c.Arg(k), waiter);
        c.Client.PendingBlock = waiter;
        c.LogNothing();
    }

    /// <summary>
    /// The blocking command as a context of its own client, to be served by the holder of
    /// <paramref name="db"/>'s shard, right after the write that made its key ready: it reports to
    /// that write's effects scope, so its pop is propagated after the write, into the same buffer.
    /// </summary>
    internal static CommandContext ContextOf(BlockedClient waiter, Database db)
    {
        var client = (ClientConnection)waiter.Owner;
        var server = client.Server;
        var effects = db.Effects!;
        return new CommandContext(server, client, server.Keyspace, client.BatchArgs(waiter.CommandIndex), client.SpecAt(waiter.CommandIndex)!,
            DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), effects, records: effects.Propagation as AofRecordBuffer);
    }

    // ---- BLPOP / BRPOP / BZPOPMIN / BZPOPMAX ----------------------------------------------

    private static void BLPop(ref CommandContext c) => PopFirst(ref c, Engine.ValueType.List);
    private static void BRPop(ref CommandContext c) => PopFirst(ref c, Engine.ValueType.List);
    private static void BZPopMin(ref CommandContext c) => PopFirst(ref c, Engine.ValueType.SortedSet);
    private static void BZPopMax(ref CommandContext c) => PopFirst(ref c, Engine.ValueType.SortedSet);

    /// <summary>BLPOP and BZPOPMIN pop from the head or the lowest score; BRPOP and BZPOPMAX from the other end.</summary>
    private static bool FromFirstEnd(CommandSpec spec) => spec.Name is "blpop" or "bzpopmin";

    /// <summary>key [key ...] timeout: pops from the first key that holds something, else blocks on them all.</summary>
    private static void PopFirst(ref CommandContext c, Engine.ValueType type)
    {
        if (!TryDeadline(ref c, c.ArgCount - 1, out long deadline))
            return;
        for (int k = 1; k < c.ArgCount - 1; k++)
        {
            Entry* e = TypedKeys.Write(ref c, c.Arg(k), type, out bool failed);
            if (failed)
                return;
            if (e != null)
            {
                PopAndReply(ref c, c.Arg(k), e);
                return;
            }
        }
        if (c.Client.InTransaction)
        {
            c.LogNothing();
            c.Reply.NullArray();
            return;
        }
        Block(ref c, 1, c.ArgCount - 2, type, deadline, ServePop);
    }

    private static bool ServePop(BlockedClient waiter, Database db, ReadOnlySpan<byte> key, Entry* e)
    {
        var c = ContextOf(waiter, db);
        PopAndReply(ref c, key, e);
        return true;
    }

    private static void PopAndReply(ref CommandContext c, ReadOnlySpan<byte> key, Entry* e)
    {
        bool first = FromFirstEnd(c.Spec);
        if (e->Type == Engine.ValueType.List)
            PopListAndReply(ref c, key, e, head: first);
        else
            ZPopAndReply(ref c, key, e, max: !first);
    }

    /// <summary>[key, element], logged as LPOP/RPOP key.</summary>
    private static void PopListAndReply(ref CommandContext c, ReadOnlySpan<byte> key, Entry* e, bool head)
    {
        c.Reply.ArrayHeader(2);
        c.Reply.Bulk(key);
        ListCommands.PopOne(ref c, Values.List(e), head);
        TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.List, head ? "lpop"u8 : "rpop"u8, key);
        TypedKeys.DeleteIfEmpty(ref c, key, e);
        if (c.LogAs(2) is { } log)
        {
            log.Argument(head ? "LPOP"u8 : "RPOP"u8);
            log.Argument(key);
            log.EndCommand();
        }
    }

    // ---- BLMOVE / BRPOPLPUSH -------------------------------------------------------------

    private static void BLMove(ref CommandContext c)
    {
        if (!ListCommands.TryParseEnd(ref c, 3, out bool fromHead) || !ListCommands.TryParseEnd(ref c, 4, out bool toHead)
            || !TryDeadline(ref c, 5, out long deadline))
            return;
        MoveOrBlock(ref c, fromHead, toHead, deadline);
    }

    private static void BRPopLPush(ref CommandContext c)
    {
        if (TryDeadline(ref c, 3, out long deadline))
            MoveOrBlock(ref c, fromHead: false, toHead: true, deadline);
    }

    private static void MoveOrBlock(ref CommandContext c, bool fromHead, bool toHead, long deadline)
    {
        Entry* source = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        if (source != null || c.Client.InTransaction)
        {
            // Present (moved at once), or in MULTI: LMOVE's own null is the timeout reply there.
            ListCommands.Move(ref c, fromHead, toHead, logAsLMove: true);
            return;
        }
        Block(ref c, 1, 1, Engine.ValueType.List, deadline, ServeMove, timeoutIsNullBulk: true);
    }

    /// <summary>
    /// Serves a BLMOVE where its source became ready. The destination must be in the same shard,
    /// the only one this thread holds; otherwise the client runs the command again itself, with
    /// both shards held (it may then find the element taken and block again).
    /// </summary>
    private static bool ServeMove(BlockedClient waiter, Database db, ReadOnlySpan<byte> key, Entry* e)
    {
        var c = ContextOf(waiter, db);
        // BRPOPLPUSH is BLMOVE RIGHT LEFT; BLMOVE's ends were checked when it blocked.
        bool fromHead = false, toHead = true;
        if (c.Spec.Name == "blmove")
        {
            fromHead = c.ArgIs(3, "left"u8);
            toHead = c.ArgIs(4, "left"u8);
        }
        var keyspace = c.Keyspace;
        if (keyspace.ShardIndexOf(Keyspace.Hash(c.Arg(1))) != keyspace.ShardIndexOf(Keyspace.Hash(c.Arg(2))))
            return false;
        // A destination of another type answers WRONGTYPE and the element stays, as in Redis.
        ListCommands.Move(ref c, fromHead, toHead, logAsLMove: true);
        c.Database(c.Arg(2), out _).Watched?.Touch(c.Arg(2));
        return true;
    }

    // ---- BLMPOP / BZMPOP ------------------------------------------------------------------

    /// <summary>BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count].</summary>
    private static void BLMPop(ref CommandContext c) => MultiPopOrBlock(ref c, Engine.ValueType.List);

    /// <summary>BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count].</summary>
    private static void BZMPop(ref CommandContext c) => MultiPopOrBlock(ref c, Engine.ValueType.SortedSet);

    /// <summary>LMPOP/ZMPOP at once when a key holds something; otherwise the client blocks on all of them.</summary>
    private static void MultiPopOrBlock(ref CommandContext c, Engine.ValueType type)
    {
        if (!TryDeadline(ref c, 1, out long deadline) || !MultiPop.TryOptions(ref c, 2, type, out int numKeys, out _, out _))
            return;
        if (MultiPop.TryPopFirst(ref c, 2, numKeys, type, out bool failed) || failed)
            return;
        if (c.Client.InTransaction)
        {
            c.LogNothing();
            c.Reply.NullArray();
            return;
        }
        Block(ref c, 3, 2 + numKeys, type, deadline, ServeMultiPop);
    }

    private static bool ServeMultiPop(BlockedClient waiter, Database db, ReadOnlySpan<byte> key, Entry* e)
    {
        var c = ContextOf(waiter, db);
        MultiPop.Pop(ref c, 2, key, e);
        return true;
    }

    /// <summary>[key, member, score], logged as ZPOPMIN/ZPOPMAX key.</summary>
    private static void ZPopAndReply(ref CommandContext c, ReadOnlySpan<byte> key, Entry* e, bool max)
    {
        c.Reply.ArrayHeader(3);
        c.Reply.Bulk(key);
        SortedSetCommands.PopOne(ref c, e, max, nested: false);
        TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.SortedSet, max ? "zpopmax"u8 : "zpopmin"u8, key);
        TypedKeys.DeleteIfEmpty(ref c, key, e);
        if (c.LogAs(2) is { } log)
        {
            log.Argument(max ? "ZPOPMAX"u8 : "ZPOPMIN"u8);
            log.Argument(key);
            log.EndCommand();
        }
    }
}
