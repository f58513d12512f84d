using System.Buffers;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>
/// SINTER, SINTERCARD, SUNION, SDIFF and their STORE forms, as Redis 7.2 computes them, so a
/// stored result has the form Redis would give it and a replied one Redis's order: an
/// intersection walks the smallest input (and stores into that input's packed form, then an
/// intset when every member is an integer); a union or difference grows from an empty intset,
/// converting as members arrive.
/// </summary>
public static unsafe partial class SetCommands
{
    private enum Operation { Intersection, Union, Difference }

    private static void SInter(ref CommandContext c) => Intersect(ref c, 1, c.ArgCount - 1, store: false, cardinalityOnly: false, 0);
    private static void SInterStore(ref CommandContext c) => Intersect(ref c, 2, c.ArgCount - 2, store: true, cardinalityOnly: false, 0);
    private static void SUnion(ref CommandContext c) => UnionOrDifference(ref c, Operation.Union, 1, store: false);
    private static void SUnionStore(ref CommandContext c) => UnionOrDifference(ref c, Operation.Union, 2, store: true);
    private static void SDiff(ref CommandContext c) => UnionOrDifference(ref c, Operation.Difference, 1, store: false);
    private static void SDiffStore(ref CommandContext c) => UnionOrDifference(ref c, Operation.Difference, 2, store: true);

    /// <summary>SINTERCARD numkeys key [key ...] [LIMIT limit]: the intersection's size, counting stops at the limit.</summary>
    private static void SInterCard(ref CommandContext c)
    {
        if (!c.TryNumKeys(1, out int numKeys))
            return;
        if (!TryCardinalityLimit(ref c, 2 + numKeys, out long limit))
            return;
        Intersect(ref c, 2, numKeys, store: false, cardinalityOnly: true, limit);
    }

    /// <summary>
    /// Looks up the sets at arguments <paramref name="first"/>..<paramref name="first"/>+count-1
    /// into <paramref name="sets"/> (their entries, 0 for a missing key). False after WRONGTYPE.
    /// </summary>
    private static bool Inputs(ref CommandContext c, int first, Span<nint> sets)
    {
        for (int i = 0; i < sets.Length; i++)
        {
            Entry* e = TypedKeys.Read(ref c, c.Arg(first + i), Engine.ValueType.Set, out bool failed);
            if (failed)
                return false;
            sets[i] = (nint)e;
        }
        return true;
    }

    private static void Intersect(ref CommandContext c, int first, int count, bool store, bool cardinalityOnly, long limit)
    {
        nint[] rented = ArrayPool<nint>.Shared.Rent(count);
        try
        {
            Span<nint> sets = rented.AsSpan(0, count);
            if (!Inputs(ref c, first, sets))
                return;
            if (sets.Contains(0))
            {
                // An intersection with an empty set is empty.
                if (store)
                    Store(ref c, null);
                else if (cardinalityOnly)
                    c.Reply.Integer(0);
                else
                    c.Reply.SetHeader(0);
                return;
            }
            SortBySize(sets);
            if (cardinalityOnly)
            {
                c.Reply.Integer(CountIntersection(sets, limit));
                return;
            }
            if (!store)
            {
                // The reply's length comes first: count, then walk again to write.
                c.Reply.SetHeader(CountIntersection(sets, 0));
                var it = Sets.Members((Entry*)sets[0]);
                while (it.MoveNext())
                    if (InAllOthers(sets, it.IsInteger, it.Integer, it.Current))
                        c.Reply.Bulk(it.Current);
                return;
            }
            var limits = SetLimits.From(c.Server.Config);
            ReadOnlySpan<byte> key = c.Arg(1);
            Entry* smallest = (Entry*)sets[0];
            Entry* result = Sets.NewEntry(key, smallest->Form == ValueForm.Intset ? ValueForm.Intset : ValueForm.Listpack);
            bool onlyIntegers = true;
            var members = Sets.Members(smallest);
            while (members.MoveNext())
            {
                ReadOnlySpan<byte> member = members.Current;
                if (!InAllOthers(sets, members.IsInteger, members.Integer, member))
                    continue;
                if (members.IsInteger)
                {
                    Sets.AddInteger(result, members.Integer, limits);
                    continue;
                }
                if (onlyIntegers && !NumberFormat.TryParseInt64(member, out _))
                    onlyIntegers = false;
                Sets.Add(result, member, limits);
            }
            if (onlyIntegers && Sets.Count(result) > 0)
                Sets.MaybeConvertToIntset(result, limits);
            Store(ref c, result);
        }
        finally
        {
            ArrayPool<nint>.Shared.Return(rented);
        }
    }

    /// <summary>Members of the smallest set (first) found in every other, counting stops at <paramref name="limit"/> (0: none).</summary>
    private static long CountIntersection(Span<nint> sets, long limit)
    {
        long found = 0;
        var it = Sets.Members((Entry*)sets[0]);
        while (it.MoveNext())
        {
            if (!InAllOthers(sets, it.IsInteger, it.Integer, it.Current))
                continue;
            if (++found == limit)
                break;
        }
        return found;
    }

