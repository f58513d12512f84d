using System.Globalization;
using System.Numerics;

namespace Diagnostics.Server.Scripting.Libraries;

/// <summary>
/// Numbers as C's printf("%.*g") writes them and strtod reads them (glibc, C locale), which is
/// what cjson does and what scripts see. .NET's "G" format matches %g but for exact ties, which
/// .NET rounds away from zero and glibc to even (123456789012345 at 14 digits: glibc
/// 1.2345678901234e+14); .NET's parser has no strtod prefix semantics, hex floats, inf or nan.
/// </summary>
internal static class CNumberText
{
    private static readonly string[] GeneralFormats = ["G0", "G1", "G2", "G3", "G4", "G5", "G6", "G7", "G8", "G9", "G10", "G11", "G12", "G13", "G14", "G15", "G16", "G17"];
    private static readonly string[] ExponentFormats = ["E0", "E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10", "E11", "E12", "E13", "E14", "E15", "E16", "E17"];

    /// <summary>Writes <paramref name="value"/> as printf("%.{precision}g") into <paramref name="destination"/> (32 bytes is enough) and returns the length.</summary>
    public static int FormatG(double value, int precision, Span<byte> destination)
    {
        if (double.IsNaN(value))
            return Copy(double.IsNegative(value) ? "-nan"u8 : "nan"u8, destination);
        if (double.IsInfinity(value))
            return Copy(value < 0 ? "-inf"u8 : "inf"u8, destination);
        precision = Math.Clamp(precision, 1, 17);
        // Most numbers scripts encode have a short shortest form ("42", "19.99"): when it has no
        // more digits than the precision asks, %g prints exactly those digits. That holds while
        // the value's own precision (half an ulp, 1.1e-16 relative) is far finer than the
        // rounding step of `precision` digits: for precisions up to 14 and normal doubles, not
        // for subnormals (5e-324 is exactly 4.9406564584125e-324 to 14 digits).
        Span<byte> shortest = stackalloc byte[32];
        if (precision <= 14 && (value == 0 || Math.Abs(value) >= 2.2250738585072014E-308)
            && value.TryFormat(shortest, out int shortestLength, "R", CultureInfo.InvariantCulture)
            && TryFormatShortest(shortest[..shortestLength], precision, destination, out int length))
            return length;
        value = RoundTiesToEven(value, precision);
        value.TryFormat(destination, out int written, GeneralFormats[precision], CultureInfo.InvariantCulture);
        for (int i = 0; i < written; i++)
        {
            if (destination[i] == (byte)'E')
                destination[i] = (byte)'e';
        }
        return written;
    }

    /// <summary>
    /// %g from .NET's shortest round-trip text ("-1.25E-07", "1234.5", "1E+20") when it has at
    /// most <paramref name="precision"/> significant digits; false otherwise.
    /// </summary>
    private static bool TryFormatShortest(ReadOnlySpan<byte> text, int precision, Span<byte> destination, out int length)
    {
        length = 0;
        bool negative = text[0] == '-';
        if (negative)
            text = text[1..];
        Span<byte> digits = stackalloc byte[24];
        int count = 0, pointAt = -1, exponent = 0;
        int i = 0;
        for (; i < text.Length && text[i] != 'E'; i++)
        {
            if (text[i] == '.')
                pointAt = count;
            else if (count < digits.Length)
                digits[count++] = text[i];
            else
                return false;
        }
        if (i < text.Length)
            exponent = int.Parse(text[(i + 1)..], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture);
        if (pointAt < 0)
            pointAt = count;
        // Strip leading zeros ("0.001") and trailing zeros ("100"), keeping the decimal exponent.
        int first = 0;
        while (first < count - 1 && digits[first] == '0')
            first++;
        int last = count;
        while (last > first + 1 && digits[last - 1] == '0')
            last--;
        int significant = last - first;
        if (significant > precision)
            return false;
        // value = 0.d(first)..d(last-1) x 10^x10; the %g exponent is x10 - 1.
        int x = pointAt - first - 1 + exponent;
        if (digits[first] == '0')
            x = 0;   // zero
        int at = 0;
        if (negative)
            destination[at++] = (byte)'-';
        if (x < -4 || x >= precision)
        {
            destination[at++] = digits[first];
            if (significant > 1)
            {
                destination[at++] = (byte)'.';
                for (int k = first + 1; k < last; k++)
                    destination[at++] = digits[k];
            }
            destination[at++] = (byte)'e';
            destination[at++] = x < 0 ? (byte)'-' : (byte)'+';
            int magnitude = Math.Abs(x);
            if (magnitude < 10)
                destination[at++] = (byte)'0';
            magnitude.TryFormat(destination[at..], out int written, default, CultureInfo.InvariantCulture);
            at += written;
        }
        else if (x >= 0)
        {
            for (int k = 0; k <= x || first + k < last; k++)
            {
                if (k == x + 1)
                    destination[at++] = (byte)'.';
                destination[at++] = first + k < last ? digits[first + k] : (byte)'0';
            }
        }
        else
        {
            destination[at++] = (byte)'0';
            destination[at++] = (byte)'.';
            for (int k = -1; k > x; k--)
                destination[at++] = (byte)'0';
            for (int k = first; k < last; k++)
                destination[at++] = digits[k];
        }
        length = at;
        return true;
    }

