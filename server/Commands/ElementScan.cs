using System.Buffers;
using System.Buffers.Text;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Commands;

/// <summary>
/// HSCAN, SSCAN and ZSCAN: the reverse-binary cursor scan of a value's <see cref="FieldTable"/>,
/// with MATCH, COUNT and (HSCAN) NOVALUES, replying [next cursor, elements].
/// </summary>
internal static unsafe class ElementScan
{
    public enum Kind { Hash, Set, SortedSet }

    /// <summary>
    /// A value held as a listpack of pairs (a small hash): every element in one reply with cursor 0,
    /// whatever the cursor and COUNT, as Redis's scanGenericCommand does; MATCH filters on the
    /// field and drops its value with it.
    /// </summary>
    public static void RunListpack(ref CommandContext c, byte* lp, Kind kind)
    {
        if (!TryOptions(ref c, kind, out _, out _, out int patternIndex, out bool noValues))
            return;
        bool filter = patternIndex >= 0;
        ReadOnlySpan<byte> pattern = filter ? c.Arg(patternIndex) : default;
        int kept = 0;
        Span<byte> scratch = stackalloc byte[20];
        for (int at = NativeListpack.First; !NativeListpack.IsEnd(lp, at); at = NativeListpack.Skip(lp, NativeListpack.Skip(lp, at)))
            if (!filter || GlobPattern.IsMatch(pattern, NativeListpack.Read(lp, at, out _).AsBytes(scratch)))
                kept++;
        var reply = c.Reply;
        reply.ArrayHeader(2);
        reply.Bulk("0"u8);
        reply.ArrayHeader(noValues ? kept : kept * 2L);
        Span<byte> valueScratch = stackalloc byte[20];
        for (int at = NativeListpack.First; !NativeListpack.IsEnd(lp, at);)
        {
            ReadOnlySpan<byte> field = NativeListpack.Read(lp, at, out int valueAt).AsBytes(scratch);
            var value = NativeListpack.Read(lp, valueAt, out at);
            if (filter && !GlobPattern.IsMatch(pattern, field))
                continue;
            reply.Bulk(field);
            if (!noValues)
                reply.Bulk(value.AsBytes(valueScratch));
        }
    }

    /// <summary>
    /// Parses the cursor (argument 2) and options, then scans <paramref name="table"/> (null: a
    /// missing key), or replies everything in <paramref name="listpack"/> with cursor 0, as Redis
    /// scans a packed value in one go.
    /// </summary>
    public static void Run(ref CommandContext c, FieldTable* table, Kind kind, byte* listpack = null)
    {
        if (!TryOptions(ref c, kind, out ulong cursor, out long count, out int patternIndex, out bool noValues))
            return;
        if (listpack != null)
        {
            WritePacked(ref c, listpack, patternIndex < 0 ? default : c.Arg(patternIndex), patternIndex >= 0, kind);
            return;
        }
        var collector = new Collector(ArrayPool<nint>.Shared.Rent(64));
        try
        {
            if (table != null)
            {
                // As Redis: stop after COUNT elements, or COUNT*10 bucket steps on a sparse table.
                long steps = count > long.MaxValue / 10 ? long.MaxValue : count * 10;
                do
                    cursor = table->Scan(cursor, ref collector);
                while (cursor != 0 && steps-- > 0 && collector.Count < count);
            }
            else
            {
                cursor = 0;
            }
            Write(ref c, ref collector, cursor, patternIndex < 0 ? default : c.Arg(patternIndex), patternIndex >= 0, kind, noValues);
        }
        finally
        {
            ArrayPool<nint>.Shared.Return(collector.Items);
        }
    }

    /// <summary>The cursor (argument 2) and MATCH, COUNT, NOVALUES from argument 3 on; false after an error reply.</summary>
    private static bool TryOptions(ref CommandContext c, Kind kind, out ulong cursor, out long count, out int patternIndex, out bool noValues)
    {
        count = 10;
        patternIndex = -1;
        noValues = false;
        if (!ScanCommands.TryParseCursor(c.Arg(2), out cursor))
        {
            c.Error(ScanCommands.InvalidCursor);
            return false;
        }
        for (int i = 3; i < c.ArgCount; i++)
        {
            bool hasValue = i + 1 < c.ArgCount;
            if (c.ArgIs(i, "count"u8) && hasValue)
            {
                if (!ScanCommands.TryCount(ref c, i + 1, out count))
                    return false;
                i++;
            }
            else if (c.ArgIs(i, "match"u8) && hasValue)
            {
                patternIndex = ++i;
            }
            else if (kind == Kind.Hash && c.ArgIs(i, "novalues"u8))
            {
                noValues = true;
            }
            else
            {
                c.SyntaxError();
                return false;
            }
        }
        return true;
    }

