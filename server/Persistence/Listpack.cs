using System.Buffers.Binary;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Reads a listpack (Redis 7's packed encoding of small hashes, sets, sorted sets and list nodes):
/// a 6-byte header (total bytes, element count), entries each followed by their own length
/// backwards, and a 0xFF terminator. Written by hand because no .NET library reads Redis's
/// in-memory encodings; every length is checked against the blob, and a corrupt one throws
/// <see cref="InvalidDataException"/>.
/// </summary>
public ref struct Listpack
{
    private const int HeaderSize = 6;
    private const ushort UnknownCount = ushort.MaxValue;
    private const byte End = 0xFF;

    private readonly ReadOnlySpan<byte> _blob;
    private readonly int _statedCount;
    private int _pos;
    private int _read;

    public Listpack(ReadOnlySpan<byte> blob)
    {
        if (blob.Length < HeaderSize + 1)
            throw new InvalidDataException($"a listpack of {blob.Length} bytes is shorter than its header");
        uint total = BinaryPrimitives.ReadUInt32LittleEndian(blob);
        if (total != blob.Length)
            throw new InvalidDataException($"the listpack header says {total} bytes, the blob has {blob.Length}");
        if (blob[^1] != End)
            throw new InvalidDataException("the listpack does not end with 0xFF");
        _blob = blob;
        _statedCount = BinaryPrimitives.ReadUInt16LittleEndian(blob[4..]);
        _pos = HeaderSize;
    }

    /// <summary>The element count the header states, or -1 when it is too large to be kept there.</summary>
    public readonly int StatedCount => _statedCount == UnknownCount ? -1 : _statedCount;

    /// <summary>Reads the next element; false at the terminator.</summary>
    public bool Next(out PackedElement element)
    {
        byte first = _blob[_pos];
        if (first == End)
        {
            if (_pos != _blob.Length - 1)
                throw new InvalidDataException($"the listpack terminator is at byte {_pos} of {_blob.Length}");
            if (_statedCount != UnknownCount && _read != _statedCount)
                throw new InvalidDataException($"the listpack header says {_statedCount} elements, it holds {_read}");
            element = default;
            return false;
        }
        int contentLength;
        if ((first & 0x80) == 0)
        {
            element = new PackedElement(first & 0x7F);
            contentLength = 1;
        }
        else if ((first & 0xC0) == 0x80)
        {
            int length = first & 0x3F;
            element = new PackedElement(Slice(1, length));
            contentLength = 1 + length;
        }
        else if ((first & 0xE0) == 0xC0)
        {
            int value = ((first & 0x1F) << 8) | Slice(1, 1)[0];
            element = new PackedElement(value >= 1 << 12 ? value - (1 << 13) : value);
            contentLength = 2;
        }
        else if ((first & 0xF0) == 0xE0)
        {
            int length = ((first & 0x0F) << 8) | Slice(1, 1)[0];
            element = new PackedElement(Slice(2, length));
            contentLength = 2 + length;
        }
        else
        {
            switch (first)
            {
                case 0xF0:
                    uint length = BinaryPrimitives.ReadUInt32LittleEndian(Slice(1, 4));
                    if (length > int.MaxValue - 5)
                        throw new InvalidDataException($"a listpack string of {length} bytes");
                    element = new PackedElement(Slice(5, (int)length));
                    contentLength = 5 + (int)length;
                    break;
                case 0xF1:
                    element = new PackedElement(BinaryPrimitives.ReadInt16LittleEndian(Slice(1, 2)));
                    contentLength = 3;
                    break;
                case 0xF2:
                    var b = Slice(1, 3);
                    element = new PackedElement((b[0] | b[1] << 8 | b[2] << 16) << 8 >> 8);
                    contentLength = 4;
                    break;
                case 0xF3:
                    element = new PackedElement(BinaryPrimitives.ReadInt32LittleEndian(Slice(1, 4)));
                    contentLength = 5;
                    break;
                case 0xF4:
                    element = new PackedElement(BinaryPrimitives.ReadInt64LittleEndian(Slice(1, 8)));
                    contentLength = 9;
                    break;
                default:
                    throw new InvalidDataException($"unknown listpack entry encoding 0x{first:X2} at byte {_pos}");
            }
        }
        // The entry's length again, backwards, in 7-bit groups: 1 to 5 bytes (Redis's size steps),
        // checked, since backward walks (XREVRANGE over a loaded stream node) rely on it.
        int backLength = contentLength <= 127 ? 1 : contentLength < 16383 ? 2 : contentLength < 2097151 ? 3 : contentLength < 268435455 ? 4 : 5;
        ReadOnlySpan<byte> back = Slice(contentLength, backLength);
        long decoded = 0;
        for (int i = 0; i < backLength; i++)
            decoded = (decoded << 7) | (uint)(back[i] & 127);
        if (decoded != contentLength || (back[0] & 128) != 0 || (backLength > 1 && (back[^1] & 128) == 0))
            throw new InvalidDataException($"the back-length at byte {_pos + contentLength} says {decoded}, the entry has {contentLength} bytes");
        _pos += contentLength + backLength;
        _read++;
        return true;
    }

    private readonly ReadOnlySpan<byte> Slice(int offset, int length)
    {
        // The terminator must stay after every entry, so an entry may not reach the last byte.
        if ((long)_pos + offset + length > _blob.Length - 1)
            throw new InvalidDataException($"a listpack entry at byte {_pos} runs past the end of the blob");
        return _blob.Slice(_pos + offset, length);
    }
}
