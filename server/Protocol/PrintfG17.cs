using System.Globalization;

namespace Diagnostics.Server.Protocol;

/// <summary>
/// A double as glibc's printf("%.17g") writes it: 17 significant digits, trailing zeros dropped,
/// exponent form ("1e+20", "1.0000000000000001e-05") below 1e-4 or from 1e17 up, "inf" / "-inf" /
/// "nan". Redis 7.0 hashes sorted-set scores in this form for DEBUG DIGEST, so a digest matches
/// redis-server's only if every byte does. The 17 digits come from .NET's correctly rounded "E16"
/// text; an exact tie (the value halfway between two 17-digit decimals) is settled here, to even
/// as glibc does (see <see cref="TryTie"/>), because .NET's tie rounding depends on the precision
/// and path it takes (its "G14" rounds ties away from zero, see CNumberText).
/// </summary>
public static class PrintfG17
{
    /// <summary>Longest output: sign, 17 digits, point, "e-308" (and "-0.00001..." in fixed form).</summary>
    public const int MaxLength = 32;

    private const int Precision = 17;

    /// <summary>Writes <paramref name="value"/> into <paramref name="destination"/> (at least <see cref="MaxLength"/> bytes) and returns the length.</summary>
    public static int Format(double value, Span<byte> destination)
    {
        if (double.IsNaN(value))
            return Copy(double.IsNegative(value) ? "-nan"u8 : "nan"u8, destination);
        if (double.IsInfinity(value))
            return Copy(value < 0 ? "-inf"u8 : "inf"u8, destination);

        // digits: exactly 17 significant digits of |value| as d.ddd..., exponent: of the first digit.
        Span<byte> digits = stackalloc byte[Precision];
        int exponent;
        if (value == 0)
        {
            digits.Fill((byte)'0');
            exponent = 0;
        }
        else if (!TryTie(value, digits, out exponent))
        {
            exponent = ExponentForm(value, digits);
        }

        int at = 0;
        if (double.IsNegative(value))
            destination[at++] = (byte)'-';
        int last = Precision;
        while (last > 1 && digits[last - 1] == '0')
            last--;
        if (exponent < -4 || exponent >= Precision)
        {
            destination[at++] = digits[0];
            if (last > 1)
            {
                destination[at++] = (byte)'.';
                digits[1..last].CopyTo(destination[at..]);
                at += last - 1;
            }
            destination[at++] = (byte)'e';
            destination[at++] = exponent < 0 ? (byte)'-' : (byte)'+';
            int magnitude = Math.Abs(exponent);
            if (magnitude >= 100)
                destination[at++] = (byte)('0' + magnitude / 100);
            destination[at++] = (byte)('0' + magnitude / 10 % 10);
            destination[at++] = (byte)('0' + magnitude % 10);
        }
        else if (exponent >= 0)
        {
            // Integer part is digits[0..exponent]; the fraction follows only if digits remain.
            digits[..(exponent + 1)].CopyTo(destination[at..]);
            at += exponent + 1;
            if (last > exponent + 1)
            {
                destination[at++] = (byte)'.';
                digits[(exponent + 1)..last].CopyTo(destination[at..]);
                at += last - exponent - 1;
            }
        }
        else
        {
            destination[at++] = (byte)'0';
            destination[at++] = (byte)'.';
            for (int k = -1; k > exponent; k--)
                destination[at++] = (byte)'0';
            digits[..last].CopyTo(destination[at..]);
            at += last;
        }
        return at;
    }

    /// <summary>17 digits and the exponent from .NET's correctly rounded "E16" text ("1.2345678901234568E+017").</summary>
    private static int ExponentForm(double value, Span<byte> digits)
    {
        Span<byte> text = stackalloc byte[MaxLength];
        value.TryFormat(text, out int length, "E16", CultureInfo.InvariantCulture);
        int i = text[0] == '-' ? 1 : 0;
        digits[0] = text[i];
        text.Slice(i + 2, Precision - 1).CopyTo(digits[1..]);
        int e = i + 2 + Precision - 1 + 1; // past the fraction and the 'E'
        bool negative = text[e] == '-';
        int exponent = 0;
        for (int k = e + 1; k < length; k++)
            exponent = exponent * 10 + (text[k] - '0');
        return negative ? -exponent : exponent;
    }

    /// <summary>
    /// When |value| is exactly halfway between two 17-digit decimals, writes the even one and
    /// returns true. |value| = m * 2^-n with m odd is the decimal N * 10^-n where N = m * 5^n
    /// (N ends in 5); it is a tie exactly when N has 18 digits. That needs 0 &lt; n &lt;= 25
    /// (5^26 alone has 19 digits) and a value that is not an integer, so N fits in 128 bits.
    /// </summary>
    private static bool TryTie(double value, Span<byte> digits, out int exponent)
    {
        exponent = 0;
        long bits = BitConverter.DoubleToInt64Bits(value) & long.MaxValue;
        int biased = (int)(bits >> 52);
        ulong mantissa = (ulong)bits & 0xFFFFFFFFFFFFFUL;
        if (biased != 0)
            mantissa |= 1UL << 52;
        int n = 1075 - Math.Max(biased, 1); // |value| = mantissa * 2^-n
        int zeros = System.Numerics.BitOperations.TrailingZeroCount(mantissa);
        mantissa >>= zeros;
        n -= zeros;
        if (n <= 0 || n > 25)
            return false;
        UInt128 whole = mantissa;
        for (int k = 0; k < n; k++)
            whole *= 5;
        UInt128 low = (UInt128)100_000_000_000_000_000UL, high = low * 10;
        if (whole < low || whole >= high)
            return false;
        ulong kept = (ulong)(whole / 10);
        if ((kept & 1) != 0)
            kept++;
        // N has 18 digits, so |value| = N * 10^-n has its first digit at 10^(17 - n). Rounding up
        // cannot carry into an 18th digit: the one N it would take, 999999999999999995, is 5 times
        // an odd number above 2^53, so no double has it.
        exponent = Precision - n;
        for (int k = Precision - 1; k >= 0; k--)
        {
            digits[k] = (byte)('0' + kept % 10);
            kept /= 10;
        }
        return true;
    }

    private static int Copy(ReadOnlySpan<byte> text, Span<byte> destination)
    {
        text.CopyTo(destination);
        return text.Length;
    }
}
