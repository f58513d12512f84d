using System.Buffers.Binary;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;
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
    private const int EmptyListpackBytes = NativeListpack.HeaderSize + 1;

    // ---- lists: quicklist 2, written node by node as the list holds them ------------------------

    /// <summary>rdbSaveObject's quicklist: the node count, then each node's container and its bytes (a listpack, or a plain element).</summary>
    private void WriteQuicklist(ListValue* list)
    {
        WriteLength((ulong)list->NodeCount);
        for (int i = 0; i < list->NodeCount; i++)
        {
            ListNode* node = list->NodeAt(i);
            WriteLength(node->IsPlain ? (ulong)QuicklistNodePlain : QuicklistNodePacked);
            WriteString(new ReadOnlySpan<byte>(node->Block, (int)node->Size));
        }
    }

    // ---- sets ---------------------------------------------------------------------------------------

    private void WritePlainSet(Entry* set)
    {
        WriteLength((ulong)Sets.Count(set));
        foreach (ReadOnlySpan<byte> member in Sets.Members(set))
            WriteString(member);
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
