using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Commands;

/// <summary>The ZRANGE family, removals by range, and pops.</summary>
public static unsafe partial class SortedSetCommands
{
    private enum RangeKind { Rank, Score, Lex }

    /// <summary>What a ZRANGE-like command asked for, once its options are parsed.</summary>
    private struct RangeQuery
    {
        public RangeKind Kind;
        public bool Reverse;
        public bool WithScores;
        public long Offset;
        /// <summary>Most elements to return; negative for no limit.</summary>
        public long Limit;
    }

    private static void ZRange(ref CommandContext c) => RangeCommand(ref c, 1, store: false, fixedKind: null, reverse: false);
    private static void ZRangeStore(ref CommandContext c) => RangeCommand(ref c, 2, store: true, fixedKind: null, reverse: false);
    private static void ZRevRange(ref CommandContext c) => RangeCommand(ref c, 1, store: false, RangeKind.Rank, reverse: true);
    private static void ZRangeByScore(ref CommandContext c) => RangeCommand(ref c, 1, store: false, RangeKind.Score, reverse: false);
    private static void ZRevRangeByScore(ref CommandContext c) => RangeCommand(ref c, 1, store: false, RangeKind.Score, reverse: true);
    private static void ZRangeByLex(ref CommandContext c) => RangeCommand(ref c, 1, store: false, RangeKind.Lex, reverse: false);
    private static void ZRevRangeByLex(ref CommandContext c) => RangeCommand(ref c, 1, store: false, RangeKind.Lex, reverse: true);

    /// <summary>
    /// Every ZRANGE form, as Redis's zrangeGenericCommand: the source key at <paramref name="source"/>,
    /// then min and max (max first for the REV forms), then options. ZRANGE itself takes
    /// BYSCORE, BYLEX and REV; the older commands fix the kind and direction.
    /// </summary>
    private static void RangeCommand(ref CommandContext c, int source, bool store, RangeKind? fixedKind, bool reverse)
    {
        var query = new RangeQuery { Kind = fixedKind ?? RangeKind.Rank, Reverse = reverse, Limit = -1 };
        bool limited = false;
        for (int i = source + 3; i < c.ArgCount; i++)
        {
            if (!store && c.ArgIs(i, "withscores"u8))
                query.WithScores = true;
            else if (c.ArgIs(i, "limit"u8) && i + 2 < c.ArgCount)
            {
                if (!c.TryInt64(i + 1, out query.Offset) || !c.TryInt64(i + 2, out query.Limit))
                    return;
                limited = true;
                i += 2;
            }
            else if (fixedKind is null && c.ArgIs(i, "byscore"u8))
                query.Kind = RangeKind.Score;
            else if (fixedKind is null && c.ArgIs(i, "bylex"u8))
                query.Kind = RangeKind.Lex;
            else if (fixedKind is null && c.ArgIs(i, "rev"u8))
                query.Reverse = true;
            else
            {
                c.SyntaxError();
                return;
            }
        }
        if (limited && query.Kind == RangeKind.Rank)
        {
            c.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
            return;
        }
        if (query.WithScores && query.Kind == RangeKind.Lex)
        {
            c.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
            return;
        }
        // The reverse score and lex forms name the upper bound first.
        int minArg = source + 1, maxArg = source + 2;
        if (query.Reverse && query.Kind != RangeKind.Rank)
            (minArg, maxArg) = (maxArg, minArg);

        var nodes = new NodeBuffer(16);
        try
        {
            if (!TryParseBounds(ref c, query.Kind, minArg, maxArg, out long start, out long stop, out ScoreRange scores))
                return;
            var set = ReadSet(ref c, source, out bool failed);
            if (failed)
                return;
            if (query.Kind == RangeKind.Lex)
            {
                LexRange.TryParse(c.Arg(minArg), c.Arg(maxArg), out var lex);
                CollectIn(set, lex, query, ref nodes);
            }
            else
            {
                Collect(set, query, start, stop, scores, ref nodes);
            }
            if (store)
            {
                SortedSetValue* result = SortedSetValue.Create();
                Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
                foreach (nint position in nodes.Items)
                {
                    var at = set.At(position);
                    result->Add(at.Member(scratch), at.Score);
                }
                StoreResult(ref c, c.Arg(1), result);
                c.Reply.Integer(nodes.Count);
            }
            else if (query.WithScores)
                WriteWithScores(c.Reply, set, nodes.Items);
            else
                WriteMembers(c.Reply, set, nodes.Items);
        }
        finally
        {
            nodes.Dispose();
        }
    }

    /// <summary>Parses min and max for the kind (ranks as integers, scores, or lex bounds), replying Redis's error otherwise.</summary>
    private static bool TryParseBounds(ref CommandContext c, RangeKind kind, int minArg, int maxArg, out long start, out long stop, out ScoreRange scores)
    {
        start = stop = 0;
        scores = default;
        switch (kind)
        {
            case RangeKind.Rank:
                return c.TryInt64(minArg, out start) && c.TryInt64(maxArg, out stop);
            case RangeKind.Score:
                if (ScoreRange.TryParse(c.Arg(minArg), c.Arg(maxArg), out scores))
                    return true;
                c.Error(MinMaxNotFloat);
                return false;
            default:
                if (LexRange.TryParse(c.Arg(minArg), c.Arg(maxArg), out _))
                    return true;
                c.Error(MinMaxNotLex);
                return false;
        }
    }