    private static bool InAllOthers(Span<nint> sets, bool isInteger, long integer, ReadOnlySpan<byte> member)
    {
        for (int i = 1; i < sets.Length; i++)
        {
            if (sets[i] == sets[0])
                continue;
            var set = (Entry*)sets[i];
            if (!(isInteger ? Sets.ContainsInteger(set, integer) : Sets.Contains(set, member)))
                return false;
        }
        return true;
    }

    /// <summary>Smallest first, equal sizes kept in argument order (the stable sort Redis's qsort gives).</summary>
    private static void SortBySize(Span<nint> sets)
    {
        for (int i = 1; i < sets.Length; i++)
        {
            nint set = sets[i];
            long size = Sets.Count((Entry*)set);
            int j = i - 1;
            for (; j >= 0 && Sets.Count((Entry*)sets[j]) > size; j--)
                sets[j + 1] = sets[j];
            sets[j + 1] = set;
        }
    }

    private static void UnionOrDifference(ref CommandContext c, Operation operation, int first, bool store)
    {
        int count = c.ArgCount - first;
        nint[] rented = ArrayPool<nint>.Shared.Rent(count);
        try
        {
            Span<nint> sets = rented.AsSpan(0, count);
            if (!Inputs(ref c, first, sets))
                return;
            var limits = SetLimits.From(c.Server.Config);
            ReadOnlySpan<byte> key = store ? c.Arg(1) : default;
            Entry* result = Combine(sets, operation, key, limits);
            if (store)
            {
                Store(ref c, result);
                return;
            }
            WriteMembers(c.Reply, result);
            EntryStore.Free(result);
        }
        finally
        {
            ArrayPool<nint>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// The union or difference of <paramref name="sets"/> (entries, 0 for missing keys) as a new
    /// detached entry named <paramref name="key"/>, grown from an empty intset as Redis grows it.
    /// </summary>
    private static Entry* Combine(ReadOnlySpan<nint> sets, Operation operation, ReadOnlySpan<byte> key, in SetLimits limits)
    {
        Entry* result = Sets.NewEntry(key, ValueForm.Intset);
        if (operation == Operation.Union)
        {
            foreach (nint set in sets)
                if (set != 0)
                    AddAll(result, (Entry*)set, limits);
            return result;
        }
        if (sets[0] == 0 || sets[1..].Contains(sets[0]))
            return result; // nothing to take from, or a key subtracted from itself
        // Redis's choice: test each member of the first against the others, or add the first
        // and remove all the others, whichever touches fewer members (the first favoured).
        long testEach = 0, removeAll = 0;
        foreach (nint set in sets)
        {
            if (set == 0)
                continue;
            testEach += Sets.Count((Entry*)sets[0]);
            removeAll += Sets.Count((Entry*)set);
        }
        if (testEach / 2 <= removeAll)
        {
            var it = Sets.Members((Entry*)sets[0]);
            while (it.MoveNext())
            {
                bool elsewhere = false;
                for (int i = 1; i < sets.Length && !elsewhere; i++)
                    elsewhere = sets[i] != 0 && (it.IsInteger ? Sets.ContainsInteger((Entry*)sets[i], it.Integer) : Sets.Contains((Entry*)sets[i], it.Current));
                if (!elsewhere)
                    Add(result, ref it, limits);
            }
            return result;
        }
        AddAll(result, (Entry*)sets[0], limits);
        for (int i = 1; i < sets.Length && Sets.Count(result) > 0; i++)
        {
            if (sets[i] == 0)
                continue;
            foreach (ReadOnlySpan<byte> member in Sets.Members((Entry*)sets[i]))
                Sets.Remove(result, member);
        }
        return result;
    }

    private static void AddAll(Entry* result, Entry* set, in SetLimits limits)
    {
        var it = Sets.Members(set);
        while (it.MoveNext())
            Add(result, ref it, limits);
    }

    private static void Add(Entry* result, ref Sets.MemberEnumerator it, in SetLimits limits)
    {
        if (it.IsInteger)
            Sets.AddInteger(result, it.Integer, limits);
        else
            Sets.Add(result, it.Current, limits);
    }

    /// <summary>
    /// Replaces the destination (argument 1) with <paramref name="result"/>, a detached entry
    /// named after it, without a TTL; an empty or missing result deletes the destination instead.
    /// Replies the result's size.
    /// </summary>
    private static void Store(ref CommandContext c, Entry* result)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        long size = result == null ? 0 : Sets.Count(result);
        Database db = c.Database(key, out uint hash);
        db.Delete(key, hash, c.ExpireClockMs);
        if (size == 0)
        {
            if (result != null)
                EntryStore.Free(result);
        }
        else
        {
            db.Add(result, hash);
        }
        c.Reply.Integer(size);
    }
}
