using System.Buffers.Binary;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.DataTypes.Packed;

/// <summary>
/// A listpack in tracked native memory, byte for byte Redis's encoding: a 6-byte header (total
/// bytes, element count), elements each followed by their own length written backwards, and a
/// 0xFF terminator. Streams keep their entries in nodes of this form, as Redis does, so a node's
/// size (which decides where Redis starts a new node, and so what approximate trimming removes)
/// is the size Redis computes, and RDB files carry nodes as they are. Written by hand: no .NET
/// library builds Redis's packed encodings. Offsets are positions of elements from the block start.
/// </summary>
public static unsafe class NativeListpack
{
    public const int HeaderSize = 6;
    private const byte End = 0xFF;
    private const ushort UnknownCount = ushort.MaxValue;

    /// <summary>An empty listpack with room for about <paramref name="capacity"/> bytes.</summary>
    public static byte* Create(int capacity)
    {
        byte* lp = TrackedAllocator.Alloc((nuint)Math.Max(capacity, HeaderSize + 1));
        SetTotal(lp, HeaderSize + 1);
        BinaryPrimitives.WriteUInt16LittleEndian(new Span<byte>(lp + 4, 2), 0);
        lp[HeaderSize] = End;
        return lp;
    }

    /// <summary>A copy of a listpack read from outside (RDB), after <see cref="Persistence.Listpack"/> validated it.</summary>
    public static byte* CopyOf(ReadOnlySpan<byte> blob)
    {
        byte* lp = TrackedAllocator.Alloc((nuint)blob.Length);
        blob.CopyTo(new Span<byte>(lp, blob.Length));
        return lp;
    }

    public static void Free(byte* lp) => TrackedAllocator.Free(lp);

    public static int Bytes(byte* lp) => (int)BinaryPrimitives.ReadUInt32LittleEndian(new ReadOnlySpan<byte>(lp, 4));

    public static ReadOnlySpan<byte> AsSpan(byte* lp) => new(lp, Bytes(lp));

    /// <summary>Offset of the first element (the terminator when empty).</summary>
    public const int First = HeaderSize;

    public static bool IsEnd(byte* lp, int offset) => lp[offset] == End;

    // ---- sizes -------------------------------------------------------------------------------

    /// <summary>Bytes an integer element takes, its back-length included.</summary>
    public static int IntegerSize(long value)
    {
        int content = value is >= 0 and <= 127 ? 1
            : value is >= -4096 and <= 4095 ? 2
            : value is >= short.MinValue and <= short.MaxValue ? 3
            : value is >= -8388608 and <= 8388607 ? 4
            : value is >= int.MinValue and <= int.MaxValue ? 5 : 9;
        return content + BackLengthSize(content);
    }

    /// <summary>Bytes a string element takes (stored as an integer when it reads as one, as Redis does).</summary>
    public static int StringSize(ReadOnlySpan<byte> text)
    {
        if (NumberFormat.TryParseInt64(text, out long value))
            return IntegerSize(value);
        int content = text.Length + (text.Length < 64 ? 1 : text.Length < 4096 ? 2 : 5);
        return content + BackLengthSize(content);
    }

    private static int BackLengthSize(int content)
        => content <= 127 ? 1 : content < 16383 ? 2 : content < 2097151 ? 3 : content < 268435455 ? 4 : 5;

    // ---- appending ---------------------------------------------------------------------------

    public static byte* AppendInteger(byte* lp, long value)
    {
        Span<byte> element = stackalloc byte[16];
        int length = EncodeInteger(value, element);
        return AppendEncoded(lp, element[..length], ReadOnlySpan<byte>.Empty);
    }

    public static byte* AppendString(byte* lp, ReadOnlySpan<byte> text)
    {
        if (NumberFormat.TryParseInt64(text, out long value))
            return AppendInteger(lp, value);
        Span<byte> header = stackalloc byte[5];
        int headerLength = EncodeStringHeader(text.Length, header);
        return AppendEncoded(lp, header[..headerLength], text);
    }

    // ---- encoding into a caller's buffer (listpacks built elsewhere: RDB values) ---------------

