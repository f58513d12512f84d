using System.Buffers.Binary;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Reads a ziplist, the packed encoding RDB files from Redis before 7.0 hold for small hashes,
/// sorted sets and list nodes: a 10-byte header (total bytes, tail offset, count), entries of
/// [previous entry length][encoding][data], and a 0xFF terminator. By hand for the reason
/// <see cref="Listpack"/> gives; corrupt input throws <see cref="InvalidDataException"/>.
/// </summary>
public ref struct Ziplist
{
    private const int HeaderSize = 10;
    private const byte End = 0xFF;

    private readonly ReadOnlySpan<byte> _blob;
    private int _pos;

    public Ziplist(ReadOnlySpan<byte> blob)
    {
        if (blob.Length < HeaderSize + 1)
            throw new InvalidDataException($"a ziplist of {blob.Length} bytes is shorter than its header");
        uint total = BinaryPrimitives.ReadUInt32LittleEndian(blob);
        if (total != blob.Length)
            throw new InvalidDataException($"the ziplist header says {total} bytes, the blob has {blob.Length}");
        if (blob[^1] != End)
            throw new InvalidDataException("the ziplist does not end with 0xFF");
        _blob = blob;
        _pos = HeaderSize;
    }

    /// <summary>Reads the next element; false at the terminator.</summary>
    public bool Next(out PackedElement element)
    {
        if (_blob[_pos] == End)
        {
            if (_pos != _blob.Length - 1)
                throw new InvalidDataException($"the ziplist terminator is at byte {_pos} of {_blob.Length}");
            element = default;
            return false;
        }
        int at = _pos;
        _pos += Slice(0, 1)[0] < 254 ? 1 : 5;   // the previous entry's length: only for walking backwards
        byte encoding = Slice(0, 1)[0];
        switch (encoding >> 6)
        {
            case 0:
                element = Bytes(1, encoding & 0x3F);
                return true;
            case 1:
                element = Bytes(2, (encoding & 0x3F) << 8 | Slice(1, 1)[0]);
                return true;
            case 2:
                if (encoding != 0x80)
                    throw new InvalidDataException($"unknown ziplist string encoding 0x{encoding:X2} at byte {at}");
                uint length = BinaryPrimitives.ReadUInt32BigEndian(Slice(1, 4));
                if (length > int.MaxValue - 5)
                    throw new InvalidDataException($"a ziplist string of {length} bytes");
                element = Bytes(5, (int)length);
                return true;
        }
        long value;
        int size;
        switch (encoding)
        {
            case 0xC0: value = BinaryPrimitives.ReadInt16LittleEndian(Slice(1, size = 2)); break;
            case 0xD0: value = BinaryPrimitives.ReadInt32LittleEndian(Slice(1, size = 4)); break;
            case 0xE0: value = BinaryPrimitives.ReadInt64LittleEndian(Slice(1, size = 8)); break;
            case 0xF0:
                var b = Slice(1, size = 3);
                value = (b[0] | b[1] << 8 | b[2] << 16) << 8 >> 8;
                break;
            case 0xFE: value = (sbyte)Slice(1, size = 1)[0]; break;
            case >= 0xF1 and <= 0xFD:
                value = (encoding & 0x0F) - 1;   // 0 to 12 kept in the encoding byte itself
                size = 0;
                break;
            default:
                throw new InvalidDataException($"unknown ziplist integer encoding 0x{encoding:X2} at byte {at}");
        }
        _pos += 1 + size;
        element = new PackedElement(value);
        return true;
    }

    private PackedElement Bytes(int headerLength, int length)
    {
        var bytes = Slice(headerLength, length);
        _pos += headerLength + length;
        return new PackedElement(bytes);
    }

    private readonly ReadOnlySpan<byte> Slice(int offset, int length)
    {
        if ((long)_pos + offset + length > _blob.Length - 1)
            throw new InvalidDataException($"a ziplist entry at byte {_pos} runs past the end of the blob");
        return _blob.Slice(_pos + offset, length);
    }
}
