using System.Buffers.Binary;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Lists, sets, hashes and sorted sets as Redis 7.0's rdbSaveObject writes them. Listpacks and
/// intsets are built in the buffer itself, past the content, then written as one RDB string
/// (compressed like any other), so no value is copied through managed memory.
/// </summary>
public sealed unsafe partial class RdbWriter
{
    // Quicklist nodes: PLAIN holds one element as it is, PACKED a listpack of several.
    private const int QuicklistNodePlain = 1;
    private const int QuicklistNodePacked = 2;
    // Elements from 1 GB on get a PLAIN node of their own (quicklist's packed_threshold).
    private const int PackedThreshold = 1 << 30;
    // quicklist's SIZE_SAFETY_LIMIT and SIZE_ESTIMATE_OVERHEAD (Redis 7.0).
    private const int NodeSafetyLimit = 8192;
    private const int NodeEntryOverhead = 8;
    // list-max-listpack-size is clamped to this range by quicklistSetFill.
    private const int MinFill = -5;
    private const int MaxFill = short.MaxValue;
    private const int EmptyListpackBytes = NativeListpack.HeaderSize + 1;

    // ---- lists: quicklist 2, nodes cut where RPUSH would have cut them -------------------------

    private void WriteQuicklist(ListValue* list)
    {
        int fill = Math.Clamp(Options.ListMaxListpackSize, MinFill, MaxFill);
        long nodes = 0;
        for (int i = 0; i < list->Count; nodes++)
            i = NodeEnd(list, i, fill, out _);
        WriteLength((ulong)nodes);
        for (int i = 0; i < list->Count;)
        {
            int end = NodeEnd(list, i, fill, out bool plain);
            if (plain)
            {
                WriteLength(QuicklistNodePlain);
                WriteString((*list)[i]);
            }
            else
            {
                WriteLength(QuicklistNodePacked);
                var lp = BeginListpack();
                for (int j = i; j < end; j++)
                    AppendToListpack(ref lp, (*list)[j]);
                EndListpack(ref lp);
            }
            i = end;
        }
    }

    /// <summary>
    /// Where the node that starts at element <paramref name="start"/> ends, had the list been built
    /// by pushing its elements at the tail in order: each goes into the last node while
    /// _quicklistNodeAllowInsert allows, else starts a new one.
    /// </summary>
    private static int NodeEnd(ListValue* list, int start, int fill, out bool plain)
    {
        ReadOnlySpan<byte> first = (*list)[start];
        plain = first.Length >= PackedThreshold;
        if (plain)
            return start + 1;
        long size = EmptyListpackBytes + NativeListpack.StringSize(first);
        int count = 1;
        int i = start + 1;
        for (; i < list->Count; i++)
        {
            ReadOnlySpan<byte> element = (*list)[i];
            if (!NodeTakes(size, count, fill, element.Length))
                break;
            size += NativeListpack.StringSize(element);
            count++;
        }
        return i;
    }

    /// <summary>Redis 7.0's _quicklistNodeAllowInsert for a packed node of <paramref name="size"/> listpack bytes holding <paramref name="count"/> elements.</summary>
    private static bool NodeTakes(long size, int count, int fill, int elementLength)
    {
        if (elementLength >= PackedThreshold)
            return false;
        long estimate = size + elementLength + NodeEntryOverhead;
        if (fill < 0)
            return estimate <= 4096L << (-fill - 1);   // -1: 4 KB, -2: 8 KB ... -5: 64 KB
        return estimate <= NodeSafetyLimit && count < fill;
    }

    // ---- sets ---------------------------------------------------------------------------------------

