using Diagnostics.Server.Configuration;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;
using ValueType = Diagnostics.Server.Engine.ValueType;

namespace Diagnostics.Server.DataTypes;

/// <summary>zset-max-listpack-entries and zset-max-listpack-value, read once per command.</summary>
public readonly record struct SortedSetLimits(long MaxEntries, long MaxValue)
{
    /// <summary>Redis's defaults: 128 members of at most 64 bytes.</summary>
    public static SortedSetLimits Default => new(128, 64);

    public static SortedSetLimits From(ServerConfig config) => new(config.ZsetMaxListpackEntries, config.ZsetMaxListpackValue);

    /// <summary>zsetConvertToListpackIfNeeded's test for a finished set (store commands, RDB load of a plain encoding).</summary>
    public bool AllowsListpack(long count, long longestMember, long totalMemberBytes)
        => count <= MaxEntries && longestMember <= MaxValue && totalMemberBytes <= ListpackSortedSet.MaxSafeBytes;
}

/// <summary>ZADD's NX, XX, GT, LT and INCR, as zsetAdd takes them.</summary>
[Flags]
public enum SortedSetAddFlags
{
    None = 0,
    Nx = 1,
    Xx = 2,
    Gt = 4,
    Lt = 8,
    Incr = 16,
}

/// <summary>What <see cref="SortedSets.Add"/> did (zsetAdd's out flags).</summary>
public enum SortedSetAddResult
{
    /// <summary>Nothing, by NX, XX, GT or LT (ZADD INCR then replies null).</summary>
    Skipped,
    /// <summary>The member exists and keeps its score.</summary>
    Unchanged,
    Added,
    Updated,
    /// <summary>INCR made the score NaN; nothing changed.</summary>
    NotANumber,
}

/// <summary>
/// The write side of a sorted set, whichever form holds it, as t_zset.c's zset* functions: a new
/// set starts as a listpack unless its first member is too long for one or listpacks are off
/// (zset-max-listpack-entries 0); it becomes a skip list exactly when Redis converts (a member
/// longer than zset-max-listpack-value, more members than zset-max-listpack-entries) and never
/// converts back while it lives. Store commands and RDB loads pack a finished set when it is small
/// (<see cref="Pack"/>). Every edit repoints the entry at the block it leaves (a listpack may move).
/// Reads go through <see cref="SortedSetView"/>.
/// </summary>
public static unsafe class SortedSets
{
    /// <summary>A detached entry holding an empty sorted set in the form Redis creates for a first member of <paramref name="firstMemberLength"/> bytes.</summary>
    public static Entry* NewEntry(ReadOnlySpan<byte> key, long firstMemberLength, in SortedSetLimits limits)
    {
        if (limits.MaxEntries == 0 || firstMemberLength > limits.MaxValue)
            return Values.NewEntry(key, ValueType.SortedSet);
        Entry* e = Values.NewEntry(key, ValueType.SortedSet, NativeListpack.Create(0));
        e->Form = ValueForm.Listpack;
        return e;
    }

    /// <summary>
    /// zsetAdd: adds the member or updates its score under the flags (INCR adds to the current
    /// score); <paramref name="newScore"/> is the score it has after (for ZADD INCR's reply).
    /// A listpack that would exceed a limit becomes a skip list first.
    /// </summary>
    public static SortedSetAddResult Add(Entry* e, double score, ReadOnlySpan<byte> member, SortedSetAddFlags flags, in SortedSetLimits limits, out double newScore)
    {
        bool xx = (flags & SortedSetAddFlags.Xx) != 0;
        newScore = score;
        if (e->Form == ValueForm.Listpack)
        {
            byte* lp = Values.Packed(e);
            int at = ListpackSortedSet.Find(lp, member, out double current);
            if (at >= 0)
            {
                var outcome = Rescored(flags, current, ref score);
                newScore = score;
                if (outcome == SortedSetAddResult.Updated)
                {
                    lp = ListpackSortedSet.Delete(lp, at);
                    Values.Repoint(e, ValueForm.Listpack, ListpackSortedSet.Insert(lp, member, score));
                }
                return outcome;
            }
            if (xx)
                return SortedSetAddResult.Skipped;
            // Checked before inserting, as zsetAdd does: the member that would break a limit goes into the skip list.
            if (ListpackSortedSet.Count(lp) + 1 > limits.MaxEntries || member.Length > limits.MaxValue || !ListpackSortedSet.SafeToAdd(lp, member.Length))
            {
                ConvertToSkipList(e);
            }
            else
            {
                Values.Repoint(e, ValueForm.Listpack, ListpackSortedSet.Insert(lp, member, score));
                return SortedSetAddResult.Added;
            }
        }
        SortedSetValue* set = Values.SortedSet(e);
        SkipNode* node = set->Find(member);
        if (node != null)
        {
            var outcome = Rescored(flags, node->Score, ref score);
            newScore = score;
            if (outcome == SortedSetAddResult.Updated)
                set->Rescore(member, score);
            return outcome;
        }
        if (xx)
            return SortedSetAddResult.Skipped;
        set->Add(member, score);
        return SortedSetAddResult.Added;
    }

