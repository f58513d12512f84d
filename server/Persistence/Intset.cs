using System.Buffers.Binary;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Reads an intset, Redis's encoding of small sets of integers: element width (2, 4 or 8 bytes),
/// count, then the sorted little-endian integers. Corrupt input throws <see cref="InvalidDataException"/>.
/// </summary>
public ref struct Intset
{
    private const int HeaderSize = 8;
    private readonly ReadOnlySpan<byte> _blob;
    private readonly int _width;
    private int _pos;

    public Intset(ReadOnlySpan<byte> blob)
    {
        if (blob.Length < HeaderSize)
            throw new InvalidDataException($"an intset of {blob.Length} bytes is shorter than its header");
        uint width = BinaryPrimitives.ReadUInt32LittleEndian(blob);
        uint count = BinaryPrimitives.ReadUInt32LittleEndian(blob[4..]);
        if (width is not (2 or 4 or 8))
            throw new InvalidDataException($"intset element width {width} is not 2, 4 or 8");
        if (HeaderSize + (long)width * count != blob.Length)
            throw new InvalidDataException($"an intset of {count} {width}-byte elements cannot be {blob.Length} bytes");
        _blob = blob;
        _width = (int)width;
        _pos = HeaderSize;
        Count = (int)count;
    }

    public int Count { get; }

    public bool Next(out long value)
    {
        if (_pos == _blob.Length)
        {
            value = 0;
            return false;
        }
        var bytes = _blob.Slice(_pos, _width);
        value = _width switch
        {
            2 => BinaryPrimitives.ReadInt16LittleEndian(bytes),
            4 => BinaryPrimitives.ReadInt32LittleEndian(bytes),
            _ => BinaryPrimitives.ReadInt64LittleEndian(bytes),
        };
        _pos += _width;
        return true;
    }
}
