using System.Buffers;

namespace Diagnostics.Server.Scripting.Libraries;

/// <summary>A growable byte buffer on ArrayPool for building a library's output; Dispose returns the array.</summary>
internal struct PooledBytes : IDisposable
{
    private byte[] _array;
    private int _length;

    public PooledBytes(int capacity)
    {
        _array = ArrayPool<byte>.Shared.Rent(Math.Max(capacity, 16));
        _length = 0;
    }

    public readonly ReadOnlySpan<byte> Written => _array.AsSpan(0, _length);

    /// <summary>Room for <paramref name="count"/> more bytes, to be committed with <see cref="Advance"/>.</summary>
    public Span<byte> Reserve(int count)
    {
        if (_array.Length - _length < count)
        {
            var larger = ArrayPool<byte>.Shared.Rent(Math.Max(_array.Length * 2, _length + count));
            _array.AsSpan(0, _length).CopyTo(larger);
            ArrayPool<byte>.Shared.Return(_array);
            _array = larger;
        }
        return _array.AsSpan(_length, count);
    }

    public void Advance(int count) => _length += count;

    public void Append(byte value)
    {
        Reserve(1)[0] = value;
        _length++;
    }

    public void Append(ReadOnlySpan<byte> bytes)
    {
        bytes.CopyTo(Reserve(bytes.Length));
        _length += bytes.Length;
    }

    public void Dispose()
    {
        if (_array is not null)
            ArrayPool<byte>.Shared.Return(_array);
        _array = null!;
    }
}