    /// <summary>Collects the positions of a rank or score range in reply order.</summary>
    private static void Collect(in SortedSetView set, in RangeQuery query, long start, long stop, in ScoreRange scores, ref NodeBuffer nodes)
    {
        if (query.Kind == RangeKind.Rank)
        {
            if (!ListCommands.TryClamp(start, stop, set.Count, out long from, out long to))
                return;
            // Reverse ranks count from the highest score.
            var at = set.AtRank(query.Reverse ? set.Count - 1 - from : from);
            for (long i = from; i <= to && !at.IsEnd; i++)
            {
                nodes.Add(at.Position);
                at = at.Step(query.Reverse);
            }
            return;
        }
        CollectIn(set, scores, query, ref nodes);
    }

    /// <summary>Collects the positions of a score or lex range in reply order, past LIMIT's offset and up to its count.</summary>
    private static void CollectIn<TRange>(in SortedSetView set, scoped in TRange range, in RangeQuery query, ref NodeBuffer nodes)
        where TRange : ISortedSetRange, allows ref struct
    {
        if (query.Offset < 0 || !set.Exists)
            return;
        var at = query.Reverse ? set.LastIn(range) : set.FirstIn(range);
        for (long skip = query.Offset; !at.IsEnd && skip > 0; skip--)
            at = at.Step(query.Reverse);
        for (long taken = 0; !at.IsEnd && (query.Limit < 0 || taken < query.Limit); taken++)
        {
            if (query.Reverse ? !range.AboveMin(at) : !range.BelowMax(at))
                break;
            nodes.Add(at.Position);
            at = at.Step(query.Reverse);
        }
    }

    // ---- removal by range ----------------------------------------------------------------

    private static void ZRemRangeByRank(ref CommandContext c) => RemoveRange(ref c, RangeKind.Rank);
    private static void ZRemRangeByScore(ref CommandContext c) => RemoveRange(ref c, RangeKind.Score);
    private static void ZRemRangeByLex(ref CommandContext c) => RemoveRange(ref c, RangeKind.Lex);

    /// <summary>ZREMRANGEBYRANK/SCORE/LEX: a range is a run of consecutive members, found then removed in one go.</summary>
    private static void RemoveRange(ref CommandContext c, RangeKind kind)
    {
        if (!TryParseBounds(ref c, kind, 2, 3, out long start, out long stop, out ScoreRange scores))
            return;
        Entry* e = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.SortedSet, out bool failed);
        if (failed)
            return;
        long removed = 0;
        if (e != null)
        {
            var set = SortedSetView.Of(e);
            SortedSetCursor first;
            switch (kind)
            {
                case RangeKind.Rank:
                    first = ListCommands.TryClamp(start, stop, set.Count, out long from, out long to) ? set.AtRank(from) : default;
                    removed = first.IsEnd ? 0 : to - from + 1;
                    break;
                case RangeKind.Score:
                    removed = RunIn(set, scores, out first);
                    break;
                default:
                    LexRange.TryParse(c.Arg(2), c.Arg(3), out var lex);
                    removed = RunIn(set, lex, out first);
                    break;
            }
            SortedSets.RemoveRun(e, first, removed);
            TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
        }
        if (removed == 0)
            c.LogNothing();
        c.Reply.Integer(removed);
    }

    /// <summary>The first member inside <paramref name="range"/> and how many follow it inside.</summary>
    private static long RunIn<TRange>(in SortedSetView set, scoped in TRange range, out SortedSetCursor first) where TRange : ISortedSetRange, allows ref struct
    {
        first = set.FirstIn(range);
        long n = 0;
        for (var at = first; !at.IsEnd && range.BelowMax(at); at = at.Next)
            n++;
        return n;
    }

    // ---- pops ----------------------------------------------------------------------------

    private static void ZPopMin(ref CommandContext c) => Pop(ref c, max: false);
    private static void ZPopMax(ref CommandContext c) => Pop(ref c, max: true);

    /// <summary>ZPOPMIN/ZPOPMAX key [count]: [member, score] without a count, pairs with one (nested in RESP3); empty when missing.</summary>
    private static void Pop(ref CommandContext c, bool max)
    {
        if (c.ArgCount > 3)
        {
            c.SyntaxError();
            return;
        }
        long count = 1;
        bool counted = c.ArgCount == 3;
        if (counted)
        {
            if (!c.TryNonNegative(2, CountNotPositive, out count))
                return;
        }
        Entry* e = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.SortedSet, out bool failed);
        if (failed)
            return;
        if (e == null || count == 0)
        {
            c.LogNothing();
            c.Reply.ArrayHeader(0);
            return;
        }
        long n = Math.Min(count, Values.Length(e));
        if (counted && c.Reply.Protocol == 3)
            c.Reply.ArrayHeader(n);
        else
            c.Reply.ArrayHeader(n * 2);
        for (long i = 0; i < n; i++)
            PopOne(ref c, e, max, nested: counted && c.Reply.Protocol == 3);
        TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
    }

    /// <summary>Replies with the lowest or highest member and its score, then removes it.</summary>
    internal static void PopOne(ref CommandContext c, Entry* e, bool max, bool nested)
    {
        var set = SortedSetView.Of(e);
        var at = max ? set.Last : set.First;
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        if (nested)
            c.Reply.ArrayHeader(2);
        c.Reply.Bulk(at.Member(scratch));
        c.Reply.Double(at.Score);
        SortedSets.RemoveAt(e, at);
    }

    /// <summary>ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: [key, [[member, score], ...]] from the first non-empty set, or null.</summary>
    private static void ZMPop(ref CommandContext c)
    {
        if (!MultiPop.TryOptions(ref c, 1, Engine.ValueType.SortedSet, out int numKeys, out _, out _))
            return;
        if (MultiPop.TryPopFirst(ref c, 1, numKeys, Engine.ValueType.SortedSet, out bool failed) || failed)
            return;
        c.LogNothing();
        c.Reply.NullArray();
    }
}