    /// <summary>
    /// Writes <paramref name="text"/> as one element, back-length included, into
    /// <paramref name="destination"/> (<see cref="StringSize"/> bytes): as an integer when it reads
    /// as one, as lpAppend stores it. Returns the bytes written.
    /// </summary>
    public static int WriteString(ReadOnlySpan<byte> text, Span<byte> destination)
    {
        if (NumberFormat.TryParseInt64(text, out long value))
            return WriteInteger(value, destination);
        int header = EncodeStringHeader(text.Length, destination);
        text.CopyTo(destination[header..]);
        int content = header + text.Length;
        return content + EncodeBackLength(content, destination[content..]);
    }

    /// <summary>Writes an integer element, back-length included (<see cref="IntegerSize"/> bytes); returns the bytes written.</summary>
    public static int WriteInteger(long value, Span<byte> destination)
    {
        int content = EncodeInteger(value, destination);
        return content + EncodeBackLength(content, destination[content..]);
    }

    /// <summary>The header of a string element of <paramref name="length"/> bytes (6-bit, 12-bit or 32-bit length); returns its size.</summary>
    private static int EncodeStringHeader(int length, Span<byte> header)
    {
        if (length < 64)
        {
            header[0] = (byte)(0x80 | length);
            return 1;
        }
        if (length < 4096)
        {
            header[0] = (byte)(0xE0 | (length >> 8));
            header[1] = (byte)length;
            return 2;
        }
        header[0] = 0xF0;
        BinaryPrimitives.WriteUInt32LittleEndian(header[1..], (uint)length);
        return 5;
    }

    /// <summary>Appends an element given as its encoding header and data; grows the block with spare room.</summary>
    private static byte* AppendEncoded(byte* lp, ReadOnlySpan<byte> header, ReadOnlySpan<byte> data)
    {
        int content = header.Length + data.Length;
        Span<byte> back = stackalloc byte[5];
        int backLength = EncodeBackLength(content, back);
        int total = Bytes(lp);
        long grown = (long)total + content + backLength;
        if (grown > int.MaxValue - 64)
            throw new BlockTooLargeException(grown);
        lp = EnsureCapacity(lp, (int)grown);
        byte* at = lp + total - 1; // over the old terminator
        header.CopyTo(new Span<byte>(at, header.Length));
        data.CopyTo(new Span<byte>(at + header.Length, data.Length));
        back[..backLength].CopyTo(new Span<byte>(at + content, backLength));
        at[content + backLength] = End;
        SetTotal(lp, (int)grown);
        ushort count = BinaryPrimitives.ReadUInt16LittleEndian(new ReadOnlySpan<byte>(lp + 4, 2));
        if (count != UnknownCount)
            BinaryPrimitives.WriteUInt16LittleEndian(new Span<byte>(lp + 4, 2), (ushort)(count + 1));
        return lp;
    }

    /// <summary>Room for <paramref name="needed"/> bytes: half as much again when the block must move, so appends stay amortized.</summary>
    private static byte* EnsureCapacity(byte* lp, int needed)
    {
        if ((nuint)needed <= TrackedAllocator.UsableSize(lp))
            return lp;
        long capacity = Math.Min((long)needed + needed / 2, int.MaxValue - 64);
        return TrackedAllocator.Realloc(lp, (nuint)capacity);
    }

    /// <summary>Gives back spare room once no more appends come (a stream node another node follows).</summary>
    public static byte* Shrink(byte* lp)
    {
        int total = Bytes(lp);
        return TrackedAllocator.UsableSize(lp) > (nuint)total + 32 ? TrackedAllocator.Realloc(lp, (nuint)total) : lp;
    }

    /// <summary>
    /// Replaces the integer element at <paramref name="offset"/> with <paramref name="value"/>,
    /// moving the rest when its size changes. Returns the (possibly moved) block.
    /// </summary>
    public static byte* ReplaceInteger(byte* lp, int offset, long value)
    {
        int oldSize = ElementSize(lp, offset);
        Span<byte> element = stackalloc byte[16];
        int content = EncodeInteger(value, element);
        int backLength = EncodeBackLength(content, element[content..]);
        int newSize = content + backLength;
        int total = Bytes(lp);
        if (newSize != oldSize)
        {
            if (newSize > oldSize)
                lp = EnsureCapacity(lp, total + newSize - oldSize);
            Buffer.MemoryCopy(lp + offset + oldSize, lp + offset + newSize, total - offset - oldSize, total - offset - oldSize);
            SetTotal(lp, total + newSize - oldSize);
        }
        element[..newSize].CopyTo(new Span<byte>(lp + offset, newSize));
        return lp;
    }

