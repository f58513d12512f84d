using System.Buffers.Binary;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.DataTypes.Packed;

/// <summary>
/// An intset in tracked native memory, byte for byte Redis's encoding (intset.c): element width
/// (2, 4 or 8 bytes, the narrowest that holds every member), element count, then the members
/// sorted ascending, little-endian. Small sets of integers are held this way, as in Redis, so a
/// set of five small integers costs one block of 18 bytes, and RDB files and DUMP payloads carry
/// the block as it is. Membership is a binary search; a wider value upgrades every element, and
/// the width never shrinks back (as Redis). Blocks are sized to what they hold: an edit that
/// needs more room than the allocator's rounding gave moves the block, so callers always keep
/// the returned pointer.
/// </summary>
public static unsafe class NativeIntset
{
    public const int HeaderSize = 8;

    /// <summary>An empty intset of 2-byte elements.</summary>
    public static byte* Create()
    {
        byte* set = TrackedAllocator.Alloc(HeaderSize);
        SetWidth(set, sizeof(short));
        SetCount(set, 0);
        return set;
    }

    /// <summary>A copy of an intset read from outside (RDB), already validated by the caller.</summary>
    public static byte* CopyOf(ReadOnlySpan<byte> blob)
    {
        byte* set = TrackedAllocator.Alloc((nuint)blob.Length);
        blob.CopyTo(new Span<byte>(set, blob.Length));
        return set;
    }

    public static int Width(byte* set) => (int)BinaryPrimitives.ReadUInt32LittleEndian(new ReadOnlySpan<byte>(set, 4));

    public static int Count(byte* set) => (int)BinaryPrimitives.ReadUInt32LittleEndian(new ReadOnlySpan<byte>(set + 4, 4));

    /// <summary>The blob's length: header plus every element (intsetBlobLen).</summary>
    public static int Bytes(byte* set) => HeaderSize + Width(set) * Count(set);

    public static ReadOnlySpan<byte> AsSpan(byte* set) => new(set, Bytes(set));

    /// <summary>The narrowest width that holds <paramref name="value"/> (_intsetValueEncoding).</summary>
    public static int WidthFor(long value)
        => value is < int.MinValue or > int.MaxValue ? sizeof(long)
        : value is < short.MinValue or > short.MaxValue ? sizeof(int)
        : sizeof(short);

    /// <summary>The member at <paramref name="index"/> (0 is the smallest).</summary>
    public static long Get(byte* set, int index) => Read(set, Width(set), index);

    public static long Min(byte* set) => Get(set, 0);

    public static long Max(byte* set) => Get(set, Count(set) - 1);

    public static bool Contains(byte* set, long value) => WidthFor(value) <= Width(set) && Search(set, value, out _);

    /// <summary>
    /// Binary search: true with the member's index when present, else false with the index where
    /// it would be inserted. The ends are checked first, so appends in order cost O(1).
    /// </summary>
    public static bool Search(byte* set, long value, out int position)
    {
        int width = Width(set);
        int count = Count(set);
        if (count == 0)
        {
            position = 0;
            return false;
        }
        if (value > Read(set, width, count - 1))
        {
            position = count;
            return false;
        }
        if (value < Read(set, width, 0))
        {
            position = 0;
            return false;
        }
        int low = 0, high = count - 1;
        while (low <= high)
        {
            int middle = (int)((uint)(low + high) >> 1);
            long current = Read(set, width, middle);
            if (value > current)
                low = middle + 1;
            else if (value < current)
                high = middle - 1;
            else
            {
                position = middle;
                return true;
            }
        }
        position = low;
        return false;
    }

