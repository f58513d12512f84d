using System.Buffers.Text;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// One element of a packed encoding Redis writes into RDB files (listpack, ziplist, intset,
/// zipmap): either bytes inside the blob or an integer the encoding stored in binary.
/// </summary>
public readonly ref struct PackedElement
{
    private readonly ReadOnlySpan<byte> _bytes;

    public PackedElement(ReadOnlySpan<byte> bytes)
    {
        _bytes = bytes;
        IsInteger = false;
        Integer = 0;
    }

    public PackedElement(long integer)
    {
        _bytes = default;
        IsInteger = true;
        Integer = integer;
    }

    public bool IsInteger { get; }
    public long Integer { get; }

    /// <summary>The element as Redis would reply it: its bytes, or the integer's decimal text written into <paramref name="scratch"/> (20 bytes suffice).</summary>
    public ReadOnlySpan<byte> AsBytes(Span<byte> scratch)
    {
        if (!IsInteger)
            return _bytes;
        Utf8Formatter.TryFormat(Integer, scratch, out int written);
        return scratch[..written];
    }
}
