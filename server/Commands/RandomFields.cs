using System.Buffers;
using Diagnostics.Server.DataTypes;

namespace Diagnostics.Server.Commands;

/// <summary>
/// The counted forms of HRANDFIELD and SRANDMEMBER (ZRANDMEMBER's are with the sorted set commands), which Redis defines alike: a
/// negative count returns exactly that many picks, repeats allowed; a positive count returns
/// that many distinct elements, or all of them when the value is smaller.
/// </summary>
internal static unsafe class RandomFields
{
    public enum Shape { Field, FieldAndValue }

    /// <summary>Redis's message when a count is long.MinValue, whose negation (the pick count) does not exist.</summary>
    private const string CountOutOfRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";

    /// <summary>
    /// Parses the count of argument 2 as Redis's getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX):
    /// long.MinValue is refused, since its negation would overflow into a negative reply length.
    /// </summary>
    public static bool TryCount(ref CommandContext c, out long count)
    {
        if (!c.TryInt64(2, out count))
            return false;
        if (count != long.MinValue)
            return true;
        c.Error(CountOutOfRange);
        return false;
    }

    /// <summary>
    /// Parses HRANDFIELD's and ZRANDMEMBER's "[count [WITHVALUES|WITHSCORES]]" from argument 2,
    /// with Redis's errors in Redis's order (the count first, then the syntax; a count with
    /// values is bounded to +-LONG_MAX/2 so the flattened reply stays countable).
    /// </summary>
    public static bool TryOptions(ref CommandContext c, ReadOnlySpan<byte> withWord, out bool counted, out long count, out bool with)
    {
        counted = c.ArgCount >= 3;
        count = 1;
        with = false;
        if (!counted)
            return true;
        if (!TryCount(ref c, out count))
            return false;
        if (c.ArgCount > 4 || (c.ArgCount == 4 && !c.ArgIs(3, withWord)))
        {
            c.SyntaxError();
            return false;
        }
        with = c.ArgCount == 4;
        if (with && (count < -long.MaxValue / 2 || count > long.MaxValue / 2))
        {
            c.Error("ERR value is out of range");
            return false;
        }
        return true;
    }

    public static void Reply(ref CommandContext c, FieldTable* table, long count, Shape shape)
    {
        var reply = c.Reply;
        long size = table == null ? 0 : table->Count;
        if (count == 0 || size == 0)
        {
            reply.ArrayHeader(0);
            return;
        }
        var random = Random.Shared;
        if (count < 0)
        {
            Header(reply, -count, shape);
            for (long i = 0; i < -count; i++)
                Write(reply, table->Random(random), shape);
            return;
        }
        if (count >= size)
        {
            Header(reply, size, shape);
            foreach (FieldNode* node in *table)
                Write(reply, node, shape);
            return;
        }
        Header(reply, count, shape);
        if (count * 3 > size)
        {
            // Many of them: take every node and keep a random prefix (partial Fisher-Yates).
            nint[] nodes = ArrayPool<nint>.Shared.Rent((int)size);
            int n = 0;
            foreach (FieldNode* node in *table)
                nodes[n++] = (nint)node;
            for (int i = 0; i < count; i++)
            {
                int pick = i + random.Next(n - i);
                (nodes[i], nodes[pick]) = (nodes[pick], nodes[i]);
                Write(reply, (FieldNode*)nodes[i], shape);
            }
            ArrayPool<nint>.Shared.Return(nodes);
            return;
        }
        // Few of a large value: random picks until enough distinct ones.
        var seen = new HashSet<nint>((int)count);
        while (seen.Count < count)
        {
            FieldNode* node = table->Random(random);
            if (seen.Add((nint)node))
                Write(reply, node, shape);
        }
    }

    /// <summary>
    /// HRANDFIELD on a hash held as a listpack of pairs, as Redis 7.0 answers it: without a count
    /// one random field; a negative count (or 1) that many random picks; a count at or past the
    /// size every pair in order; a smaller count a random choice of distinct pairs in listpack order
    /// (lpRandomPairsUnique's selection sampling, which makes no copies).
    /// </summary>
    public static void ReplyListpackPairs(ref CommandContext c, byte* lp, bool counted, long count, Shape shape)
    {
        var reply = c.Reply;
        var random = Random.Shared;
        long size = DataTypes.Packed.NativeListpack.Count(lp) / 2;
        if (!counted)
        {
            WritePair(reply, lp, Hashes.PairAt(lp, random.NextInt64(size)), Shape.Field);
            return;
        }
        if (count == 0)
        {
            reply.ArrayHeader(0);
            return;
        }
        if (count < 0 || count == 1)
        {
            long picks = Math.Abs(count);
            Header(reply, picks, shape);
            for (long i = 0; i < picks; i++)
                WritePair(reply, lp, Hashes.PairAt(lp, random.NextInt64(size)), shape);
            return;
        }
        long wanted = Math.Min(count, size);
        Header(reply, wanted, shape);
        int at = DataTypes.Packed.NativeListpack.First;
        for (long seen = 0; wanted > 0; seen++)
        {
            // Take this pair with probability wanted / (pairs left): exactly `wanted` are taken, each equally likely.
            if (random.NextInt64(size - seen) < wanted)
            {
                WritePair(reply, lp, at, shape);
                wanted--;
            }
            at = DataTypes.Packed.NativeListpack.Skip(lp, DataTypes.Packed.NativeListpack.Skip(lp, at));
        }
    }

    private static void WritePair(Protocol.RespWriter reply, byte* lp, int at, Shape shape)
    {
        Span<byte> scratch = stackalloc byte[20];
        if (shape != Shape.Field && reply.Protocol == 3)
            reply.ArrayHeader(2);
        reply.Bulk(DataTypes.Packed.NativeListpack.Read(lp, at, out int next).AsBytes(scratch));
        if (shape != Shape.Field)
            reply.Bulk(DataTypes.Packed.NativeListpack.Read(lp, next, out _).AsBytes(scratch));
    }

    private static void Header(Protocol.RespWriter reply, long count, Shape shape)
    {
        // RESP2 flattens pairs; RESP3 nests each pair in an array of two.
        if (shape != Shape.Field && reply.Protocol != 3)
            count *= 2;
        reply.ArrayHeader(count);
    }

    private static void Write(Protocol.RespWriter reply, FieldNode* node, Shape shape)
    {
        if (shape != Shape.Field && reply.Protocol == 3)
            reply.ArrayHeader(2);
        reply.Bulk(FieldNode.FieldOf(node));
        if (shape == Shape.FieldAndValue)
            reply.Bulk(FieldNode.ValueOf(node));
    }
}