    /// <summary>
    /// SSCAN of a set held packed (intset or listpack): every member matching in one reply with
    /// cursor 0, whatever cursor was given, as Redis answers for a value with no hash table.
    /// </summary>
    public static void RunWholeSet(ref CommandContext c, Entry* set)
    {
        if (!TryOptions(ref c, Kind.Set, out _, out _, out int patternIndex, out _))
            return;
        ReadOnlySpan<byte> pattern = patternIndex < 0 ? default : c.Arg(patternIndex);
        long kept = 0;
        if (patternIndex < 0)
            kept = Sets.Count(set);
        else
            foreach (ReadOnlySpan<byte> member in Sets.Members(set))
                if (GlobPattern.IsMatch(pattern, member))
                    kept++;
        var reply = c.Reply;
        reply.ArrayHeader(2);
        reply.Bulk("0"u8);
        reply.ArrayHeader(kept);
        foreach (ReadOnlySpan<byte> member in Sets.Members(set))
            if (patternIndex < 0 || GlobPattern.IsMatch(pattern, member))
                reply.Bulk(member);
    }

    private static void Write(ref CommandContext c, ref Collector collector, ulong next, ReadOnlySpan<byte> pattern, bool filter, Kind kind, bool noValues)
    {
        nint[] items = collector.Items;
        int kept = 0;
        for (int i = 0; i < collector.Count; i++)
        {
            var node = (FieldNode*)items[i];
            if (!filter || GlobPattern.IsMatch(pattern, FieldNode.FieldOf(node)))
                items[kept++] = (nint)node;
        }
        var reply = c.Reply;
        reply.ArrayHeader(2);
        Span<byte> digits = stackalloc byte[24];
        Utf8Formatter.TryFormat(next, digits, out int length);
        reply.Bulk(digits[..length]);
        bool pairs = kind != Kind.Set && !noValues;
        reply.ArrayHeader(pairs ? kept * 2L : kept);
        for (int i = 0; i < kept; i++)
        {
            var node = (FieldNode*)items[i];
            reply.Bulk(FieldNode.FieldOf(node));
            if (!pairs)
                continue;
            if (kind == Kind.Hash)
                reply.Bulk(FieldNode.ValueOf(node));
            else
                ScoreReply.AsBulk(reply, (*(SkipNode**)FieldNode.ValuePointer(node))->Score);
        }
    }

    /// <summary>
    /// A listpack scanned whole (Redis's scanGenericCommand for packed values): each element as it
    /// is stored (a sorted set's score as its stored text), pairs for a sorted set, filtered by
    /// MATCH on the member. The count is known only after filtering, so it is counted first.
    /// </summary>
    private static void WritePacked(ref CommandContext c, byte* listpack, ReadOnlySpan<byte> pattern, bool filter, Kind kind)
    {
        int stride = kind == Kind.Set ? 1 : 2;
        Span<byte> scratch = stackalloc byte[24];
        long kept = 0;
        for (int at = DataTypes.Packed.NativeListpack.First; !DataTypes.Packed.NativeListpack.IsEnd(listpack, at); at = Skip(listpack, at, stride))
            if (!filter || GlobPattern.IsMatch(pattern, DataTypes.Packed.NativeListpack.Read(listpack, at, out _).AsBytes(scratch)))
                kept++;
        var reply = c.Reply;
        reply.ArrayHeader(2);
        reply.Bulk("0"u8);
        reply.ArrayHeader(kept * stride);
        for (int at = DataTypes.Packed.NativeListpack.First; !DataTypes.Packed.NativeListpack.IsEnd(listpack, at); at = Skip(listpack, at, stride))
        {
            var member = DataTypes.Packed.NativeListpack.Read(listpack, at, out int next);
            if (filter && !GlobPattern.IsMatch(pattern, member.AsBytes(scratch)))
                continue;
            reply.Bulk(member.AsBytes(scratch));
            if (stride == 2)
                reply.Bulk(DataTypes.Packed.NativeListpack.Read(listpack, next, out _).AsBytes(scratch));
        }
    }

    private static int Skip(byte* listpack, int at, int elements)
    {
        for (int i = 0; i < elements; i++)
            at = DataTypes.Packed.NativeListpack.Skip(listpack, at);
        return at;
    }

    private struct Collector(nint[] items) : IFieldVisitor
    {
        public nint[] Items = items;
        public int Count;

        public void Visit(FieldNode* node)
        {
            if (Count == Items.Length)
            {
                nint[] larger = ArrayPool<nint>.Shared.Rent(Items.Length * 2);
                Items.AsSpan().CopyTo(larger);
                ArrayPool<nint>.Shared.Return(Items);
                Items = larger;
            }
            Items[Count++] = (nint)node;
        }
    }
}
