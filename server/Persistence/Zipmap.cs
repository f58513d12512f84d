using System.Buffers.Binary;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Reads a zipmap, the encoding of small hashes in RDB files from Redis 2.x (RDB type 9, which
/// Redis 7 still loads): a count byte, then [length][field][length][free][value][free bytes]
/// pairs and a 0xFF terminator. Corrupt input throws <see cref="InvalidDataException"/>.
/// </summary>
public ref struct Zipmap
{
    private const byte End = 0xFF;
    private const byte BigLength = 254;
    private readonly ReadOnlySpan<byte> _blob;
    private int _pos;

    public Zipmap(ReadOnlySpan<byte> blob)
    {
        if (blob.Length < 2 || blob[^1] != End)
            throw new InvalidDataException("the zipmap does not end with 0xFF");
        _blob = blob;
        _pos = 1;   // the count byte is only a hint (254 and up: count them)
    }

    /// <summary>Reads the next field and value; false at the terminator.</summary>
    public bool Next(out ReadOnlySpan<byte> field, out ReadOnlySpan<byte> value)
    {
        if (_blob[_pos] == End)
        {
            if (_pos != _blob.Length - 1)
                throw new InvalidDataException($"the zipmap terminator is at byte {_pos} of {_blob.Length}");
            field = value = default;
            return false;
        }
        field = Take(ReadLength());
        int valueLength = ReadLength();
        int free = Take(1)[0];
        value = Take(valueLength);
        Take(free);
        return true;
    }

    private int ReadLength()
    {
        byte first = Take(1)[0];
        if (first < BigLength)
            return first;
        if (first != BigLength)
            throw new InvalidDataException($"zipmap length byte 0x{first:X2} at byte {_pos - 1}");
        uint length = BinaryPrimitives.ReadUInt32LittleEndian(Take(4));
        if (length > int.MaxValue)
            throw new InvalidDataException($"a zipmap string of {length} bytes");
        return (int)length;
    }

    private ReadOnlySpan<byte> Take(int length)
    {
        if ((long)_pos + length > _blob.Length - 1)
            throw new InvalidDataException($"a zipmap entry at byte {_pos} runs past the end of the blob");
        var bytes = _blob.Slice(_pos, length);
        _pos += length;
        return bytes;
    }
}
