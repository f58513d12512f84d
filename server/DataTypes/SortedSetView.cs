using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// The read side of a sorted set, whichever form holds it (a <see cref="ListpackSortedSet"/> or a
/// <see cref="SortedSetValue"/>): scores, ranks, walks by rank, score or member range, random
/// picks. A view is taken from the entry and is valid until the set is changed (an edit may move
/// the listpack); writes go through <see cref="SortedSets"/>. A default view is a missing key.
/// </summary>
public readonly unsafe struct SortedSetView
{
    private readonly byte* _listpack;
    private readonly SortedSetValue* _skiplist;

    private SortedSetView(byte* listpack, SortedSetValue* skiplist)
    {
        _listpack = listpack;
        _skiplist = skiplist;
    }

    /// <summary>The view of a sorted-set entry; a missing one (null) gives an empty view.</summary>
    public static SortedSetView Of(Entry* e)
        => e == null ? default : e->Form == ValueForm.Listpack ? new(Values.Packed(e), null) : new(null, Values.SortedSet(e));

    public static SortedSetView Of(SortedSetValue* set) => new(null, set);

    public static SortedSetView OfListpack(byte* listpack) => new(listpack, null);

    public bool Exists => _listpack != null || _skiplist != null;

    public bool IsListpack => _listpack != null;

    public long Count => _listpack != null ? ListpackSortedSet.Count(_listpack) : _skiplist != null ? _skiplist->Count : 0;

    public bool TryGetScore(ReadOnlySpan<byte> member, out double score)
    {
        if (_listpack != null)
            return ListpackSortedSet.Find(_listpack, member, out score) >= 0;
        if (_skiplist != null)
            return _skiplist->TryGetScore(member, out score);
        score = 0;
        return false;
    }

    /// <summary>0-based rank from the lowest score (the highest when <paramref name="reverse"/>), -1 when absent.</summary>
    public long RankOf(ReadOnlySpan<byte> member, bool reverse, out double score)
    {
        score = 0;
        if (_listpack != null)
        {
            long rank = ListpackSortedSet.RankOf(_listpack, member, out score);
            return rank < 0 || !reverse ? rank : ListpackSortedSet.Count(_listpack) - 1 - rank;
        }
        if (_skiplist == null)
            return -1;
        long found = _skiplist->RankOf(member, reverse);
        if (found >= 0)
            _skiplist->TryGetScore(member, out score);
        return found;
    }

    public SortedSetCursor First => _listpack != null ? new(_listpack, ListpackSortedSet.First(_listpack))
        : new(_skiplist == null ? null : SortedSetValue.ListOf(_skiplist)->First);

    public SortedSetCursor Last => _listpack != null ? new(_listpack, ListpackSortedSet.Last(_listpack))
        : new(_skiplist == null ? null : SortedSetValue.ListOf(_skiplist)->Last);

    /// <summary>The member at 0-based <paramref name="rank"/> from the lowest score; the end when out of range.</summary>
    public SortedSetCursor AtRank(long rank) => _listpack != null ? new(_listpack, ListpackSortedSet.AtRank(_listpack, rank))
        : new(_skiplist == null ? null : SortedSetValue.ListOf(_skiplist)->ByRank(rank + 1));

    /// <summary>The position <see cref="SortedSetCursor.Position"/> gave, while the set is unchanged.</summary>
    public SortedSetCursor At(nint position) => _listpack != null ? new(_listpack, (int)position) : new((SkipNode*)position);

    /// <summary>The first member inside <paramref name="range"/>, or the end.</summary>
    public SortedSetCursor FirstIn<TRange>(in TRange range) where TRange : ISortedSetRange, allows ref struct
    {
        if (_listpack == null)
            return new(_skiplist == null ? null : SortedSetValue.ListOf(_skiplist)->FirstIn(range));
        if (!Overlaps(range))
            return End;
        for (var at = First; !at.IsEnd; at = at.Next)
            if (range.AboveMin(at))
                return range.BelowMax(at) ? at : End;
        return End;
    }

    /// <summary>The last member inside <paramref name="range"/>, or the end.</summary>
    public SortedSetCursor LastIn<TRange>(in TRange range) where TRange : ISortedSetRange, allows ref struct
    {
        if (_listpack == null)
            return new(_skiplist == null ? null : SortedSetValue.ListOf(_skiplist)->LastIn(range));
        if (!Overlaps(range))
            return End;
        for (var at = Last; !at.IsEnd; at = at.Previous)
            if (range.BelowMax(at))
                return range.AboveMin(at) ? at : End;
        return End;
    }

    /// <summary>Members inside <paramref name="range"/> (ZCOUNT, ZLEXCOUNT): by rank in a skip list, by walking a listpack.</summary>
    public long CountIn<TRange>(in TRange range) where TRange : ISortedSetRange, allows ref struct
    {
        if (_listpack != null)
        {
            long n = 0;
            for (var at = FirstIn(range); !at.IsEnd && range.BelowMax(at); at = at.Next)
                n++;
            return n;
        }
        if (_skiplist == null)
            return 0;
        SkipList* list = SortedSetValue.ListOf(_skiplist);
        SkipNode* low = list->FirstIn(range);
        if (low == null)
            return 0;
        SkipNode* high = list->LastIn(range);
        return list->Rank(high->Score, SkipNode.MemberOf(high)) - list->Rank(low->Score, SkipNode.MemberOf(low)) + 1;
    }

    /// <summary>A member picked at random (the end when empty).</summary>
    public SortedSetCursor Random(Random random)
    {
        if (_listpack != null)
        {
            int count = ListpackSortedSet.Count(_listpack);
            return new(_listpack, count == 0 ? -1 : ListpackSortedSet.AtRank(_listpack, random.Next(count)));
        }
        return new(_skiplist == null ? null : _skiplist->Random(random));
    }

    /// <summary>
    /// zzlIsInRange / zzlIsInLexRange: false when the listpack lies wholly outside the range, judged
    /// by its ends only (as Redis judges it, which matters for a lex range over unequal scores).
    /// </summary>
    private bool Overlaps<TRange>(in TRange range) where TRange : ISortedSetRange, allows ref struct
    {
        var last = Last;
        return !last.IsEnd && range.AboveMin(last) && range.BelowMax(First);
    }

    /// <summary>The end position of this view's form.</summary>
    private SortedSetCursor End => _listpack != null ? new(_listpack, -1) : new((SkipNode*)null);
}