    /// <summary>Adds <paramref name="value"/>; <paramref name="added"/> is false when it was there. Returns the (possibly moved) block.</summary>
    public static byte* Add(byte* set, long value, out bool added)
    {
        int width = Width(set);
        int count = Count(set);
        int needed = WidthFor(value);
        if (needed > width)
        {
            added = true;
            return Upgrade(set, width, count, needed, value);
        }
        if (Search(set, value, out int position))
        {
            added = false;
            return set;
        }
        set = Resize(set, HeaderSize + width * (count + 1));
        byte* at = set + HeaderSize + width * position;
        Buffer.MemoryCopy(at, at + width, width * (count - position), width * (count - position));
        Write(set, width, position, value);
        SetCount(set, count + 1);
        added = true;
        return set;
    }

    /// <summary>
    /// Widens every element to <paramref name="width"/> and adds a value that needed it: being
    /// outside the old range, it goes first when negative, last otherwise (intsetUpgradeAndAdd).
    /// </summary>
    private static byte* Upgrade(byte* set, int oldWidth, int count, int width, long value)
    {
        set = Resize(set, HeaderSize + width * (count + 1));
        int prepend = value < 0 ? 1 : 0;
        // From the back, so no element is overwritten before it has been read.
        for (int i = count - 1; i >= 0; i--)
            Write(set, width, i + prepend, Read(set, oldWidth, i));
        Write(set, width, prepend == 1 ? 0 : count, value);
        SetWidth(set, width);
        SetCount(set, count + 1);
        return set;
    }

    /// <summary>Removes <paramref name="value"/>; <paramref name="removed"/> is false when it was not there. Returns the (possibly moved) block.</summary>
    public static byte* Remove(byte* set, long value, out bool removed)
    {
        int width = Width(set);
        if (WidthFor(value) > width || !Search(set, value, out int position))
        {
            removed = false;
            return set;
        }
        int count = Count(set);
        byte* at = set + HeaderSize + width * position;
        Buffer.MemoryCopy(at + width, at, width * (count - position - 1), width * (count - position - 1));
        SetCount(set, count - 1);
        removed = true;
        return Resize(set, HeaderSize + width * (count - 1));
    }

    /// <summary>Bytes the set would take with <paramref name="value"/> added (a size check before a conversion).</summary>
    public static long BytesWith(byte* set, long value)
        => HeaderSize + (long)Math.Max(Width(set), WidthFor(value)) * (Count(set) + 1);

    private static long Read(byte* set, int width, int index)
    {
        byte* at = set + HeaderSize + width * index;
        return width switch
        {
            sizeof(short) => BinaryPrimitives.ReadInt16LittleEndian(new ReadOnlySpan<byte>(at, 2)),
            sizeof(int) => BinaryPrimitives.ReadInt32LittleEndian(new ReadOnlySpan<byte>(at, 4)),
            _ => BinaryPrimitives.ReadInt64LittleEndian(new ReadOnlySpan<byte>(at, 8)),
        };
    }

    private static void Write(byte* set, int width, int index, long value)
    {
        byte* at = set + HeaderSize + width * index;
        switch (width)
        {
            case sizeof(short):
                BinaryPrimitives.WriteInt16LittleEndian(new Span<byte>(at, 2), (short)value);
                break;
            case sizeof(int):
                BinaryPrimitives.WriteInt32LittleEndian(new Span<byte>(at, 4), (int)value);
                break;
            default:
                BinaryPrimitives.WriteInt64LittleEndian(new Span<byte>(at, 8), value);
                break;
        }
    }

    /// <summary>
    /// Fits the block to <paramref name="size"/> bytes: moves it when it must grow past what the
    /// allocator gave, or when it shrank to under half of it (so a drained set gives memory back).
    /// </summary>
    private static byte* Resize(byte* set, int size)
    {
        nuint usable = TrackedAllocator.UsableSize(set);
        if ((nuint)size > usable || usable >= (nuint)size * 2 + 16)
            return TrackedAllocator.Realloc(set, (nuint)size);
        return set;
    }

    private static void SetWidth(byte* set, int width) => BinaryPrimitives.WriteUInt32LittleEndian(new Span<byte>(set, 4), (uint)width);

    private static void SetCount(byte* set, int count) => BinaryPrimitives.WriteUInt32LittleEndian(new Span<byte>(set + 4, 4), (uint)count);
}