    private static int EncodeInteger(long value, Span<byte> destination)
    {
        if (value is >= 0 and <= 127)
        {
            destination[0] = (byte)value;
            return 1;
        }
        if (value is >= -4096 and <= 4095)
        {
            int bits = value < 0 ? (1 << 13) + (int)value : (int)value;
            destination[0] = (byte)(0xC0 | (bits >> 8));
            destination[1] = (byte)bits;
            return 2;
        }
        if (value is >= short.MinValue and <= short.MaxValue)
        {
            destination[0] = 0xF1;
            BinaryPrimitives.WriteInt16LittleEndian(destination[1..], (short)value);
            return 3;
        }
        if (value is >= -8388608 and <= 8388607)
        {
            destination[0] = 0xF2;
            destination[1] = (byte)value;
            destination[2] = (byte)(value >> 8);
            destination[3] = (byte)(value >> 16);
            return 4;
        }
        if (value is >= int.MinValue and <= int.MaxValue)
        {
            destination[0] = 0xF3;
            BinaryPrimitives.WriteInt32LittleEndian(destination[1..], (int)value);
            return 5;
        }
        destination[0] = 0xF4;
        BinaryPrimitives.WriteInt64LittleEndian(destination[1..], value);
        return 9;
    }

    /// <summary>The element's length, readable from its last byte backwards in 7-bit groups (Redis's lpEncodeBacklen).</summary>
    private static int EncodeBackLength(int length, Span<byte> destination)
    {
        int size = BackLengthSize(length);
        for (int i = 0; i < size; i++)
        {
            int shift = 7 * (size - 1 - i);
            byte group = (byte)((length >> shift) & 127);
            destination[i] = i == 0 ? group : (byte)(group | 128);
        }
        return size;
    }

    // ---- reading -----------------------------------------------------------------------------

    /// <summary>The element at <paramref name="offset"/>; <paramref name="next"/> is the offset after it.</summary>
    public static ListpackElement Read(byte* lp, int offset, out int next)
    {
        byte* p = lp + offset;
        byte first = *p;
        ListpackElement element;
        int content;
        if ((first & 0x80) == 0)
        {
            element = new ListpackElement(first & 0x7F);
            content = 1;
        }
        else if ((first & 0xC0) == 0x80)
        {
            int length = first & 0x3F;
            element = new ListpackElement(p + 1, length);
            content = 1 + length;
        }
        else if ((first & 0xE0) == 0xC0)
        {
            int bits = ((first & 0x1F) << 8) | p[1];
            element = new ListpackElement(bits >= 1 << 12 ? bits - (1 << 13) : bits);
            content = 2;
        }
        else if ((first & 0xF0) == 0xE0)
        {
            int length = ((first & 0x0F) << 8) | p[1];
            element = new ListpackElement(p + 2, length);
            content = 2 + length;
        }
        else
        {
            switch (first)
            {
                case 0xF0:
                    int length = (int)BinaryPrimitives.ReadUInt32LittleEndian(new ReadOnlySpan<byte>(p + 1, 4));
                    element = new ListpackElement(p + 5, length);
                    content = 5 + length;
                    break;
                case 0xF1:
                    element = new ListpackElement(BinaryPrimitives.ReadInt16LittleEndian(new ReadOnlySpan<byte>(p + 1, 2)));
                    content = 3;
                    break;
                case 0xF2:
                    element = new ListpackElement((p[1] | p[2] << 8 | p[3] << 16) << 8 >> 8);
                    content = 4;
                    break;
                case 0xF3:
                    element = new ListpackElement(BinaryPrimitives.ReadInt32LittleEndian(new ReadOnlySpan<byte>(p + 1, 4)));
                    content = 5;
                    break;
                default:
                    element = new ListpackElement(BinaryPrimitives.ReadInt64LittleEndian(new ReadOnlySpan<byte>(p + 1, 8)));
                    content = 9;
                    break;
            }
        }
        next = offset + content + BackLengthSize(content);
        return element;
    }

    /// <summary>The integer at <paramref name="offset"/> (stream nodes keep their counters and IDs as integers).</summary>
    public static long ReadInteger(byte* lp, int offset, out int next) => Read(lp, offset, out next).Integer;

    /// <summary>The offset after the element at <paramref name="offset"/>.</summary>
    public static int Skip(byte* lp, int offset)
    {
        Read(lp, offset, out int next);
        return next;
    }