    /// <summary>
    /// An intset: element width (2, 4 or 8, the narrowest that holds every member), count, then the
    /// members sorted, little-endian. The members are parsed and sorted in the buffer past the blob.
    /// </summary>
    private void WriteIntset(FieldTable* set)
    {
        int count = (int)set->Count;
        int start = StageStart;
        long sortAt = start + 8 + 8L * count;
        EnsureAt(start, 8 + 16L * count);
        var members = new Span<long>(_data + sortAt, count);
        int n = 0;
        foreach (FieldNode* node in *set)
        {
            NumberFormat.TryParseInt64(FieldNode.FieldOf(node), out long member);
            members[n++] = member;
        }
        members.Sort();
        long min = members[0], max = members[^1];
        int width = min < int.MinValue || max > int.MaxValue ? 8 : min < short.MinValue || max > short.MaxValue ? 4 : 2;
        var blob = new Span<byte>(_data + start, 8 + width * count);
        BinaryPrimitives.WriteUInt32LittleEndian(blob, (uint)width);
        BinaryPrimitives.WriteUInt32LittleEndian(blob[4..], (uint)count);
        for (int i = 0; i < count; i++)
        {
            var at = blob.Slice(8 + i * width, width);
            if (width == 2)
                BinaryPrimitives.WriteInt16LittleEndian(at, (short)members[i]);
            else if (width == 4)
                BinaryPrimitives.WriteInt32LittleEndian(at, (int)members[i]);
            else
                BinaryPrimitives.WriteInt64LittleEndian(at, members[i]);
        }
        EndStaged(start, blob.Length);
    }

    private void WritePlainSet(FieldTable* set)
    {
        WriteLength((ulong)set->Count);
        foreach (FieldNode* node in *set)
            WriteString(FieldNode.FieldOf(node));
    }

    // ---- hashes -------------------------------------------------------------------------------------

    private void WritePlainHash(FieldTable* hash)
    {
        WriteLength((ulong)hash->Count);
        foreach (FieldNode* node in *hash)
        {
            WriteString(FieldNode.FieldOf(node));
            WriteString(FieldNode.ValueOf(node));
        }
    }

    // ---- sorted sets -------------------------------------------------------------------------------

    /// <summary>Member then score for each, lowest score first, the score as Redis's listpack text.</summary>
    private void WriteListpackSortedSet(SortedSetValue* set)
    {
        Span<byte> score = stackalloc byte[ListpackScoreText.MaxLength];
        var lp = BeginListpack();
        for (SkipNode* node = SortedSetValue.ListOf(set)->First; node != null; node = SkipNode.Next(node))
        {
            AppendToListpack(ref lp, SkipNode.MemberOf(node));
            AppendToListpack(ref lp, score[..ListpackScoreText.Format(node->Score, score)]);
        }
        EndListpack(ref lp);
    }

    /// <summary>
    /// ZSET_2: the count, then member and binary score for each, from the highest score down, as
    /// Redis walks its skip list from the tail (so a loader always inserts at the head).
    /// </summary>
    private void WriteSkipListSortedSet(SortedSetValue* set)
    {
        WriteLength((ulong)set->Count);
        for (SkipNode* node = SortedSetValue.ListOf(set)->Last; node != null; node = node->Backward)
        {
            WriteString(SkipNode.MemberOf(node));
            Ensure(8);
            BinaryPrimitives.WriteDoubleLittleEndian(new Span<byte>(_data + _length, 8), node->Score);
            _length += 8;
        }
    }

    // ---- a listpack built in place --------------------------------------------------------------------

    /// <summary>A listpack under construction at <see cref="StageStart"/>: where it starts, where its next element goes, how many it has.</summary>
    private struct StagedListpack
    {
        public int Start;
        public int End;
        public int Count;
    }

    private StagedListpack BeginListpack()
    {
        int start = StageStart;
        EnsureAt(start, EmptyListpackBytes);
        return new StagedListpack { Start = start, End = start + NativeListpack.HeaderSize };
    }

    /// <summary>Appends an element as lpAppend stores it (integer text as an integer).</summary>
    private void AppendToListpack(ref StagedListpack lp, ReadOnlySpan<byte> element)
    {
        // Header (up to 5) + bytes + back-length (up to 5), plus the terminator to come.
        EnsureAt(lp.End, element.Length + 11L);
        lp.End += NativeListpack.WriteString(element, new Span<byte>(_data + lp.End, element.Length + 10));
        lp.Count++;
    }

    /// <summary>Terminates the listpack, fills in its header (total bytes, element count or 65535 when more) and writes it as an RDB string.</summary>
    private void EndListpack(ref StagedListpack lp)
    {
        EnsureAt(lp.End, 1);
        _data[lp.End++] = 0xFF;
        int size = lp.End - lp.Start;
        var header = new Span<byte>(_data + lp.Start, NativeListpack.HeaderSize);
        BinaryPrimitives.WriteUInt32LittleEndian(header, (uint)size);
        BinaryPrimitives.WriteUInt16LittleEndian(header[4..], (ushort)Math.Min(lp.Count, ushort.MaxValue));
        EndStaged(lp.Start, size);
    }
}