    /// <summary>zsetAdd's checks for an existing member: NX skips; INCR adds (NaN refused); GT/LT skip a move the wrong way.</summary>
    private static SortedSetAddResult Rescored(SortedSetAddFlags flags, double current, ref double score)
    {
        if ((flags & SortedSetAddFlags.Nx) != 0)
            return SortedSetAddResult.Skipped;
        if ((flags & SortedSetAddFlags.Incr) != 0)
        {
            score += current;
            if (double.IsNaN(score))
                return SortedSetAddResult.NotANumber;
        }
        if (((flags & SortedSetAddFlags.Lt) != 0 && score >= current) || ((flags & SortedSetAddFlags.Gt) != 0 && score <= current))
            return SortedSetAddResult.Skipped;
        return score == current ? SortedSetAddResult.Unchanged : SortedSetAddResult.Updated;
    }

    /// <summary>Removes a member; false when absent.</summary>
    public static bool Remove(Entry* e, ReadOnlySpan<byte> member)
    {
        if (e->Form != ValueForm.Listpack)
            return Values.SortedSet(e)->Remove(member);
        byte* lp = Values.Packed(e);
        int at = ListpackSortedSet.Find(lp, member, out _);
        if (at < 0)
            return false;
        Values.Repoint(e, ValueForm.Listpack, ListpackSortedSet.Delete(lp, at));
        return true;
    }

    /// <summary>Removes the member at <paramref name="at"/> (a position of this entry's current view): the pops.</summary>
    public static void RemoveAt(Entry* e, in SortedSetCursor at)
    {
        if (e->Form == ValueForm.Listpack)
        {
            Values.Repoint(e, ValueForm.Listpack, ListpackSortedSet.Delete(Values.Packed(e), (int)at.Position));
            return;
        }
        Values.SortedSet(e)->Remove(SkipNode.MemberOf(at.Node));
    }

    /// <summary>Removes <paramref name="count"/> consecutive members from <paramref name="first"/> on, in order: the ZREMRANGEBY* commands.</summary>
    public static void RemoveRun(Entry* e, in SortedSetCursor first, long count)
    {
        if (count <= 0)
            return;
        if (e->Form == ValueForm.Listpack)
        {
            Values.Repoint(e, ValueForm.Listpack, ListpackSortedSet.DeleteRun(Values.Packed(e), (int)first.Position, count));
            return;
        }
        SortedSetValue* set = Values.SortedSet(e);
        SkipNode* node = first.Node;
        for (long i = 0; i < count && node != null; i++)
        {
            SkipNode* next = SkipNode.Next(node);
            set->Remove(SkipNode.MemberOf(node));
            node = next;
        }
    }

    /// <summary>zsetConvert to the skip list: the listpack's members move into a new <see cref="SortedSetValue"/>.</summary>
    public static void ConvertToSkipList(Entry* e)
    {
        byte* lp = Values.Packed(e);
        Values.Repoint(e, ValueForm.Structure, SkipListOf(lp));
        NativeListpack.Free(lp);
    }

    /// <summary>A new skip-list set holding the listpack's members (the listpack is left as it is).</summary>
    public static SortedSetValue* SkipListOf(byte* lp)
    {
        SortedSetValue* set = SortedSetValue.Create();
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        for (int at = ListpackSortedSet.First(lp); at >= 0; at = ListpackSortedSet.Next(lp, at))
            set->Add(ListpackSortedSet.MemberAt(lp, at, scratch), ListpackSortedSet.ScoreOf(lp, at));
        return set;
    }

    /// <summary>
    /// zsetConvertToListpackIfNeeded for a finished set: a listpack of the same members when
    /// <paramref name="limits"/> allow one (the set is then destroyed), else the set itself.
    /// </summary>
    public static void* Pack(SortedSetValue* set, in SortedSetLimits limits, out ValueForm form)
    {
        long longest = 0, total = 0;
        SkipList* list = SortedSetValue.ListOf(set);
        for (SkipNode* node = list->First; node != null; node = SkipNode.Next(node))
        {
            longest = Math.Max(longest, node->MemberLength);
            total += node->MemberLength;
        }
        form = ValueForm.Structure;
        if (!limits.AllowsListpack(set->Count, longest, total))
            return set;
        byte* lp = BuildListpack(set);
        SortedSetValue.Destroy(set);
        form = ValueForm.Listpack;
        return lp;
    }

    /// <summary>A listpack of the set's members in order, allocated at its exact size.</summary>
    private static byte* BuildListpack(SortedSetValue* set)
    {
        SkipList* list = SortedSetValue.ListOf(set);
        long size = NativeListpack.HeaderSize + 1;
        Span<byte> text = stackalloc byte[Persistence.ListpackScoreText.MaxLength];
        for (SkipNode* node = list->First; node != null; node = SkipNode.Next(node))
            size += NativeListpack.StringSize(SkipNode.MemberOf(node)) + NativeListpack.StringSize(text[..Persistence.ListpackScoreText.Format(node->Score, text)]);
        byte* lp = NativeListpack.Create((int)size);
        int end = NativeListpack.HeaderSize;
        for (SkipNode* node = list->First; node != null; node = SkipNode.Next(node))
        {
            lp = ListpackSortedSet.InsertAt(lp, end, SkipNode.MemberOf(node), node->Score);
            end = NativeListpack.Bytes(lp) - 1;
        }
        return lp;
    }
}