    private static int Copy(ReadOnlySpan<byte> text, Span<byte> destination)
    {
        text.CopyTo(destination);
        return text.Length;
    }

    /// <summary>
    /// When <paramref name="value"/> lies exactly halfway between two <paramref name="precision"/>-digit
    /// decimals and .NET would round it up to an odd last digit, returns the even neighbour below
    /// instead (parsed back, it formats to those digits); otherwise the value itself.
    /// </summary>
    private static double RoundTiesToEven(double value, int precision)
    {
        if (value == 0)
            return value;
        Span<char> text = stackalloc char[40];
        // precision+1 significant digits: d.ddd...5E+xx is the only shape a tie can have.
        if (!value.TryFormat(text, out int length, ExponentFormats[precision], CultureInfo.InvariantCulture))
            return value;
        text = text[..length];
        int e = text.IndexOf('E');
        if (e < 1 || text[e - 1] != '5')
            return value;
        // Digits as an integer D and exponent k such that the decimal is D * 10^k.
        int exponent = int.Parse(text[(e + 1)..], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture);
        var digits = new BigInteger(0);
        foreach (char c in text[..e])
        {
            if (c is >= '0' and <= '9')
                digits = digits * 10 + (c - '0');
        }
        int k = exponent - precision;
        if (!IsExactly(value, digits, k))
            return value;
        var kept = digits / 10;   // the precision-digit decimal below (toward zero)
        if (kept.IsEven)
        {
            string below = (value < 0 ? "-" : "") + kept.ToString(CultureInfo.InvariantCulture) + "E" + (k + 1).ToString(CultureInfo.InvariantCulture);
            return double.Parse(below, NumberStyles.Float, CultureInfo.InvariantCulture);
        }
        return value;
    }

    /// <summary>Whether |value| equals digits * 10^k exactly.</summary>
    private static bool IsExactly(double value, BigInteger digits, int k)
    {
        long bits = BitConverter.DoubleToInt64Bits(Math.Abs(value));
        int binaryExponent = (int)((bits >> 52) & 0x7ff);
        long mantissa = bits & 0xfffffffffffffL;
        if (binaryExponent == 0)
            binaryExponent = 1;
        else
            mantissa |= 1L << 52;
        binaryExponent -= 1075;   // value = mantissa * 2^binaryExponent
        BigInteger left = mantissa, right = digits;
        if (binaryExponent >= 0) left <<= binaryExponent; else right <<= -binaryExponent;
        if (k >= 0) right *= BigInteger.Pow(10, k); else left *= BigInteger.Pow(10, -k);
        return left == right;
    }

