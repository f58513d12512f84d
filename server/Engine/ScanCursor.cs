namespace Diagnostics.Server.Engine;

/// <summary>
/// Redis's reverse-binary scan cursor: the bucket index with its bits reversed is incremented,
/// so a scan that started at a smaller table size still visits every bucket's split halves
/// after the table grows, and one that started large visits merged buckets after it shrinks.
/// </summary>
public static class ScanCursor
{
    /// <summary>The cursor after the bucket <paramref name="cursor"/> &amp; <paramref name="mask"/> has been visited; 0 when the scan is done.</summary>
    public static ulong Advance(ulong cursor, ulong mask)
    {
        cursor |= ~mask;
        cursor = ReverseBits(cursor);
        cursor++;
        return ReverseBits(cursor);
    }

    public static ulong ReverseBits(ulong v)
    {
        // No BCL intrinsic reverses bits; swap progressively smaller halves, then the bytes.
        v = ((v >> 1) & 0x5555555555555555UL) | ((v & 0x5555555555555555UL) << 1);
        v = ((v >> 2) & 0x3333333333333333UL) | ((v & 0x3333333333333333UL) << 2);
        v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FUL) | ((v & 0x0F0F0F0F0F0F0F0FUL) << 4);
        return System.Buffers.Binary.BinaryPrimitives.ReverseEndianness(v);
    }
}
