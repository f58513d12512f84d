using System.Buffers.Text;
using System.Globalization;

namespace Diagnostics.Server.Protocol;

/// <summary>Number formatting and parsing with Redis's rules (string2ll, string2ld, %.17g).</summary>
public static class NumberFormat
{
    /// <summary>Parses a signed 64-bit integer the way Redis's string2ll does: no spaces, no '+', no leading zeros.</summary>
    public static bool TryParseInt64(ReadOnlySpan<byte> text, out long value)
    {
        value = 0;
        if (text.IsEmpty || text.Length > 20)
            return false;
        if (text.Length == 1 && text[0] == (byte)'0')
            return true;
        int i = 0;
        bool negative = false;
        if (text[0] == (byte)'-')
        {
            negative = true;
            i = 1;
            if (text.Length == 1)
                return false;
        }
        if (text[i] < (byte)'1' || text[i] > (byte)'9')
            return false;
        ulong magnitude = 0;
        for (; i < text.Length; i++)
        {
            uint digit = (uint)(text[i] - '0');
            if (digit > 9)
                return false;
            if (magnitude > (ulong.MaxValue - digit) / 10)
                return false;
            magnitude = magnitude * 10 + digit;
        }
        if (negative)
        {
            if (magnitude > (ulong)long.MaxValue + 1)
                return false;
            value = (long)(0 - magnitude);
        }
        else
        {
            if (magnitude > long.MaxValue)
                return false;
            value = (long)magnitude;
        }
        return true;
    }

    /// <summary>Parses a double as Redis does for scores and INCRBYFLOAT: no spaces, inf/-inf allowed, NaN refused.</summary>
    /// <summary>Characters <paramref name="value"/> takes as decimal text, the minus sign included.</summary>
    public static int DigitCount(long value)
    {
        if (value == long.MinValue)
            return 20;
        int sign = value < 0 ? 1 : 0;
        ulong magnitude = (ulong)Math.Abs(value);
        int digits = 1;
        while (magnitude >= 10)
        {
            magnitude /= 10;
            digits++;
        }
        return sign + digits;
    }

    public static bool TryParseDouble(ReadOnlySpan<byte> text, out double value)
    {
        value = 0;
        if (text.IsEmpty || text.Length > 5120 || IsSpace(text[0]) || IsSpace(text[^1]))
            return false;
        if (EqualsIgnoreCase(text, "inf"u8) || EqualsIgnoreCase(text, "+inf"u8) || EqualsIgnoreCase(text, "infinity"u8) || EqualsIgnoreCase(text, "+infinity"u8))
        {
            value = double.PositiveInfinity;
            return true;
        }
        if (EqualsIgnoreCase(text, "-inf"u8) || EqualsIgnoreCase(text, "-infinity"u8))
        {
            value = double.NegativeInfinity;
            return true;
        }
        if (!double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out value))
            return false;
        return !double.IsNaN(value);
    }

    /// <summary>
    /// Formats as Redis 7.0's addReplyDouble does: printf("%.17g") (so 0.1 is 0.10000000000000001),
    /// inf/-inf spelled out; integers below 1e17 take the short path, which prints the same.
    /// </summary>
    public static int FormatDouble(double value, Span<byte> target)
    {
        if (double.IsPositiveInfinity(value))
        {
            "inf"u8.CopyTo(target);
            return 3;
        }
        if (double.IsNegativeInfinity(value))
        {
            "-inf"u8.CopyTo(target);
            return 4;
        }
        if (double.IsNaN(value))
        {
            "nan"u8.CopyTo(target);
            return 3;
        }
        if (value == Math.Floor(value) && Math.Abs(value) < 1e17)
        {
            Utf8Formatter.TryFormat((long)value, target, out int whole);
            if (value == 0 && double.IsNegative(value))
            {
                "-0"u8.CopyTo(target);
                return 2;
            }
            return whole;
        }
        return PrintfG17.Format(value, target);
    }

    public static bool EqualsIgnoreCase(ReadOnlySpan<byte> text, ReadOnlySpan<byte> lowerAscii)
    {
        if (text.Length != lowerAscii.Length)
            return false;
        for (int i = 0; i < text.Length; i++)
            if ((text[i] | 0x20) != lowerAscii[i] && text[i] != lowerAscii[i])
                return false;
        return true;
    }

    private static bool IsSpace(byte b) => b is (byte)' ' or (byte)'\t' or (byte)'\n' or (byte)'\r' or (byte)'\v' or (byte)'\f';
}