    /// <summary>
    /// strtod on <paramref name="text"/> from <paramref name="start"/>, reading past the end as
    /// NUL: returns where the number ends (== start when there is none) and its value. Accepts
    /// what glibc accepts: a sign, decimal with optional fraction and exponent, hexadecimal with
    /// optional fraction and binary exponent, inf, infinity, nan and nan(chars), in any case.
    /// </summary>
    public static int ParseStrtod(ReadOnlySpan<byte> text, int start, out double value)
    {
        value = 0;
        int i = start;
        bool negative = false;
        if (At(text, i) is (byte)'+' or (byte)'-')
        {
            negative = At(text, i) == '-';
            i++;
        }
        if (MatchesIgnoringCase(text, i, "inf"u8))
        {
            i += 3;
            if (MatchesIgnoringCase(text, i, "inity"u8))
                i += 5;
            value = negative ? double.NegativeInfinity : double.PositiveInfinity;
            return i;
        }
        if (MatchesIgnoringCase(text, i, "nan"u8))
        {
            i += 3;
            if (At(text, i) == '(')
            {
                int j = i + 1;
                while (IsAsciiLetterOrDigit(At(text, j)) || At(text, j) == '_')
                    j++;
                if (At(text, j) == ')')
                    i = j + 1;
            }
            value = BitConverter.Int64BitsToDouble(negative ? unchecked((long)0xfff8000000000000UL) : 0x7ff8000000000000L);
            return i;
        }
        if (At(text, i) == '0' && (At(text, i + 1) | 0x20) == 'x')
        {
            int end = ParseHex(text, i + 2, out double magnitude);
            if (end > 0)
            {
                value = negative ? -magnitude : magnitude;
                return end;
            }
            // "0x" without hex digits: strtod reads the "0" alone.
        }
        int mantissaStart = i;
        int digitCount = 0;
        while (IsDigit(At(text, i))) { i++; digitCount++; }
        if (At(text, i) == '.')
        {
            i++;
            while (IsDigit(At(text, i))) { i++; digitCount++; }
        }
        if (digitCount == 0)
            return start;
        if ((At(text, i) | 0x20) == 'e')
        {
            int j = i + 1;
            if (At(text, j) is (byte)'+' or (byte)'-')
                j++;
            if (IsDigit(At(text, j)))
            {
                while (IsDigit(At(text, j)))
                    j++;
                i = j;
            }
        }
        double parsed = double.Parse(text[mantissaStart..i], NumberStyles.Float, CultureInfo.InvariantCulture);
        value = negative ? -parsed : parsed;
        return i;
    }

    /// <summary>Hex digits [. hex digits] [p[+-]digits] from <paramref name="i"/>; 0 when there is no hex digit.</summary>
    private static int ParseHex(ReadOnlySpan<byte> text, int i, out double value)
    {
        value = 0;
        ulong mantissa = 0;
        int scale = 0;   // binary exponent adjustment
        int digits = 0;
        bool sticky = false;
        for (; HexValue(At(text, i)) >= 0; i++, digits++)
        {
            if (mantissa >> 60 == 0)
                mantissa = (mantissa << 4) | (uint)HexValue(At(text, i));
            else
            {
                scale += 4;
                sticky |= HexValue(At(text, i)) != 0;
            }
        }
        if (At(text, i) == '.')
        {
            int j = i + 1;
            int fractionDigits = 0;
            for (; HexValue(At(text, j)) >= 0; j++, fractionDigits++)
            {
                if (mantissa >> 60 == 0)
                {
                    mantissa = (mantissa << 4) | (uint)HexValue(At(text, j));
                    scale -= 4;
                }
                else
                    sticky |= HexValue(At(text, j)) != 0;
            }
            if (digits + fractionDigits > 0)
                i = j;
            digits += fractionDigits;
        }
        if (digits == 0)
            return 0;
        if ((At(text, i) | 0x20) == 'p')
        {
            int j = i + 1;
            bool negativeExponent = false;
            if (At(text, j) is (byte)'+' or (byte)'-')
            {
                negativeExponent = At(text, j) == '-';
                j++;
            }
            if (IsDigit(At(text, j)))
            {
                int exponent = 0;
                while (IsDigit(At(text, j)))
                {
                    exponent = Math.Min(exponent * 10 + (At(text, j) - '0'), 100_000);
                    j++;
                }
                scale += negativeExponent ? -exponent : exponent;
                i = j;
            }
        }
        if (sticky)
            mantissa |= 1;   // keeps a dropped non-zero digit from reading as an exact tie
        value = Math.ScaleB(mantissa, scale);
        return i;
    }

    private static byte At(ReadOnlySpan<byte> text, int i) => i < text.Length ? text[i] : (byte)0;

    private static bool IsDigit(byte c) => c is >= (byte)'0' and <= (byte)'9';

    private static bool IsAsciiLetterOrDigit(byte c) => IsDigit(c) || (c | 0x20) is >= (byte)'a' and <= (byte)'z';

    private static int HexValue(byte c) => c switch
    {
        >= (byte)'0' and <= (byte)'9' => c - '0',
        >= (byte)'a' and <= (byte)'f' => c - 'a' + 10,
        >= (byte)'A' and <= (byte)'F' => c - 'A' + 10,
        _ => -1,
    };

    private static bool MatchesIgnoringCase(ReadOnlySpan<byte> text, int i, ReadOnlySpan<byte> lowercase)
    {
        for (int k = 0; k < lowercase.Length; k++)
        {
            if ((At(text, i + k) | 0x20) != lowercase[k])
                return false;
        }
        return true;
    }
}
