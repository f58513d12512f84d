using System.Buffers;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Set commands: members in a <see cref="FieldTable"/> with no values. The multi-key forms run
/// with every involved shard held, so they see one consistent state of all their keys.
/// </summary>
public static unsafe class SetCommands
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
        Entry* e = TypedKeys.WriteOrCreate(ref c, c.Arg(1), Engine.ValueType.Set);
        if (e == null)
            return;
        FieldTable* set = Values.Set(e);
        int added = 0;
        for (int i = 2; i < c.ArgCount; i++)
        {
            ReadOnlySpan<byte> member = c.Arg(i);
            uint hash = FieldTable.HashOf(member);
            if (set->Find(member, hash) != null)
                continue;
            set->Add(member, hash, 0);
            added++;
        }
        if (added == 0)
            c.LogNothing();
        c.Reply.Integer(added);
    }

    private static void SRem(ref CommandContext c) => TypedKeys.RemoveMembers(ref c, Engine.ValueType.Set, &RemoveMember);

    private static bool RemoveMember(Entry* e, ReadOnlySpan<byte> member) => Values.Set(e)->Remove(member);

    private static void SIsMember(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (!failed)
            c.Reply.Integer(e != null && Values.Set(e)->Find(c.Arg(2)) != null ? 1 : 0);
    }

    private static void SMIsMember(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (failed)
            return;
        c.Reply.ArrayHeader(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
            c.Reply.Integer(e != null && Values.Set(e)->Find(c.Arg(i)) != null ? 1 : 0);
    }

    private static void SCard(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (!failed)
            c.Reply.Integer(e == null ? 0 : Values.Set(e)->Count);
    }

    private static void SMembers(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Set, out bool failed);
        if (failed)
            return;
        WriteMembers(c.Reply, e == null ? null : Values.Set(e));
    }

    private static void WriteMembers(Protocol.RespWriter reply, FieldTable* set)
    {
        reply.SetHeader(set == null ? 0 : set->Count);
        if (set == null)
            return;
        foreach (FieldNode* node in *set)
            reply.Bulk(FieldNode.FieldOf(node));
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
        FieldTable* set = e == null ? null : Values.Set(e);
        if (c.ArgCount == 2)
        {
            FieldNode* node = set == null ? null : set->Random(Random.Shared);
            if (node == null)
                c.Reply.Null();
            else
                c.Reply.Bulk(FieldNode.FieldOf(node));
            return;
        }
        RandomFields.Reply(ref c, set, count, RandomFields.Shape.Field);
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
        FieldTable* set = Values.Set(e);
        if (count >= set->Count && c.ArgCount == 3)
        {
            WriteMembers(c.Reply, set);
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
        for (long i = 0; i < count; i++)
        {
            FieldNode* node = set->Random(random);
            ReadOnlySpan<byte> member = FieldNode.FieldOf(node);
            c.Reply.Bulk(member);
            log?.Argument(member);
            set->Remove(member);
        }
        log?.EndCommand();
        TypedKeys.DeleteIfEmpty(ref c, key, e);
    }

    private static void SMove(ref CommandContext c)
    {
        ReadOnlySpan<byte> source = c.Arg(1), destination = c.Arg(2), member = c.Arg(3);
        // As Redis: a missing source answers 0 before either type is checked.
        Entry* from = c.Database(source, out uint sourceHash).Lookup(source, sourceHash, c.ExpireClockMs);
        Entry* to = c.Database(destination, out uint destinationHash).Lookup(destination, destinationHash, c.ExpireClockMs);
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
        if (Values.Set(from)->Find(member) == null)
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        if (from == to)
        {
            c.LogNothing();
            c.Reply.Integer(1);
            return;
        }
        Values.Set(from)->Remove(member);
        TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.Set, "srem"u8, source);
        TypedKeys.DeleteIfEmpty(ref c, source, from);
        to = TypedKeys.WriteOrCreate(ref c, destination, Engine.ValueType.Set);
        FieldTable* target = Values.Set(to);
        uint hash = FieldTable.HashOf(member);
        if (target->Find(member, hash) == null)
        {
            target->Add(member, hash, 0);
            TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.Set, "sadd"u8, destination);
        }
        c.Reply.Integer(1);
    }

    // ---- set algebra ---------------------------------------------------------------------

    private enum Operation { Intersection, Union, Difference }

    private static void SInter(ref CommandContext c) => Algebra(ref c, Operation.Intersection, 1, store: false);
    private static void SInterStore(ref CommandContext c) => Algebra(ref c, Operation.Intersection, 2, store: true);
    private static void SUnion(ref CommandContext c) => Algebra(ref c, Operation.Union, 1, store: false);
    private static void SUnionStore(ref CommandContext c) => Algebra(ref c, Operation.Union, 2, store: true);
    private static void SDiff(ref CommandContext c) => Algebra(ref c, Operation.Difference, 1, store: false);
    private static void SDiffStore(ref CommandContext c) => Algebra(ref c, Operation.Difference, 2, store: true);

    /// <summary>
    /// Looks up the sets at arguments <paramref name="first"/>..<paramref name="first"/>+count-1
    /// into <paramref name="sets"/> (null for a missing key). False after WRONGTYPE.
    /// </summary>
    private static bool Inputs(ref CommandContext c, int first, Span<nint> sets)
    {
        for (int i = 0; i < sets.Length; i++)
        {
            Entry* e = TypedKeys.Read(ref c, c.Arg(first + i), Engine.ValueType.Set, out bool failed);
            if (failed)
                return false;
            sets[i] = e == null ? 0 : (nint)Values.Set(e);
        }
        return true;
    }

    private static void Algebra(ref CommandContext c, Operation operation, int first, bool store)
    {
        int count = c.ArgCount - first;
        nint[] rented = ArrayPool<nint>.Shared.Rent(count);
        try
        {
            Span<nint> sets = rented.AsSpan(0, count);
            if (!Inputs(ref c, first, sets))
                return;
            FieldTable* result = Compute(operation, sets);
            if (!store)
            {
                WriteMembers(c.Reply, result);
                FieldTable.Destroy(result);
                return;
            }
            long size = result->Count;
            TypedKeys.Store(ref c, c.Arg(1), Engine.ValueType.Set, result, size);
            c.Reply.Integer(size);
        }
        finally
        {
            ArrayPool<nint>.Shared.Return(rented);
        }
    }

    /// <summary>A new set holding the result; the caller stores or destroys it.</summary>
    private static FieldTable* Compute(Operation operation, Span<nint> sets)
    {
        FieldTable* result = FieldTable.Create();
        switch (operation)
        {
            case Operation.Intersection:
            {
                FieldTable* smallest = Smallest(sets);
                if (smallest == null)
                    break;
                foreach (FieldNode* node in *smallest)
                    if (InAll(sets, smallest, node))
                        result->Add(FieldNode.FieldOf(node), node->Hash, 0);
                break;
            }
            case Operation.Union:
                foreach (nint set in sets)
                {
                    if (set == 0)
                        continue;
                    foreach (FieldNode* node in *(FieldTable*)set)
                        if (result->Find(FieldNode.FieldOf(node), node->Hash) == null)
                            result->Add(FieldNode.FieldOf(node), node->Hash, 0);
                }
                break;
            case Operation.Difference:
                if (sets[0] == 0)
                    break;
                foreach (FieldNode* node in *(FieldTable*)sets[0])
                {
                    // A key given twice is found in "another" set too, so it takes everything away, as in Redis.
                    bool elsewhere = false;
                    for (int i = 1; i < sets.Length && !elsewhere; i++)
                        elsewhere = sets[i] != 0 && ((FieldTable*)sets[i])->Find(FieldNode.FieldOf(node), node->Hash) != null;
                    if (!elsewhere)
                        result->Add(FieldNode.FieldOf(node), node->Hash, 0);
                }
                break;
        }
        return result;
    }

    /// <summary>The smallest input, or null when any is missing (the intersection is then empty).</summary>
    private static FieldTable* Smallest(Span<nint> sets)
    {
        FieldTable* smallest = null;
        foreach (nint set in sets)
        {
            if (set == 0)
                return null;
            if (smallest == null || ((FieldTable*)set)->Count < smallest->Count)
                smallest = (FieldTable*)set;
        }
        return smallest;
    }

    private static bool InAll(Span<nint> sets, FieldTable* except, FieldNode* node)
    {
        foreach (nint set in sets)
            if ((FieldTable*)set != except && ((FieldTable*)set)->Find(FieldNode.FieldOf(node), node->Hash) == null)
                return false;
        return true;
    }

    /// <summary>SINTERCARD numkeys key [key ...] [LIMIT limit]: the intersection's size, counting stops at the limit.</summary>
    private static void SInterCard(ref CommandContext c)
    {
        if (!c.TryNumKeys(1, out int numKeys))
            return;
        if (!TryCardinalityLimit(ref c, 2 + numKeys, out long limit))
            return;
        nint[] rented = ArrayPool<nint>.Shared.Rent(numKeys);
        try
        {
            Span<nint> sets = rented.AsSpan(0, numKeys);
            if (!Inputs(ref c, 2, sets))
                return;
            FieldTable* smallest = Smallest(sets);
            long found = 0;
            if (smallest != null)
            {
                foreach (FieldNode* node in *smallest)
                {
                    if (!InAll(sets, smallest, node))
                        continue;
                    if (++found == limit)
                        break;
                }
            }
            c.Reply.Integer(found);
        }
        finally
        {
            ArrayPool<nint>.Shared.Return(rented);
        }
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
        if (!failed)
            ElementScan.Run(ref c, e == null ? null : Values.Set(e), ElementScan.Kind.Set);
    }
}
