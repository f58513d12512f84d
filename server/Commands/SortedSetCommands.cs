using System.Buffers;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Sorted set commands over either form of a sorted set (<see cref="SortedSetView"/> to read, <see cref="SortedSets"/> to write): adds and increments, ranks, the
/// ZRANGE family by rank, score or lex, removals by range, pops, and the set algebra of ZUNION,
/// ZINTER and ZDIFF (which also accept plain sets, their members scoring 1).
/// </summary>
public static unsafe partial class SortedSetCommands
{
    private const string NotFloat = "ERR value is not a valid float";
    private const string ScoreIsNaN = "ERR resulting score is not a number (NaN)";
    private const string MinMaxNotFloat = "ERR min or max is not a float";
    private const string MinMaxNotLex = "ERR min or max not valid string range item";
    private const string CountNotPositive = "ERR value is out of range, must be positive";

    public static void Register(CommandTable table)
    {
        const string g = "sorted-set";
        CommandArgument key = new("key", "key");
        CommandArgument member = new("member", "string");
        CommandArgument members = new("member", "string", Multiple: true);
        CommandArgument withScores = new("withscores", "pure-token", Optional: true, Token: "WITHSCORES");
        CommandArgument limit = new("limit", "block", Optional: true, Token: "LIMIT", Children: [new("offset", "integer"), new("count", "integer")]);
        const string logN = "O(log(N))";
        const string rangeComplexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.";
        const string removeComplexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.";

        table.Add(new CommandSpec("zadd", -4, Write | DenyOom | Fast, 1, 1, 1, ZAdd, g,
            "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", "1.2.0", "O(log(N)) for each item added, where N is the number of elements in the sorted set.")
        {
            Arguments = [key,
                new("condition", "oneof", Optional: true, Children: [new("nx", "pure-token", Token: "NX"), new("xx", "pure-token", Token: "XX")]),
                new("comparison", "oneof", Optional: true, Children: [new("gt", "pure-token", Token: "GT"), new("lt", "pure-token", Token: "LT")]),
                new("change", "pure-token", Optional: true, Token: "CH"),
                new("increment", "pure-token", Optional: true, Token: "INCR"),
                new("data", "block", Multiple: true, Children: [new("score", "double"), member])],
        });
        table.Add(new CommandSpec("zincrby", 4, Write | DenyOom | Fast, 1, 1, 1, ZIncrBy, g,
            "Increments the score of a member in a sorted set.", "1.2.0", logN)
        { Arguments = [key, new("increment", "integer"), member] });
        table.Add(new CommandSpec("zrem", -3, Write | Fast, 1, 1, 1, ZRem, g,
            "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", "1.2.0", "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.")
        { Arguments = [key, members] });
        table.Add(new CommandSpec("zcard", 2, ReadOnly | Fast, 1, 1, 1, ZCard, g, "Returns the number of members in a sorted set.", "1.2.0")
        { Arguments = [key] });
        table.Add(new CommandSpec("zcount", 4, ReadOnly | Fast, 1, 1, 1, ZCount, g, "Returns the count of members in a sorted set that have scores within a range.", "2.0.0", logN)
        { Arguments = [key, new("min", "double"), new("max", "double")] });
        table.Add(new CommandSpec("zlexcount", 4, ReadOnly | Fast, 1, 1, 1, ZLexCount, g, "Returns the number of members in a sorted set within a lexicographical range.", "2.8.9", logN)
        { Arguments = [key, new("min", "string"), new("max", "string")] });
        table.Add(new CommandSpec("zscore", 3, ReadOnly | Fast, 1, 1, 1, ZScore, g, "Returns the score of a member in a sorted set.", "1.2.0")
        { Arguments = [key, member] });
        table.Add(new CommandSpec("zmscore", -3, ReadOnly | Fast, 1, 1, 1, ZMScore, g, "Returns the score of one or more members in a sorted set.", "6.2.0", "O(N) where N is the number of members being requested.")
        { Arguments = [key, members] });
        table.Add(new CommandSpec("zrank", -3, ReadOnly | Fast, 1, 1, 1, ZRank, g, "Returns the index of a member in a sorted set ordered by ascending scores.", "2.0.0", logN)
        { Arguments = [key, member, new("withscore", "pure-token", Optional: true, Token: "WITHSCORE")] });
        table.Add(new CommandSpec("zrevrank", -3, ReadOnly | Fast, 1, 1, 1, ZRevRank, g, "Returns the index of a member in a sorted set ordered by descending scores.", "2.0.0", logN)
        { Arguments = [key, member, new("withscore", "pure-token", Optional: true, Token: "WITHSCORE")] });
        table.Add(new CommandSpec("zrange", -4, ReadOnly, 1, 1, 1, ZRange, g, "Returns members in a sorted set within a range of indexes.", "1.2.0", rangeComplexity)
        {
            Arguments = [key, new("start", "string"), new("stop", "string"),
                new("sortby", "oneof", Optional: true, Children: [new("byscore", "pure-token", Token: "BYSCORE"), new("bylex", "pure-token", Token: "BYLEX")]),
                new("rev", "pure-token", Optional: true, Token: "REV"), limit, withScores],
        });
        table.Add(new CommandSpec("zrangestore", -5, Write | DenyOom, 1, 2, 1, ZRangeStore, g, "Stores a range of members from sorted set in a key.", "6.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.")
        {
            WrittenKey = 1,
            Arguments = [new("dst", "key"), new("src", "key"), new("min", "string"), new("max", "string"),
                new("sortby", "oneof", Optional: true, Children: [new("byscore", "pure-token", Token: "BYSCORE"), new("bylex", "pure-token", Token: "BYLEX")]),
                new("rev", "pure-token", Optional: true, Token: "REV"), limit],
        });
        table.Add(new CommandSpec("zrevrange", -4, ReadOnly, 1, 1, 1, ZRevRange, g, "Returns members in a sorted set within a range of indexes in reverse order.", "1.2.0", rangeComplexity)
        { Arguments = [key, new("start", "integer"), new("stop", "integer"), withScores] });
        table.Add(new CommandSpec("zrangebyscore", -4, ReadOnly, 1, 1, 1, ZRangeByScore, g, "Returns members in a sorted set within a range of scores.", "1.0.5", rangeComplexity)
        { Arguments = [key, new("min", "double"), new("max", "double"), withScores, limit] });
        table.Add(new CommandSpec("zrevrangebyscore", -4, ReadOnly, 1, 1, 1, ZRevRangeByScore, g, "Returns members in a sorted set within a range of scores in reverse order.", "2.2.0", rangeComplexity)
        { Arguments = [key, new("max", "double"), new("min", "double"), withScores, limit] });
        table.Add(new CommandSpec("zrangebylex", -4, ReadOnly, 1, 1, 1, ZRangeByLex, g, "Returns members in a sorted set within a lexicographical range.", "2.8.9", rangeComplexity)
        { Arguments = [key, new("min", "string"), new("max", "string"), limit] });
        table.Add(new CommandSpec("zrevrangebylex", -4, ReadOnly, 1, 1, 1, ZRevRangeByLex, g, "Returns members in a sorted set within a lexicographical range in reverse order.", "2.8.9", rangeComplexity)
        { Arguments = [key, new("max", "string"), new("min", "string"), limit] });
        table.Add(new CommandSpec("zremrangebyrank", 4, Write, 1, 1, 1, ZRemRangeByRank, g, "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", "2.0.0", removeComplexity)
        { Arguments = [key, new("start", "integer"), new("stop", "integer")] });
        table.Add(new CommandSpec("zremrangebyscore", 4, Write, 1, 1, 1, ZRemRangeByScore, g, "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", "1.2.0", removeComplexity)
        { Arguments = [key, new("min", "double"), new("max", "double")] });
        table.Add(new CommandSpec("zremrangebylex", 4, Write, 1, 1, 1, ZRemRangeByLex, g, "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", "2.8.9", removeComplexity)
        { Arguments = [key, new("min", "string"), new("max", "string")] });
        table.Add(new CommandSpec("zpopmin", -2, Write | Fast, 1, 1, 1, ZPopMin, g, "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "5.0.0", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
        { Arguments = [key, new("count", "integer", Optional: true)] });
        table.Add(new CommandSpec("zpopmax", -2, Write | Fast, 1, 1, 1, ZPopMax, g, "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "5.0.0", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
        { Arguments = [key, new("count", "integer", Optional: true)] });
        table.Add(new CommandSpec("zmpop", -4, Write, 0, 0, 0, ZMPop, g, "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", "7.0.0", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
        {
            KeyCountIndex = 1,
            Arguments = [new("numkeys", "integer"), new("key", "key", Multiple: true),
                new("where", "oneof", Children: [new("min", "pure-token", Token: "MIN"), new("max", "pure-token", Token: "MAX")]),
                new("count", "integer", Optional: true, Token: "COUNT")],
        });
        CommandArgument numKeys = new("numkeys", "integer");
        CommandArgument inputKeys = new("key", "key", Multiple: true);
        CommandArgument weights = new("weight", "integer", Optional: true, Multiple: true, Token: "WEIGHTS");
        CommandArgument aggregate = new("aggregate", "oneof", Optional: true, Token: "AGGREGATE",
            Children: [new("sum", "pure-token", Token: "SUM"), new("min", "pure-token", Token: "MIN"), new("max", "pure-token", Token: "MAX")]);
        const string unionComplexity = "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.";
        const string interComplexity = "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.";
        const string diffComplexity = "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.";
        table.Add(new CommandSpec("zunion", -3, ReadOnly, 0, 0, 0, ZUnion, g, "Returns the union of multiple sorted sets.", "6.2.0", unionComplexity)
        { KeyCountIndex = 1, Arguments = [numKeys, inputKeys, weights, aggregate, withScores] });
        table.Add(new CommandSpec("zinter", -3, ReadOnly, 0, 0, 0, ZInter, g, "Returns the intersect of multiple sorted sets.", "6.2.0", interComplexity)
        { KeyCountIndex = 1, Arguments = [numKeys, inputKeys, weights, aggregate, withScores] });
        table.Add(new CommandSpec("zdiff", -3, ReadOnly, 0, 0, 0, ZDiff, g, "Returns the difference between multiple sorted sets.", "6.2.0", diffComplexity)
        { KeyCountIndex = 1, Arguments = [numKeys, inputKeys, withScores] });
        table.Add(new CommandSpec("zunionstore", -4, Write | DenyOom, 1, 1, 1, ZUnionStore, g, "Stores the union of multiple sorted sets in a key.", "2.0.0", unionComplexity)
        { WrittenKey = 1, KeyCountIndex = 2, Arguments = [new("destination", "key"), numKeys, inputKeys, weights, aggregate] });
        table.Add(new CommandSpec("zinterstore", -4, Write | DenyOom, 1, 1, 1, ZInterStore, g, "Stores the intersect of multiple sorted sets in a key.", "2.0.0", interComplexity)
        { WrittenKey = 1, KeyCountIndex = 2, Arguments = [new("destination", "key"), numKeys, inputKeys, weights, aggregate] });
        table.Add(new CommandSpec("zdiffstore", -4, Write | DenyOom, 1, 1, 1, ZDiffStore, g, "Stores the difference of multiple sorted sets in a key.", "6.2.0", diffComplexity)
        { WrittenKey = 1, KeyCountIndex = 2, Arguments = [new("destination", "key"), numKeys, inputKeys] });
        table.Add(new CommandSpec("zintercard", -3, ReadOnly, 0, 0, 0, ZInterCard, g, "Returns the number of members of the intersect of multiple sorted sets.", "7.0.0", "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.")
        { KeyCountIndex = 1, Arguments = [numKeys, inputKeys, new("limit", "integer", Optional: true, Token: "LIMIT")] });
        table.Add(new CommandSpec("zrandmember", -2, ReadOnly, 1, 1, 1, ZRandMember, g, "Returns one or more random members from a sorted set.", "6.2.0", "O(N) where N is the number of members returned")
        {
            Arguments = [key, new("options", "block", Optional: true, Children: [
                new("count", "integer"), new("withscores", "pure-token", Optional: true, Token: "WITHSCORES")])],
        });
        table.Add(new CommandSpec("zscan", -3, ReadOnly, 1, 1, 1, ZScan, g, "Iterates over members and scores of a sorted set.", "2.8.0",
            "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.")
        {
            Arguments = [key, new("cursor", "integer"),
                new("pattern", "pattern", Optional: true, Token: "MATCH"), new("count", "integer", Optional: true, Token: "COUNT")],
        });
    }

    // ---- adding and scoring --------------------------------------------------------------

    [Flags]
    private enum AddFlags { None = 0, Nx = 1, Xx = 2, Gt = 4, Lt = 8, Ch = 16, Incr = 32 }

    private static void ZAdd(ref CommandContext c)
    {
        var flags = AddFlags.None;
        int first = 2;
        for (; first < c.ArgCount; first++)
        {
            if (c.ArgIs(first, "nx"u8)) flags |= AddFlags.Nx;
            else if (c.ArgIs(first, "xx"u8)) flags |= AddFlags.Xx;
            else if (c.ArgIs(first, "gt"u8)) flags |= AddFlags.Gt;
            else if (c.ArgIs(first, "lt"u8)) flags |= AddFlags.Lt;
            else if (c.ArgIs(first, "ch"u8)) flags |= AddFlags.Ch;
            else if (c.ArgIs(first, "incr"u8)) flags |= AddFlags.Incr;
            else break;
        }
        int pairs = c.ArgCount - first;
        if (pairs == 0 || pairs % 2 != 0)
        {
            c.SyntaxError();
            return;
        }
        pairs /= 2;
        bool nx = (flags & AddFlags.Nx) != 0, xx = (flags & AddFlags.Xx) != 0, gt = (flags & AddFlags.Gt) != 0, lt = (flags & AddFlags.Lt) != 0;
        bool incr = (flags & AddFlags.Incr) != 0;
        if (nx && xx)
        {
            c.Error("ERR XX and NX options at the same time are not compatible");
            return;
        }
        if ((gt && nx) || (lt && nx) || (gt && lt))
        {
            c.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
            return;
        }
        if (incr && pairs > 1)
        {
            c.Error("ERR INCR option supports a single increment-element pair");
            return;
        }
        // Every score is checked before anything changes, as in Redis.
        for (int i = 0; i < pairs; i++)
        {
            if (!NumberFormat.TryParseDouble(c.Arg(first + 2 * i), out _))
            {
                c.Error(NotFloat);
                return;
            }
        }

        Entry* e = WriteOrCreate(ref c, c.Arg(1), create: !xx, c.Arg(first + 1).Length, out bool failed);
        if (e == null)
        {
            if (failed)
                return;
            if (incr)
                c.Reply.Null();
            else
                c.Reply.Integer(0);
            return;
        }
        var limits = SortedSetLimits.From(c.Server.Config);
        var addFlags = (nx ? SortedSetAddFlags.Nx : 0) | (xx ? SortedSetAddFlags.Xx : 0) | (gt ? SortedSetAddFlags.Gt : 0)
            | (lt ? SortedSetAddFlags.Lt : 0) | (incr ? SortedSetAddFlags.Incr : 0);
        long added = 0, changed = 0;
        double result = 0;
        bool applied = false;
        for (int i = 0; i < pairs; i++)
        {
            NumberFormat.TryParseDouble(c.Arg(first + 2 * i), out double score);
            switch (SortedSets.Add(e, score, c.Arg(first + 2 * i + 1), addFlags, limits, out double newScore))
            {
                case SortedSetAddResult.Added:
                    added++;
                    break;
                case SortedSetAddResult.Updated:
                    changed++;
                    break;
                case SortedSetAddResult.Unchanged:
                    break;
                case SortedSetAddResult.NotANumber:
                    c.Error(ScoreIsNaN);
                    TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
                    return;
                default:
                    continue;
            }
            applied = true;
            result = newScore;
        }
        if (added + changed == 0)
            c.LogNothing();
        else
            TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.SortedSet, incr ? "zincr"u8 : "zadd"u8, c.Arg(1));
        TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
        if (incr)
        {
            if (applied)
                c.Reply.Double(result);
            else
                c.Reply.Null();
            return;
        }
        c.Reply.Integer((flags & AddFlags.Ch) != 0 ? added + changed : added);
    }

    private static void ZIncrBy(ref CommandContext c)
    {
        if (!NumberFormat.TryParseDouble(c.Arg(2), out double increment))
        {
            c.Error(NotFloat);
            return;
        }
        ReadOnlySpan<byte> member = c.Arg(3);
        Entry* e = WriteOrCreate(ref c, c.Arg(1), create: true, member.Length, out _);
        if (e == null)
            return;
        if (SortedSets.Add(e, increment, member, SortedSetAddFlags.Incr, SortedSetLimits.From(c.Server.Config), out double next) == SortedSetAddResult.NotANumber)
        {
            c.Error(ScoreIsNaN);
            return;
        }
        c.Reply.Double(next);
    }

    /// <summary>
    /// The key's sorted set for a write, created when missing (unless <paramref name="create"/> is
    /// false: null, nothing logged) in the form Redis gives a set whose first member has
    /// <paramref name="firstMemberLength"/> bytes; null with <paramref name="failed"/> after WRONGTYPE.
    /// </summary>
    internal static Entry* WriteOrCreate(ref CommandContext c, ReadOnlySpan<byte> key, bool create, long firstMemberLength, out bool failed)
    {
        Entry* e = TypedKeys.Write(ref c, key, Engine.ValueType.SortedSet, out failed);
        if (e != null || failed)
            return e;
        if (!create)
        {
            c.LogNothing();
            return null;
        }
        Database db = c.Database(key, out uint hash);
        e = SortedSets.NewEntry(key, firstMemberLength, SortedSetLimits.From(c.Server.Config));
        db.Add(e, hash);
        return e;
    }

    private static void ZRem(ref CommandContext c) => TypedKeys.RemoveMembers(ref c, Engine.ValueType.SortedSet, &RemoveMember);

    private static bool RemoveMember(Entry* e, ReadOnlySpan<byte> member) => SortedSets.Remove(e, member);

    // ---- reads ---------------------------------------------------------------------------

    /// <summary>The key's sorted set for a read; an empty view when missing, <paramref name="failed"/> after WRONGTYPE.</summary>
    private static SortedSetView ReadSet(ref CommandContext c, int argument, out bool failed)
        => SortedSetView.Of(TypedKeys.Read(ref c, c.Arg(argument), Engine.ValueType.SortedSet, out failed));

    private static void ZCard(ref CommandContext c)
    {
        var set = ReadSet(ref c, 1, out bool failed);
        if (!failed)
            c.Reply.Integer(set.Count);
    }

    private static void ZScore(ref CommandContext c)
    {
        var set = ReadSet(ref c, 1, out bool failed);
        if (failed)
            return;
        if (set.TryGetScore(c.Arg(2), out double score))
            c.Reply.Double(score);
        else
            c.Reply.Null();
    }

    private static void ZMScore(ref CommandContext c)
    {
        var set = ReadSet(ref c, 1, out bool failed);
        if (failed)
            return;
        c.Reply.ArrayHeader(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
        {
            if (set.TryGetScore(c.Arg(i), out double score))
                c.Reply.Double(score);
            else
                c.Reply.Null();
        }
    }

    private static void ZRank(ref CommandContext c) => Rank(ref c, reverse: false);
    private static void ZRevRank(ref CommandContext c) => Rank(ref c, reverse: true);

    /// <summary>ZRANK/ZREVRANK key member [WITHSCORE]: the rank, or [rank, score]; null when absent.</summary>
    private static void Rank(ref CommandContext c, bool reverse)
    {
        bool withScore = false;
        if (c.ArgCount > 4 || (c.ArgCount == 4 && !(withScore = c.ArgIs(3, "withscore"u8))))
        {
            c.SyntaxError();
            return;
        }
        var set = ReadSet(ref c, 1, out bool failed);
        if (failed)
            return;
        long rank = set.RankOf(c.Arg(2), reverse, out double score);
        if (rank < 0)
        {
            if (withScore)
                c.Reply.NullArray();
            else
                c.Reply.Null();
            return;
        }
        if (!withScore)
        {
            c.Reply.Integer(rank);
            return;
        }
        c.Reply.ArrayHeader(2);
        c.Reply.Integer(rank);
        c.Reply.Double(score);
    }

    private static void ZCount(ref CommandContext c)
    {
        if (ScoreRange.TryParse(c.Arg(2), c.Arg(3), out var range))
            CountIn(ref c, range);
        else
            c.Error(MinMaxNotFloat);
    }

    private static void ZLexCount(ref CommandContext c)
    {
        if (LexRange.TryParse(c.Arg(2), c.Arg(3), out var range))
            CountIn(ref c, range);
        else
            c.Error(MinMaxNotLex);
    }

    /// <summary>ZCOUNT and ZLEXCOUNT: the members inside <paramref name="range"/>.</summary>
    private static void CountIn<TRange>(ref CommandContext c, scoped in TRange range) where TRange : ISortedSetRange, allows ref struct
    {
        var set = ReadSet(ref c, 1, out bool failed);
        if (!failed)
            c.Reply.Integer(set.CountIn(range));
    }

    /// <summary>
    /// ZRANDMEMBER key [count [WITHSCORES]], as zrandmemberWithCountCommand: a negative count picks
    /// with repeats; a count covering the set returns all of it, highest score first; a large share is a
    /// shuffled prefix of every member; a small one is distinct random picks.
    /// </summary>
    private static void ZRandMember(ref CommandContext c)
    {
        if (!RandomFields.TryOptions(ref c, "withscores"u8, out bool hasCount, out long count, out bool withScores))
            return;
        var set = ReadSet(ref c, 1, out bool failed);
        if (failed)
            return;
        var reply = c.Reply;
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        if (!hasCount)
        {
            var pick = set.Random(Random.Shared);
            if (pick.IsEnd)
                reply.Null();
            else
                reply.Bulk(pick.Member(scratch));
            return;
        }
        long size = set.Count;
        if (count == 0 || size == 0)
        {
            reply.ArrayHeader(0);
            return;
        }
        var random = Random.Shared;
        if (count < 0)
        {
            RandomHeader(reply, -count, withScores);
            for (long i = 0; i < -count; i++)
                WriteRandom(reply, set.Random(random), withScores, scratch);
            return;
        }
        if (count >= size)
        {
            // The whole set, from the highest score down: Redis 7.0's zset iterator walks from the tail.
            RandomHeader(reply, size, withScores);
            for (var at = set.Last; !at.IsEnd; at = at.Previous)
                WriteRandom(reply, at, withScores, scratch);
            return;
        }
        RandomHeader(reply, count, withScores);
        if (count * 3 > size)
        {
            // Many of them: every position, keeping a random prefix (partial Fisher-Yates).
            nint[] positions = ArrayPool<nint>.Shared.Rent((int)size);
            int n = 0;
            for (var at = set.First; !at.IsEnd; at = at.Next)
                positions[n++] = at.Position;
            for (int i = 0; i < count; i++)
            {
                int pick = i + random.Next(n - i);
                (positions[i], positions[pick]) = (positions[pick], positions[i]);
                WriteRandom(reply, set.At(positions[i]), withScores, scratch);
            }
            ArrayPool<nint>.Shared.Return(positions);
            return;
        }
        // Few of a large set: random picks until enough distinct ones.
        var seen = new HashSet<nint>((int)count);
        while (seen.Count < count)
        {
            var pick = set.Random(random);
            if (seen.Add(pick.Position))
                WriteRandom(reply, pick, withScores, scratch);
        }
    }

    private static void RandomHeader(RespWriter reply, long count, bool withScores)
        => reply.ArrayHeader(withScores && reply.Protocol != 3 ? count * 2 : count);

    private static void WriteRandom(RespWriter reply, in SortedSetCursor at, bool withScores, Span<byte> scratch)
    {
        if (withScores && reply.Protocol == 3)
            reply.ArrayHeader(2);
        reply.Bulk(at.Member(scratch));
        if (withScores)
            reply.Double(at.Score);
    }

    private static void ZScan(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.SortedSet, out bool failed);
        if (failed)
            return;
        if (e != null && e->Form == Engine.ValueForm.Listpack)
            ElementScan.Run(ref c, null, ElementScan.Kind.SortedSet, Values.Packed(e));
        else
            ElementScan.Run(ref c, e == null ? null : Values.SortedSet(e)->Members, ElementScan.Kind.SortedSet);
    }

    /// <summary>Writes (member, score) pairs: flat in RESP2, each pair an array of two in RESP3 (Redis 7's WITHSCORES shape).</summary>
    internal static void WriteWithScores(RespWriter reply, in SortedSetView set, ReadOnlySpan<nint> positions)
    {
        bool nested = reply.Protocol == 3;
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        reply.ArrayHeader(nested ? positions.Length : positions.Length * 2L);
        foreach (nint position in positions)
        {
            var at = set.At(position);
            if (nested)
                reply.ArrayHeader(2);
            reply.Bulk(at.Member(scratch));
            reply.Double(at.Score);
        }
    }

    internal static void WriteMembers(RespWriter reply, in SortedSetView set, ReadOnlySpan<nint> positions)
    {
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        reply.ArrayHeader(positions.Length);
        foreach (nint position in positions)
            reply.Bulk(set.At(position).Member(scratch));
    }

    /// <summary>Replaces <paramref name="key"/> with a finished result (the STORE forms), packed when Redis would pack it; an empty one deletes the key.</summary>
    private static void StoreResult(ref CommandContext c, ReadOnlySpan<byte> key, SortedSetValue* result)
    {
        long count = result->Count;
        void* value = SortedSets.Pack(result, SortedSetLimits.From(c.Server.Config), out var form);
        TypedKeys.Store(ref c, key, Engine.ValueType.SortedSet, value, count, form);
    }

    /// <summary>A pooled buffer of positions (<see cref="SortedSetCursor.Position"/>), for replies whose length is known only after the walk.</summary>
    internal ref struct NodeBuffer
    {
        private nint[] _items;
        public int Count;

        public NodeBuffer(int capacity)
        {
            _items = ArrayPool<nint>.Shared.Rent(Math.Max(16, capacity));
            Count = 0;
        }

        public void Add(nint position)
        {
            if (Count == _items.Length)
            {
                nint[] larger = ArrayPool<nint>.Shared.Rent(_items.Length * 2);
                _items.AsSpan(0, Count).CopyTo(larger);
                ArrayPool<nint>.Shared.Return(_items);
                _items = larger;
            }
            _items[Count++] = position;
        }

        public readonly ReadOnlySpan<nint> Items => _items.AsSpan(0, Count);

        public void Dispose() => ArrayPool<nint>.Shared.Return(_items);
    }
}
