using System.Runtime.InteropServices;
using Diagnostics.Server.DataTypes.Packed;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// One node of a <see cref="ListValue"/>: a listpack of several elements (Redis's PACKED
/// container) or, for an element of <see cref="ListNodeLimits.PackedThreshold"/> bytes or more,
/// that element's bytes alone (PLAIN). 16 bytes, kept in the list's array of nodes rather than
/// linked, so an index finds its node by summing counts over contiguous records.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct ListNode
{
    private const uint PlainFlag = 1u << 31;

    /// <summary>The listpack (tracked block), or a plain node's element bytes.</summary>
    public byte* Block;
    private uint _countAndPlain;

    /// <summary>Redis's node->sz: the listpack's bytes, or a plain element's length.</summary>
    public uint Size;

    public readonly int Count => (int)(_countAndPlain & ~PlainFlag);
    public readonly bool IsPlain => (_countAndPlain & PlainFlag) != 0;

    public void SetCount(int count) => _countAndPlain = (_countAndPlain & PlainFlag) | (uint)count;

    public static ListNode Packed(byte* listpack, int count) => new()
    {
        Block = listpack,
        _countAndPlain = (uint)count,
        Size = (uint)NativeListpack.Bytes(listpack),
    };

    public static ListNode Plain(byte* element, int length) => new()
    {
        Block = element,
        _countAndPlain = PlainFlag | 1,
        Size = (uint)length,
    };
}

/// <summary>
/// Where Redis 7.0's quicklist cuts nodes (quicklist.c): list-max-listpack-size ("fill") is an
/// element count when positive (with an 8 KB safety limit on the node's bytes), a node size when
/// negative (-1..-5: 4, 8, 16, 32, 64 KB), and an element of 1 GB or more gets a plain node.
/// Sizes are estimates the way Redis makes them, so nodes here break exactly where Redis's do.
/// </summary>
public static class ListNodeLimits
{
    /// <summary>Elements from this size on get a plain node of their own (quicklist's packed_threshold).</summary>
    public const long PackedThreshold = 1L << 30;
    /// <summary>SIZE_SAFETY_LIMIT: the most bytes a node limited by count may hold.</summary>
    private const int SafetyLimit = 8192;
    /// <summary>SIZE_ESTIMATE_OVERHEAD: what one element is assumed to add beyond its length.</summary>
    private const int EstimateOverhead = 8;
    /// <summary>A listpack's header and terminator, counted once when two nodes merge.</summary>
    private const int ListpackOverhead = 7;

    public const int MinFill = -5;
    public const int MaxFill = short.MaxValue;
    public const int MaxCompressDepth = ushort.MaxValue;

    /// <summary>quicklistSetFill's clamp of list-max-listpack-size.</summary>
    public static int ClampFill(long fill) => (int)Math.Clamp(fill, MinFill, MaxFill);

    /// <summary>quicklistSetCompressDepth's clamp of list-compress-depth.</summary>
    public static int ClampCompressDepth(long depth) => (int)Math.Clamp(depth, 0, MaxCompressDepth);

    /// <summary>quicklistNodeExceedsLimit: whether a node of <paramref name="size"/> bytes and <paramref name="count"/> elements is over the limit.</summary>
    public static bool Exceeds(int fill, long size, long count)
    {
        if (fill < 0)
            return size > 4096L << (-fill - 1);
        return size > SafetyLimit || count > Math.Max(fill, 1);
    }

    /// <summary>_quicklistNodeAllowInsert: whether an element of <paramref name="length"/> bytes may join <paramref name="node"/>.</summary>
    public static unsafe bool AllowInsert(ListNode* node, int fill, long length)
        => node != null && !node->IsPlain && length < PackedThreshold
            && !Exceeds(fill, node->Size + length + EstimateOverhead, node->Count + 1L);

    /// <summary>_quicklistNodeAllowMerge: whether two neighbouring nodes may become one.</summary>
    public static unsafe bool AllowMerge(ListNode* a, ListNode* b, int fill)
        => a != null && b != null && !a->IsPlain && !b->IsPlain
            && !Exceeds(fill, (long)a->Size + b->Size - ListpackOverhead, (long)a->Count + b->Count);
}
