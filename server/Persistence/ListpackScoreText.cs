using System.Buffers.Text;
using System.Globalization;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// A sorted-set score as Redis 7.0 stores it in a listpack (zzlInsertAt's d2string): an integral
/// score within ±2^62 as its integer (so the listpack holds it as an integer, and -0 as 0), inf
/// and -inf spelled out, anything else as printf's %.17g. Not the reply format (which rounds to the
/// shortest text): the bytes must be Redis's for a DUMP payload to be Redis's.
/// </summary>
internal static class ListpackScoreText
{
    /// <summary>The largest text: sign, 17 digits, point, "e-308".</summary>
    public const int MaxLength = 32;

    /// <summary>Writes the score's text into <paramref name="destination"/> (<see cref="MaxLength"/> bytes suffice); returns its length.</summary>
    public static int Format(double score, Span<byte> destination)
    {
        if (double.IsNaN(score))
            return Copy("nan"u8, destination);
        if (double.IsPositiveInfinity(score))
            return Copy("inf"u8, destination);
        if (double.IsNegativeInfinity(score))
            return Copy("-inf"u8, destination);
        // Redis's double2ll: exact as a long long within ±LLONG_MAX/2.
        if (score >= -(double)(long.MaxValue / 2) && score <= long.MaxValue / 2 && (long)score == score)
        {
            Utf8Formatter.TryFormat((long)score, destination, out int written);
            return written;
        }
        return FormatG17(score, destination);
    }

    /// <summary>printf's %.17g: 17 significant digits, trailing zeros dropped, exponent form below 1e-4 or from 1e17.</summary>
    private static int FormatG17(double value, Span<byte> destination)
    {
        // "E16" gives the 17 correctly rounded significant digits and the decimal exponent.
        Span<char> e = stackalloc char[32];
        value.TryFormat(e, out int length, "E16", CultureInfo.InvariantCulture);
        e = e[..length];
        int pos = 0;
        int at = 0;
        if (e[0] == '-')
        {
            destination[pos++] = (byte)'-';
            at = 1;
        }
        Span<byte> digits = stackalloc byte[17];
        digits[0] = (byte)e[at];
        for (int i = 0; i < 16; i++)
            digits[i + 1] = (byte)e[at + 2 + i];
        int exponent = int.Parse(e[(at + 19)..], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture);
        int significant = 17;
        while (significant > 1 && digits[significant - 1] == (byte)'0')
            significant--;
        if (exponent < -4 || exponent >= 17)
        {
            destination[pos++] = digits[0];
            if (significant > 1)
            {
                destination[pos++] = (byte)'.';
                digits[1..significant].CopyTo(destination[pos..]);
                pos += significant - 1;
            }
            destination[pos++] = (byte)'e';
            destination[pos++] = exponent < 0 ? (byte)'-' : (byte)'+';
            int magnitude = Math.Abs(exponent);
            if (magnitude < 10)
                destination[pos++] = (byte)'0';
            Utf8Formatter.TryFormat(magnitude, destination[pos..], out int written);
            return pos + written;
        }
        if (exponent < 0)
        {
            destination[pos++] = (byte)'0';
            destination[pos++] = (byte)'.';
            for (int i = -1; i > exponent; i--)
                destination[pos++] = (byte)'0';
            digits[..significant].CopyTo(destination[pos..]);
            return pos + significant;
        }
        int whole = exponent + 1;
        for (int i = 0; i < whole; i++)
            destination[pos++] = i < significant ? digits[i] : (byte)'0';
        if (significant > whole)
        {
            destination[pos++] = (byte)'.';
            digits[whole..significant].CopyTo(destination[pos..]);
            pos += significant - whole;
        }
        return pos;
    }

    private static int Copy(ReadOnlySpan<byte> text, Span<byte> destination)
    {
        text.CopyTo(destination);
        return text.Length;
    }
}
