using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>
/// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: the classic dynamic-programming
/// table, walked back from the end exactly as Redis does so the subsequence and the reported
/// match ranges (last match first) are the same as Redis's, byte for byte.
/// </summary>
public static unsafe class LongestCommonSubsequence
{
    public static void Lcs(ref CommandContext c)
    {
        Entry* first = c.Read(c.Arg(1), out _);
        Entry* second = c.Read(c.Arg(2), out _);
        if ((first != null && first->Type != Engine.ValueType.String) || (second != null && second->Type != Engine.ValueType.String))
        {
            c.Error(Errors.LcsNotStrings);
            return;
        }

        bool getLength = false, getIndexes = false, withMatchLength = false;
        long minMatchLength = 0;
        for (int i = 3; i < c.ArgCount; i++)
        {
            if (c.ArgIs(i, "idx"u8))
                getIndexes = true;
            else if (c.ArgIs(i, "len"u8))
                getLength = true;
            else if (c.ArgIs(i, "withmatchlen"u8))
                withMatchLength = true;
            else if (c.ArgIs(i, "minmatchlen"u8) && i + 1 < c.ArgCount)
            {
                if (!c.TryInt64(++i, out minMatchLength))
                    return;
                if (minMatchLength < 0)
                    minMatchLength = 0;
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }
        if (getIndexes && getLength)
        {
            c.Error(Errors.LcsLenWithIdx);
            return;
        }

        ReadOnlySpan<byte> a = first == null ? default : Entry.ValueOf(first);
        ReadOnlySpan<byte> b = second == null ? default : Entry.ValueOf(second);
        long tableBytes = (long)(a.Length + 1) * (b.Length + 1) * sizeof(uint);
        if (tableBytes > c.Server.Config.Limits.ProtoMaxBulkLength)
        {
            c.Error(Errors.LcsTableTooLarge);
            return;
        }
        bool computeString = !getIndexes && !getLength;
        uint* table;
        try
        {
            table = (uint*)TrackedAllocator.Alloc((nuint)(tableBytes + (computeString ? a.Length : 0)));
        }
        catch (OutOfMemoryException)
        {
            c.Error(Errors.LcsAllocationFailed);
            return;
        }
        try
        {
            FillTable(table, a, b);
            uint length = table[a.Length * (b.Length + 1) + b.Length];
            if (getLength)
            {
                c.Reply.Integer(length);
            }
            else if (getIndexes)
            {
                // Redis writes the match count after the matches; here a counting walk goes first.
                int matches = WalkBack(table, a, b, null, minMatchLength, withMatchLength, null);
                RespWriter reply = c.Reply;
                reply.MapHeader(2);
                reply.Bulk("matches"u8);
                reply.ArrayHeader(matches);
                WalkBack(table, a, b, null, minMatchLength, withMatchLength, reply);
                reply.Bulk("len"u8);
                reply.Integer(length);
            }
            else
            {
                byte* text = (byte*)table + tableBytes;
                WalkBack(table, a, b, text, 0, false, null);
                c.Reply.Bulk(new ReadOnlySpan<byte>(text, (int)length));
            }
        }
        finally
        {
            TrackedAllocator.Free((byte*)table);
        }
    }

    /// <summary>table[i, j] = length of the LCS of a[..i] and b[..j], stored row by row.</summary>
    private static void FillTable(uint* table, ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        int stride = b.Length + 1;
        new Span<uint>(table, stride).Clear();
        for (int i = 1; i <= a.Length; i++)
        {
            uint* row = table + (long)i * stride;
            uint* above = row - stride;
            row[0] = 0;
            byte left = a[i - 1];
            for (int j = 1; j <= b.Length; j++)
                row[j] = left == b[j - 1] ? above[j - 1] + 1 : Math.Max(above[j], row[j - 1]);
        }
    }

    /// <summary>
    /// Walks the table back from the end, writing the subsequence into <paramref name="text"/>
    /// when given and each maximal run of matching bytes (at least <paramref name="minMatchLength"/>
    /// long) to <paramref name="reply"/> when given. Returns how many runs qualified.
    /// </summary>
    private static int WalkBack(uint* table, ReadOnlySpan<byte> a, ReadOnlySpan<byte> b, byte* text,
        long minMatchLength, bool withMatchLength, RespWriter? reply)
    {
        int stride = b.Length + 1;
        int i = a.Length, j = b.Length;
        uint index = table[(long)i * stride + j];
        // aStart == a.Length marks "no run in progress", as in Redis.
        int aStart = a.Length, aEnd = 0, bStart = 0, bEnd = 0;
        int runs = 0;
        while (i > 0 && j > 0)
        {
            bool emit = false;
            if (a[i - 1] == b[j - 1])
            {
                if (text != null)
                    text[index - 1] = a[i - 1];
                if (aStart == a.Length)
                {
                    aStart = aEnd = i - 1;
                    bStart = bEnd = j - 1;
                }
                else if (aStart == i && bStart == j)
                {
                    aStart--;
                    bStart--;
                }
                else
                {
                    emit = true;
                }
                if (aStart == 0 || bStart == 0)
                    emit = true;
                index--;
                i--;
                j--;
            }
            else
            {
                if (table[(long)(i - 1) * stride + j] > table[(long)i * stride + j - 1])
                    i--;
                else
                    j--;
                if (aStart != a.Length)
                    emit = true;
            }

            if (emit)
            {
                long runLength = aEnd - aStart + 1;
                if (minMatchLength == 0 || runLength >= minMatchLength)
                {
                    runs++;
                    if (reply is not null)
                    {
                        reply.ArrayHeader(withMatchLength ? 3 : 2);
                        reply.ArrayHeader(2);
                        reply.Integer(aStart);
                        reply.Integer(aEnd);
                        reply.ArrayHeader(2);
                        reply.Integer(bStart);
                        reply.Integer(bEnd);
                        if (withMatchLength)
                            reply.Integer(runLength);
                    }
                }
                aStart = a.Length;
            }
        }
        return runs;
    }
}