    /// <summary>The offset of the element before <paramref name="offset"/> (the terminator's offset for the last one).</summary>
    public static int Previous(byte* lp, int offset)
    {
        byte* p = lp + offset - 1;
        int length = 0, shift = 0;
        while (true)
        {
            length |= (*p & 127) << shift;
            if ((*p & 128) == 0)
                break;
            shift += 7;
            p--;
        }
        return (int)(p - lp) - length;
    }

    // ---- editing (small hashes, sets, sorted sets and list nodes) -------------------------------
    // Unlike the stream's appends, these resize the block to what it needs: a packed value is
    // small and mostly stays its size, so spare room would be memory held per key for nothing.

    /// <summary>Elements in the listpack: the header's count, or a walk when it overflowed 65,534.</summary>
    public static int Count(byte* lp)
    {
        ushort count = BinaryPrimitives.ReadUInt16LittleEndian(new ReadOnlySpan<byte>(lp + 4, 2));
        if (count != UnknownCount)
            return count;
        int n = 0;
        for (int offset = First; !IsEnd(lp, offset); offset = Skip(lp, offset))
            n++;
        return n;
    }

    /// <summary>Offset of the last element, or of the terminator when empty.</summary>
    public static int Last(byte* lp)
    {
        int end = Bytes(lp) - 1;
        return end == HeaderSize ? end : Previous(lp, end);
    }

    /// <summary>Offset of element <paramref name="index"/> (negative: from the tail), or -1 when out of range.</summary>
    public static int Seek(byte* lp, long index)
    {
        if (index >= 0)
        {
            int offset = First;
            for (long i = 0; i < index && !IsEnd(lp, offset); i++)
                offset = Skip(lp, offset);
            return IsEnd(lp, offset) ? -1 : offset;
        }
        int at = Bytes(lp) - 1;
        for (long i = 0; i < -index; i++)
        {
            if (at == HeaderSize)
                return -1;
            at = Previous(lp, at);
        }
        return at;
    }

    /// <summary>
    /// Offset of the first element from <paramref name="offset"/> on that reads as
    /// <paramref name="text"/>, looking at one element and then skipping <paramref name="skip"/>
    /// (1 for a hash's fields or a sorted set's members, 0 for a set), or -1.
    /// </summary>
    public static int Find(byte* lp, int offset, ReadOnlySpan<byte> text, int skip)
    {
        long integer = 0;
        bool textIsInteger = text.Length <= 20 && NumberFormat.TryParseInt64(text, out integer);
        while (!IsEnd(lp, offset))
        {
            var element = Read(lp, offset, out int next);
            if (element.IsInteger ? textIsInteger && element.Integer == integer : element.Span.SequenceEqual(text))
                return offset;
            for (int i = 0; i < skip; i++)
                next = Skip(lp, next);
            offset = next;
        }
        return -1;
    }

    /// <summary>Bytes a block would have after inserting <paramref name="text"/> (to check a size limit first).</summary>
    public static long BytesWith(byte* lp, ReadOnlySpan<byte> text) => (long)Bytes(lp) + StringSize(text);

    /// <summary>
    /// Inserts <paramref name="text"/> (as an integer when it reads as one) before the element at
    /// <paramref name="offset"/> (the terminator's offset appends). Returns the (possibly moved) block.
    /// </summary>
    public static byte* InsertString(byte* lp, int offset, ReadOnlySpan<byte> text)
    {
        int size = StringSize(text);
        lp = OpenGap(lp, offset, size);
        WriteString(text, new Span<byte>(lp + offset, size));
        AddToCount(lp, 1);
        return lp;
    }

    /// <summary>Inserts an integer element before <paramref name="offset"/>; returns the (possibly moved) block.</summary>
    public static byte* InsertInteger(byte* lp, int offset, long value)
    {
        int size = IntegerSize(value);
        lp = OpenGap(lp, offset, size);
        WriteInteger(value, new Span<byte>(lp + offset, size));
        AddToCount(lp, 1);
        return lp;
    }

    /// <summary>Replaces the element at <paramref name="offset"/> with <paramref name="text"/>; returns the (possibly moved) block.</summary>
    public static byte* ReplaceString(byte* lp, int offset, ReadOnlySpan<byte> text)
    {
        int oldSize = ElementSize(lp, offset);
        int newSize = StringSize(text);
        lp = Resize(lp, offset + oldSize, newSize - oldSize);
        WriteString(text, new Span<byte>(lp + offset, newSize));
        return lp;
    }

