using Diagnostics.Server.Persistence;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.DataTypes.Packed;

/// <summary>
/// A small sorted set held as Redis 7.0 holds it (t_zset.c's zzl* functions): one
/// <see cref="NativeListpack"/> of member, score, member, score... ordered by score and then by
/// member bytes. A score is stored as zzlInsertAt stores it: an integer element when it is
/// integral within ±2^62 (so -0 becomes 0), otherwise its %.17g text
/// (<see cref="ListpackScoreText"/>), so the block is byte for byte Redis's and DUMP carries it
/// unchanged. Offsets are of member elements; the score follows its member. Editing calls return
/// the possibly moved block.
/// </summary>
public static unsafe class ListpackSortedSet
{
    /// <summary>Redis's LISTPACK_MAX_SAFETY_SIZE: no listpack grows past 1 GB (lpSafeToAdd).</summary>
    public const long MaxSafeBytes = 1L << 30;

    /// <summary>Digits of a 64-bit integer member as text, with its sign.</summary>
    public const int IntegerScratch = 24;

    public static int Count(byte* lp) => NativeListpack.Count(lp) / 2;

    /// <summary>The score of the member at <paramref name="member"/>.</summary>
    public static double ScoreOf(byte* lp, int member) => ReadScore(lp, NativeListpack.Skip(lp, member));

    /// <summary>Reads a score element (zzlGetScore): an integer, or text as strtod reads it.</summary>
    public static double ReadScore(byte* lp, int offset)
    {
        var element = NativeListpack.Read(lp, offset, out _);
        if (element.IsInteger)
            return element.Integer;
        NumberFormat.TryParseDouble(element.Span, out double score);
        return score;
    }

    /// <summary>The member's bytes; an integer member is written as text into <paramref name="scratch"/> (<see cref="IntegerScratch"/> bytes).</summary>
    public static ReadOnlySpan<byte> MemberAt(byte* lp, int member, Span<byte> scratch)
        => NativeListpack.Read(lp, member, out _).AsBytes(scratch);

    /// <summary>The offset of the member after <paramref name="member"/>, or -1 at the end.</summary>
    public static int Next(byte* lp, int member)
    {
        int next = NativeListpack.Skip(lp, NativeListpack.Skip(lp, member));
        return NativeListpack.IsEnd(lp, next) ? -1 : next;
    }

    /// <summary>The offset of the member before <paramref name="member"/>, or -1 at the start.</summary>
    public static int Previous(byte* lp, int member)
        => member <= NativeListpack.First ? -1 : NativeListpack.Previous(lp, NativeListpack.Previous(lp, member));

    public static int First(byte* lp) => NativeListpack.IsEnd(lp, NativeListpack.First) ? -1 : NativeListpack.First;

    public static int Last(byte* lp)
    {
        int last = NativeListpack.Last(lp);
        return NativeListpack.IsEnd(lp, last) ? -1 : NativeListpack.Previous(lp, last);
    }

    /// <summary>The member's offset (zzlFind), -1 when absent; its score in <paramref name="score"/>.</summary>
    public static int Find(byte* lp, ReadOnlySpan<byte> member, out double score)
    {
        int at = NativeListpack.Find(lp, NativeListpack.First, member, skip: 1);
        score = at < 0 ? 0 : ScoreOf(lp, at);
        return at;
    }

    /// <summary>The offset of the member at 0-based <paramref name="rank"/>, or -1.</summary>
    public static int AtRank(byte* lp, long rank)
        => rank < 0 || rank >= Count(lp) ? -1 : NativeListpack.Seek(lp, 2 * rank);

    /// <summary>0-based rank of the member from the lowest score, -1 when absent.</summary>
    public static long RankOf(byte* lp, ReadOnlySpan<byte> member, out double score)
    {
        score = 0;
        long rank = 0;
        Span<byte> scratch = stackalloc byte[IntegerScratch];
        for (int at = First(lp); at >= 0; at = Next(lp, at), rank++)
        {
            if (MemberAt(lp, at, scratch).SequenceEqual(member))
            {
                score = ScoreOf(lp, at);
                return rank;
            }
        }
        return -1;
    }

    /// <summary>
    /// Inserts a member known to be absent at its place by score then member (zzlInsert), the
    /// score stored as Redis stores it. Returns the (possibly moved) block.
    /// </summary>
    public static byte* Insert(byte* lp, ReadOnlySpan<byte> member, double score)
    {
        Span<byte> scratch = stackalloc byte[IntegerScratch];
        int at = NativeListpack.First;
        while (!NativeListpack.IsEnd(lp, at))
        {
            int scoreAt = NativeListpack.Skip(lp, at);
            double s = ReadScore(lp, scoreAt);
            if (s > score || (s == score && MemberAt(lp, at, scratch).SequenceCompareTo(member) > 0))
                break;
            at = NativeListpack.Skip(lp, scoreAt);
        }
        return InsertAt(lp, at, member, score);
    }

    /// <summary>Puts member and score before the element at <paramref name="at"/> (the terminator appends), as zzlInsertAt does.</summary>
    public static byte* InsertAt(byte* lp, int at, ReadOnlySpan<byte> member, double score)
    {
        lp = NativeListpack.InsertString(lp, at, member);
        int scoreAt = NativeListpack.Skip(lp, at);
        if (IsStoredAsInteger(score, out long integral))
            return NativeListpack.InsertInteger(lp, scoreAt, integral);
        Span<byte> text = stackalloc byte[ListpackScoreText.MaxLength];
        return NativeListpack.InsertString(lp, scoreAt, text[..ListpackScoreText.Format(score, text)]);
    }

    /// <summary>Redis's double2ll: an integral score within ±LLONG_MAX/2 is stored as an integer element.</summary>
    private static bool IsStoredAsInteger(double score, out long integral)
    {
        integral = 0;
        if (!(score >= -(double)(long.MaxValue / 2) && score <= long.MaxValue / 2))
            return false;
        integral = (long)score;
        return integral == score;
    }

    /// <summary>Removes the member at <paramref name="member"/> and its score; returns the (possibly moved) block.</summary>
    public static byte* Delete(byte* lp, int member) => NativeListpack.Delete(lp, member, 2);

    /// <summary>Removes <paramref name="members"/> consecutive members from <paramref name="member"/> on; returns the (possibly moved) block.</summary>
    public static byte* DeleteRun(byte* lp, int member, long members) => NativeListpack.Delete(lp, member, (int)(2 * members));

    /// <summary>Bytes the block would have with <paramref name="member"/> and a score added, for lpSafeToAdd's check.</summary>
    public static bool SafeToAdd(byte* lp, int memberLength) => (long)NativeListpack.Bytes(lp) + memberLength <= MaxSafeBytes;
}
