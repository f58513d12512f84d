using System.Buffers.Binary;
using System.Buffers.Text;
using System.Runtime.InteropServices;

namespace Diagnostics.Server.DataTypes.Streams;

/// <summary>
/// A stream entry ID: milliseconds and a sequence number, both unsigned 64-bit, ordered by
/// milliseconds then sequence. Written "ms-seq" in replies and arguments, and as 16 big-endian
/// bytes in RDB files (so byte order is ID order).
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public readonly struct StreamId(ulong ms, ulong seq) : IComparable<StreamId>, IEquatable<StreamId>
{
    public readonly ulong Ms = ms;
    public readonly ulong Seq = seq;

    public static StreamId Min => default;
    public static StreamId Max => new(ulong.MaxValue, ulong.MaxValue);

    /// <summary>Longest "ms-seq" text: two 20-digit numbers and the dash.</summary>
    public const int MaxTextLength = 41;

    public bool IsZero => Ms == 0 && Seq == 0;

    public int CompareTo(StreamId other) => Ms != other.Ms ? Ms.CompareTo(other.Ms) : Seq.CompareTo(other.Seq);
    public bool Equals(StreamId other) => Ms == other.Ms && Seq == other.Seq;
    public override bool Equals(object? obj) => obj is StreamId other && Equals(other);
    public override int GetHashCode() => HashCode.Combine(Ms, Seq);
    public static bool operator <(StreamId a, StreamId b) => a.CompareTo(b) < 0;
    public static bool operator >(StreamId a, StreamId b) => a.CompareTo(b) > 0;
    public static bool operator <=(StreamId a, StreamId b) => a.CompareTo(b) <= 0;
    public static bool operator >=(StreamId a, StreamId b) => a.CompareTo(b) >= 0;
    public static bool operator ==(StreamId a, StreamId b) => a.Equals(b);
    public static bool operator !=(StreamId a, StreamId b) => !a.Equals(b);

    /// <summary>The next ID (sequence + 1, or the next millisecond when the sequence is full); false after the last possible ID.</summary>
    public bool TryIncrement(out StreamId next)
    {
        if (Seq != ulong.MaxValue)
            next = new StreamId(Ms, Seq + 1);
        else if (Ms != ulong.MaxValue)
            next = new StreamId(Ms + 1, 0);
        else
        {
            next = this;
            return false;
        }
        return true;
    }

    /// <summary>The previous ID; false before 0-0.</summary>
    public bool TryDecrement(out StreamId previous)
    {
        if (Seq != 0)
            previous = new StreamId(Ms, Seq - 1);
        else if (Ms != 0)
            previous = new StreamId(Ms - 1, ulong.MaxValue);
        else
        {
            previous = this;
            return false;
        }
        return true;
    }

    /// <summary>Writes "ms-seq"; returns the length (at most <see cref="MaxTextLength"/>).</summary>
    public int Format(Span<byte> destination)
    {
        Utf8Formatter.TryFormat(Ms, destination, out int ms);
        destination[ms] = (byte)'-';
        Utf8Formatter.TryFormat(Seq, destination[(ms + 1)..], out int seq);
        return ms + 1 + seq;
    }

    public override string ToString()
    {
        Span<byte> text = stackalloc byte[MaxTextLength];
        return System.Text.Encoding.ASCII.GetString(text[..Format(text)]);
    }

    /// <summary>The 16 big-endian bytes RDB files and stream node keys use.</summary>
    public void WriteBigEndian(Span<byte> destination)
    {
        BinaryPrimitives.WriteUInt64BigEndian(destination, Ms);
        BinaryPrimitives.WriteUInt64BigEndian(destination[8..], Seq);
    }

    public static StreamId ReadBigEndian(ReadOnlySpan<byte> source)
        => new(BinaryPrimitives.ReadUInt64BigEndian(source), BinaryPrimitives.ReadUInt64BigEndian(source[8..]));

    /// <summary>
    /// Parses "ms" or "ms-seq" as Redis's streamGenericParseIDOrReply: a missing sequence is
    /// <paramref name="missingSeq"/>; with <paramref name="allowAutoSeq"/> "ms-*" leaves the
    /// sequence to the caller (<paramref name="seqGiven"/> false). "-" and "+" (the smallest and
    /// largest IDs) unless <paramref name="strict"/>.
    /// </summary>
    public static bool TryParse(ReadOnlySpan<byte> text, ulong missingSeq, bool strict, bool allowAutoSeq, out StreamId id, out bool seqGiven)
    {
        id = default;
        seqGiven = true;
        if (text.Length > 127)
            return false;
        if (!strict && text.Length == 1 && text[0] == (byte)'-')
            return true;
        if (!strict && text.Length == 1 && text[0] == (byte)'+')
        {
            id = Max;
            return true;
        }
        int dash = text.IndexOf((byte)'-');
        ReadOnlySpan<byte> msText = dash < 0 ? text : text[..dash];
        if (!TryParseUnsigned(msText, out ulong ms))
            return false;
        ulong seq = missingSeq;
        if (dash >= 0)
        {
            ReadOnlySpan<byte> seqText = text[(dash + 1)..];
            if (allowAutoSeq && seqText.Length == 1 && seqText[0] == (byte)'*')
            {
                seqGiven = false;
                seq = 0;
            }
            else if (!TryParseUnsigned(seqText, out seq))
                return false;
        }
        id = new StreamId(ms, seq);
        return true;
    }

    /// <summary>An unsigned 64-bit decimal as Redis's string2ull reads one (through strtoull): leading spaces and a '+' allowed.</summary>
    private static bool TryParseUnsigned(ReadOnlySpan<byte> text, out ulong value)
    {
        value = 0;
        while (!text.IsEmpty && text[0] is (byte)' ' or (byte)'\t' or (byte)'\n' or (byte)'\v' or (byte)'\f' or (byte)'\r')
            text = text[1..];
        if (!text.IsEmpty && text[0] == (byte)'+')
            text = text[1..];
        while (text.Length > 1 && text[0] == (byte)'0')
            text = text[1..];
        if (text.IsEmpty || text.Length > 20)
            return false;
        foreach (byte b in text)
        {
            if (b is < (byte)'0' or > (byte)'9')
                return false;
            ulong next = value * 10 + (ulong)(b - '0');
            if (value > ulong.MaxValue / 10 || next < value * 10)
                return false;
            value = next;
        }
        return true;
    }
}