    /// <summary>Removes <paramref name="elements"/> elements from <paramref name="offset"/> on; returns the (possibly moved) block.</summary>
    public static byte* Delete(byte* lp, int offset, int elements)
    {
        int end = offset;
        for (int i = 0; i < elements; i++)
            end = Skip(lp, end);
        lp = Resize(lp, end, offset - end);
        AddToCount(lp, -elements);
        return lp;
    }

    /// <summary>Makes room for <paramref name="size"/> bytes at <paramref name="offset"/>, moving what follows.</summary>
    private static byte* OpenGap(byte* lp, int offset, int size) => Resize(lp, offset, size);

    /// <summary>
    /// Moves the bytes from <paramref name="from"/> to the end by <paramref name="delta"/> (growing
    /// or shrinking the block to fit exactly, give or take the allocator's rounding) and updates
    /// the total. Returns the (possibly moved) block.
    /// </summary>
    private static byte* Resize(byte* lp, int from, int delta)
    {
        int total = Bytes(lp);
        long resized = (long)total + delta;
        if (resized > int.MaxValue - 64)
            throw new BlockTooLargeException(resized);
        if (delta > 0 && (nuint)resized > TrackedAllocator.UsableSize(lp))
            lp = TrackedAllocator.Realloc(lp, (nuint)resized);
        if (delta != 0)
            Buffer.MemoryCopy(lp + from, lp + from + delta, total - from, total - from);
        SetTotal(lp, (int)resized);
        if (delta < 0 && TrackedAllocator.UsableSize(lp) >= (nuint)resized * 2 + 16)
            lp = TrackedAllocator.Realloc(lp, (nuint)resized); // give back what a shrunk value no longer needs
        return lp;
    }

    /// <summary>Adjusts the header's count; once it reaches 65,535 it stays "unknown" and is counted by walking.</summary>
    private static void AddToCount(byte* lp, int delta)
    {
        ushort count = BinaryPrimitives.ReadUInt16LittleEndian(new ReadOnlySpan<byte>(lp + 4, 2));
        if (count == UnknownCount)
        {
            if (delta < 0 && Count(lp) < UnknownCount)
                BinaryPrimitives.WriteUInt16LittleEndian(new Span<byte>(lp + 4, 2), (ushort)Count(lp));
            return;
        }
        int updated = count + delta;
        BinaryPrimitives.WriteUInt16LittleEndian(new Span<byte>(lp + 4, 2), updated >= UnknownCount ? UnknownCount : (ushort)updated);
    }

    private static int ElementSize(byte* lp, int offset)
    {
        Read(lp, offset, out int next);
        return next - offset;
    }

    private static void SetTotal(byte* lp, int total)
        => BinaryPrimitives.WriteUInt32LittleEndian(new Span<byte>(lp, 4), (uint)total);
}

/// <summary>One element of a <see cref="NativeListpack"/>: bytes in the block, or an integer it stored in binary.</summary>
public readonly unsafe struct ListpackElement
{
    private readonly byte* _bytes;
    private readonly int _length;

    public ListpackElement(long integer)
    {
        Integer = integer;
        IsInteger = true;
    }

    public ListpackElement(byte* bytes, int length)
    {
        _bytes = bytes;
        _length = length;
    }

    public bool IsInteger { get; }
    public long Integer { get; }

    /// <summary>The element as Redis replies it: its bytes, or the integer's text in <paramref name="scratch"/> (20 bytes suffice).</summary>
    public ReadOnlySpan<byte> AsBytes(Span<byte> scratch)
    {
        if (!IsInteger)
            return new ReadOnlySpan<byte>(_bytes, _length);
        System.Buffers.Text.Utf8Formatter.TryFormat(Integer, scratch, out int written);
        return scratch[..written];
    }

    /// <summary>The bytes of a string element (empty for an integer one: use <see cref="AsBytes"/>).</summary>
    public ReadOnlySpan<byte> Span => new(_bytes, _length);

    /// <summary>The length of the element as text (an integer's digits and sign).</summary>
    public int TextLength => IsInteger ? NumberFormat.DigitCount(Integer) : _length;

    /// <summary>True when the element reads as <paramref name="text"/>.</summary>
    public bool Is(ReadOnlySpan<byte> text)
    {
        Span<byte> scratch = stackalloc byte[20];
        return AsBytes(scratch).SequenceEqual(text);
    }
}
