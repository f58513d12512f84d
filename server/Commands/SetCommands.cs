using System.Buffers;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Set commands, on any form a set has (intset, listpack, hash table) through <see cref="Sets"/>.
/// The multi-key forms run with every involved shard held, so they see one consistent state of
/// all their keys.
/// </summary>
public static unsafe partial class SetCommands
{
    private const string CountNotPositive = "ERR value is out of range, must be positive";

    public static void Register(CommandTable table)
    {
        const string g = "set";
        CommandArgument key = new("key", "key");
        CommandArgument keys = new("key", "key", Multiple: true);
        CommandArgument member = new("member", "string");
        CommandArgument members = new("member", "string", Multiple: true);
        const string scanComplexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.";

        table.Add(new CommandSpec("sadd", -3, Write | DenyOom | Fast, 1, 1, 1, SAdd, g,
            "Adds one or more members to a set. Creates the key if it doesn't exist.", "1.0.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        { Arguments = [key, members] });
        table.Add(new CommandSpec("srem", -3, Write | Fast, 1, 1, 1, SRem, g,
            "Removes one or more members from a set. Deletes the set if the last member was removed.", "1.0.0", "O(N) where N is the number of members to be removed.")
        { Arguments = [key, members] });
        table.Add(new CommandSpec("sismember", 3, ReadOnly | Fast, 1, 1, 1, SIsMember, g, "Determines whether a member belongs to a set.")
        { Arguments = [key, member] });
        table.Add(new CommandSpec("smismember", -3, ReadOnly | Fast, 1, 1, 1, SMIsMember, g,
            "Determines whether multiple members belong to a set.", "6.2.0", "O(N) where N is the number of elements being checked for membership")
        { Arguments = [key, members] });
        table.Add(new CommandSpec("scard", 2, ReadOnly | Fast, 1, 1, 1, SCard, g, "Returns the number of members in a set.")
        { Arguments = [key] });
        table.Add(new CommandSpec("smembers", 2, ReadOnly, 1, 1, 1, SMembers, g, "Returns all members of a set.", "1.0.0", "O(N) where N is the set cardinality.")
        { Arguments = [key] });
        table.Add(new CommandSpec("srandmember", -2, ReadOnly, 1, 1, 1, SRandMember, g,
            "Get one or multiple random members from a set", "1.0.0", "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.")
        { Arguments = [key, new("count", "integer", Optional: true)] });
        table.Add(new CommandSpec("spop", -2, Write | Fast, 1, 1, 1, SPop, g,
            "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", "1.0.0", "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.")
        { Arguments = [key, new("count", "integer", Optional: true)] });
        table.Add(new CommandSpec("smove", 4, Write | Fast, 1, 2, 1, SMove, g, "Moves a member from one set to another.")
        { Arguments = [new("source", "key"), new("destination", "key"), member] });
        table.Add(new CommandSpec("sinter", -2, ReadOnly, 1, -1, 1, SInter, g, "Returns the intersect of multiple sets.", "1.0.0",
            "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        { Arguments = [keys] });
        table.Add(new CommandSpec("sintercard", -3, ReadOnly, 0, 0, 0, SInterCard, g, "Returns the number of members of the intersect of multiple sets.", "7.0.0",
            "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        { KeyCountIndex = 1, Arguments = [new("numkeys", "integer"), keys, new("limit", "integer", Optional: true, Token: "LIMIT")] });
        table.Add(new CommandSpec("sinterstore", -3, Write | DenyOom, 1, -1, 1, SInterStore, g, "Stores the intersect of multiple sets in a key.", "1.0.0",
            "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        { WrittenKey = 1, Arguments = [new("destination", "key"), keys] });
        table.Add(new CommandSpec("sunion", -2, ReadOnly, 1, -1, 1, SUnion, g, "Returns the union of multiple sets.", "1.0.0",
            "O(N) where N is the total number of elements in all given sets.")
        { Arguments = [keys] });
        table.Add(new CommandSpec("sunionstore", -3, Write | DenyOom, 1, -1, 1, SUnionStore, g, "Stores the union of multiple sets in a key.", "1.0.0",
            "O(N) where N is the total number of elements in all given sets.")
        { WrittenKey = 1, Arguments = [new("destination", "key"), keys] });
        table.Add(new CommandSpec("sdiff", -2, ReadOnly, 1, -1, 1, SDiff, g, "Returns the difference of multiple sets.", "1.0.0",
            "O(N) where N is the total number of elements in all given sets.")
        { Arguments = [keys] });
        table.Add(new CommandSpec("sdiffstore", -3, Write | DenyOom, 1, -1, 1, SDiffStore, g, "Stores the difference of multiple sets in a key.", "1.0.0",
            "O(N) where N is the total number of elements in all given sets.")
        { WrittenKey = 1, Arguments = [new("destination", "key"), keys] });
        table.Add(new CommandSpec("sscan", -3, ReadOnly, 1, 1, 1, SScan, g, "Iterates over members of a set.", "2.8.0", scanComplexity)
        {
            Arguments = [key, new("cursor", "integer"),
                new("pattern", "pattern", Optional: true, Token: "MATCH"),
                new("count", "integer", Optional: true, Token: "COUNT")],
        });
    }

    private static void SAdd(ref CommandContext c)
    {
        var limits = SetLimits.From(c.Server.Config);
        ReadOnlySpan<byte> key = c.Arg(1);
        Database db = c.Database(key, out uint hash);
        Entry* e = db.Lookup(key, hash, c.ExpireClockMs);
        if (e == null)
        {
            // As Redis 7.2: the first member and the member count choose the form.
            e = Sets.NewEntry(key, c.Arg(2), c.ArgCount - 2, limits);
            db.Add(e, hash);
        }
        else if (e->Type != Engine.ValueType.Set)
        {
            c.WrongType();
            return;
        }
        else
        {
            c.Touch(e);
            Sets.MaybeConvert(e, c.ArgCount - 2, limits);
        }
        int added = 0;
        for (int i = 2; i < c.ArgCount; i++)
            if (Sets.Add(e, c.Arg(i), limits))
                added++;
        if (added == 0)
            c.LogNothing();
        c.Reply.Integer(added);
    }

    private static void SRem(ref CommandContext c) => TypedKeys.RemoveMembers(ref c, Engine.ValueType.Set, &RemoveMember);

    private static bool RemoveMember(Entry* e, ReadOnlySpan<byte> member) => Sets.Remove(e, member);

    private static void SIsMember(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (!failed)
            c.Reply.Integer(e != null && Sets.Contains(e, c.Arg(2)) ? 1 : 0);
    }

    private static void SMIsMember(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (failed)
            return;
        c.Reply.ArrayHeader(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
            c.Reply.Integer(e != null && Sets.Contains(e, c.Arg(i)) ? 1 : 0);
    }

    private static void SCard(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (!failed)
            c.Reply.Integer(e == null ? 0 : Sets.Count(e));
    }

    private static void SMembers(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (failed)
            return;
        if (e == null)
            c.Reply.SetHeader(0);
        else
            WriteMembers(c.Reply, e);
    }

    /// <summary>Every member in the set's own order (an intset's ascending, a listpack's as stored), as a set reply.</summary>
    private static void WriteMembers(Protocol.RespWriter reply, Entry* set)
    {
        reply.SetHeader(Sets.Count(set));
        foreach (ReadOnlySpan<byte> member in Sets.Members(set))
            reply.Bulk(member);
    }

    private static void SRandMember(ref CommandContext c)
    {
        if (c.ArgCount > 3)
        {
            c.SyntaxError();
            return;
        }
        long count = 0;
        if (c.ArgCount == 3 && !RandomFields.TryCount(ref c, out count))
            return;
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (failed)
            return;
        Span<byte> scratch = stackalloc byte[Sets.IntegerTextMax];
        if (c.ArgCount == 2)
        {
            if (e == null)
                c.Reply.Null();
            else
                c.Reply.Bulk(Sets.RandomMember(e, Random.Shared, scratch));
            return;
        }
        if (e == null || e->Form == ValueForm.Structure)
        {
            RandomFields.Reply(ref c, e == null ? null : Values.Set(e), count, RandomFields.Shape.Field);
            return;
        }
        RandomPackedMembers(ref c, e, count, scratch);
    }

    /// <summary>
    /// SRANDMEMBER's counted form on an intset or listpack: a negative count (or 1) picks with
    /// repeats; a count that covers the set returns it whole; a smaller one picks distinct members
    /// in one pass, each kept with the probability still needed (as Redis's lpNextRandom), so they
    /// come in the set's order.
    /// </summary>
    private static void RandomPackedMembers(ref CommandContext c, Entry* e, long count, scoped Span<byte> scratch)
    {
        var reply = c.Reply;
        var random = Random.Shared;
        long size = Sets.Count(e);
        if (count == 0)
        {
            reply.ArrayHeader(0);
            return;
        }
        if (count < 0 || count == 1)
        {
            long picks = count < 0 ? -count : count;
            reply.ArrayHeader(picks);
            for (long i = 0; i < picks; i++)
                reply.Bulk(Sets.RandomMember(e, random, scratch));
            return;
        }
        if (count >= size)
        {
            reply.ArrayHeader(size);
            foreach (ReadOnlySpan<byte> member in Sets.Members(e))
                reply.Bulk(member);
            return;
        }
        reply.ArrayHeader(count);
        long needed = count, left = size;
        foreach (ReadOnlySpan<byte> member in Sets.Members(e))
        {
            if (random.NextInt64(left--) < needed)
            {
                reply.Bulk(member);
                if (--needed == 0)
                    break;
            }
        }
    }

    /// <summary>SPOP, logged as the SREM of what it popped (or DEL when it took every member), so a replay removes the same members.</summary>
    private static void SPop(ref CommandContext c)
    {
        if (c.ArgCount > 3)
        {
            c.SyntaxError();
            return;
        }
        long count = 1;
        if (c.ArgCount == 3)
        {
            if (!c.TryNonNegative(2, CountNotPositive, out count))
                return;
        }
        Entry* e = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (failed)
            return;
        ReadOnlySpan<byte> key = c.Arg(1);
        if (e == null || count == 0)
        {
            c.LogNothing();
            if (c.ArgCount == 2)
                c.Reply.Null();
            else
                c.Reply.SetHeader(0);
            return;
        }
        if (count >= Sets.Count(e) && c.ArgCount == 3)
        {
            // As Redis: the whole set, replied as SUNION of it would reply it.
            nint source = (nint)e;
            Entry* whole = Combine(new ReadOnlySpan<nint>(in source), Operation.Union, default, SetLimits.From(c.Server.Config));
            WriteMembers(c.Reply, whole);
            EntryStore.Free(whole);
            if (c.LogAs(2) is { } del)
            {
                del.Argument("DEL"u8);
                del.Argument(key);
                del.EndCommand();
            }
            c.Database(key, out uint hash).Delete(key, hash, c.ExpireClockMs);
            return;
        }
        var log = c.LogAs(2 + (int)count);
        log?.Argument("SREM"u8);
        log?.Argument(key);
        if (c.ArgCount == 3)
            c.Reply.SetHeader(count);
        var random = Random.Shared;
        Span<byte> scratch = stackalloc byte[Sets.IntegerTextMax];
        for (long i = 0; i < count; i++)
        {
            ReadOnlySpan<byte> member = Sets.RandomMember(e, random, scratch);
            c.Reply.Bulk(member);
            log?.Argument(member);
            // The member's bytes may lie in the set itself: nothing reads them after the removal.
            Sets.Remove(e, member);
        }
        log?.EndCommand();
        TypedKeys.DeleteIfEmpty(ref c, key, e);
    }

    private static void SMove(ref CommandContext c)
    {
        ReadOnlySpan<byte> source = c.Arg(1), destination = c.Arg(2), member = c.Arg(3);
        // As Redis: a missing source answers 0 before either type is checked.
        Entry* from = c.Database(source, out uint sourceHash).Lookup(source, sourceHash, c.ExpireClockMs);
        Database targetDb = c.Database(destination, out uint destinationHash);
        Entry* to = targetDb.Lookup(destination, destinationHash, c.ExpireClockMs);
        if (from == null)
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        if (from->Type != Engine.ValueType.Set || (to != null && to->Type != Engine.ValueType.Set))
        {
            c.WrongType();
            return;
        }
        if (from == to)
        {
            c.LogNothing();
            c.Reply.Integer(Sets.Contains(from, member) ? 1 : 0);
            return;
        }
        if (!Sets.Remove(from, member))
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.Set, "srem"u8, source);
        TypedKeys.DeleteIfEmpty(ref c, source, from);
        var limits = SetLimits.From(c.Server.Config);
        if (to == null)
        {
            to = Sets.NewEntry(destination, member, 1, limits);
            targetDb.Add(to, destinationHash);
        }
        else
        {
            c.Touch(to);
        }
        if (Sets.Add(to, member, limits))
            TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.Set, "sadd"u8, destination);
        c.Reply.Integer(1);
    }

    /// <summary>SINTERCARD's and ZINTERCARD's optional "LIMIT limit" at <paramref name="index"/> (0: none).</summary>
    internal static bool TryCardinalityLimit(ref CommandContext c, int index, out long limit)
    {
        limit = 0;
        if (index >= c.ArgCount)
            return true;
        if (index + 2 != c.ArgCount || !c.ArgIs(index, "limit"u8))
        {
            c.SyntaxError();
            return false;
        }
        return c.TryNonNegative(index + 1, "ERR LIMIT can't be negative", out limit);
    }


    private static void SScan(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (failed)
            return;
        if (e != null && e->Form != ValueForm.Structure)
            ElementScan.RunWholeSet(ref c, e);
        else
            ElementScan.Run(ref c, e == null ? null : Values.Set(e), ElementScan.Kind.Set);
    }
}
