using System.Numerics;

namespace Diagnostics.Server.DataTypes.Geo;

/// <summary>
/// The text of the geo replies, as Redis 7.0 prints it. Distances (GEODIST, WITHDIST) are bulk
/// strings with exactly 4 decimals from util.c's fixedpoint_d2string: the double times 10^4,
/// rounded to the nearest integer, ties to even (llrint) — not printf's "%.4f", which rounds the
/// exact value and so differs on products that land on .5. Coordinates (GEOPOS, WITHCOORD) are
/// addReplyHumanLongDouble's text: the exact value rounded to 17 decimals ("%.17Lf"), trailing zeros
/// and a trailing point dropped, "-0" shown as "0"; RESP2 sends it as a bulk string, RESP3 as a
/// double (",text").
/// </summary>
public static class GeoFormat
{
    /// <summary>Room enough for any distance text (sign, 20 digits, point).</summary>
    public const int MaxDistanceLength = 24;
    /// <summary>Room enough for a coordinate within ±180 ("-179.99999999999999999" is 22).</summary>
    public const int MaxCoordinateLength = 24;
    /// <summary>Room enough for <see cref="Coordinate"/> of any double (309 integer digits, sign, point, 17 decimals).</summary>
    public const int MaxHumanDoubleLength = 330;

    private const ulong TenTo17 = 100_000_000_000_000_000UL;

    /// <summary>A distance in metres as the reply shows it in a unit: metres / metresPerUnit, 4 decimals.</summary>
    public static int Distance(double metres, double metresPerUnit, Span<byte> destination) =>
        FixedPoint4(metres / metresPerUnit, destination);

    /// <summary>
    /// fixedpoint_d2string(value, 4): 0 as "0.0000"; otherwise llrint(value × 10000) printed with a
    /// point before its last 4 digits (NaN and values beyond ±9.2e14 print llrint's overflow,
    /// "-922337203685477.5808", as Redis does). Returns the length written.
    /// </summary>
    public static int FixedPoint4(double value, Span<byte> destination)
    {
        if (value == 0)
        {
            "0.0000"u8.CopyTo(destination);
            return 6;
        }
        long scaled = RoundToInt64(value * 10000.0);
        int length = 0;
        ulong magnitude = (ulong)scaled;
        if (scaled < 0)
        {
            destination[length++] = (byte)'-';
            magnitude = 0 - magnitude;   // also right for long.MinValue
        }
        return length + WriteScaled(magnitude, 4, destination[length..]);
    }

    /// <summary>
    /// A coordinate as GEOPOS and WITHCOORD show it (ld2string's human mode): "180",
    /// "85.0511287799999991", "0.00000126736058093"; "inf" and "-inf" spelled out. Returns the
    /// length written; allocation-free for magnitudes below 2^63.
    /// </summary>
    public static int Coordinate(double degrees, Span<byte> destination)
    {
        if (double.IsInfinity(degrees))
            return Copy(degrees > 0 ? "inf"u8 : "-inf"u8, destination);
        if (double.IsNaN(degrees))
            return Copy(double.IsNegative(degrees) ? "-nan"u8 : "nan"u8, destination);

        int length;
        if (Math.Abs(degrees) < 9223372036854775808.0)
        {
            UInt128 scaled = ScaleExact(Math.Abs(degrees), TenTo17);
            int sign = double.IsNegative(degrees) ? 1 : 0;
            if (sign == 1)
                destination[0] = (byte)'-';
            length = sign + WriteScaled((ulong)(scaled / TenTo17), (ulong)(scaled % TenTo17), 17, destination[sign..]);
        }
        else
        {
            string text = FormatFixed(degrees, 17);
            for (int i = 0; i < text.Length; i++)
                destination[i] = (byte)text[i];
            length = text.Length;
        }

        // Human mode: no trailing zeros, no bare point, and no negative zero.
        while (destination[length - 1] == (byte)'0')
            length--;
        if (destination[length - 1] == (byte)'.')
            length--;
        if (length == 2 && destination[0] == (byte)'-' && destination[1] == (byte)'0')
        {
            destination[0] = (byte)'0';
            length = 1;
        }
        return length;
    }

    /// <summary>
    /// C's "%.Nf" (glibc): the exact value rounded to <paramref name="decimals"/> places, ties to
    /// even, the sign kept on zero ("-0.000000"), "inf", "-inf", "nan", "-nan". For error texts.
    /// </summary>
    public static string FormatFixed(double value, int decimals)
    {
        if (double.IsInfinity(value))
            return value > 0 ? "inf" : "-inf";
        if (double.IsNaN(value))
            return double.IsNegative(value) ? "-nan" : "nan";
        Decompose(Math.Abs(value), out ulong mantissa, out int exponent);
        BigInteger scaled = mantissa * BigInteger.Pow(10, decimals);
        if (exponent >= 0)
        {
            scaled <<= exponent;
        }
        else
        {
            BigInteger quotient = scaled >> -exponent;
            BigInteger remainder = scaled - (quotient << -exponent);
            BigInteger half = BigInteger.One << (-exponent - 1);
            if (remainder > half || (remainder == half && !quotient.IsEven))
                quotient += 1;
            scaled = quotient;
        }
        string digits = scaled.ToString(System.Globalization.CultureInfo.InvariantCulture).PadLeft(decimals + 1, '0');
        string sign = double.IsNegative(value) ? "-" : "";
        return decimals == 0
            ? sign + digits
            : sign + digits[..^decimals] + "." + digits[^decimals..];
    }

    /// <summary>llrint under the default rounding: nearest, ties to even; NaN and overflow give long.MinValue (x86-64).</summary>
    private static long RoundToInt64(double value)
    {
        double rounded = Math.Round(value, MidpointRounding.ToEven);
        return rounded >= -9223372036854775808.0 && rounded < 9223372036854775808.0 ? (long)rounded : long.MinValue;
    }

    /// <summary>
    /// round(magnitude × factor) computed exactly, ties to even, for a finite magnitude below 2^63
    /// and a factor below 2^57 (the product of the 53-bit mantissa and the factor fits 110 bits).
    /// </summary>
    private static UInt128 ScaleExact(double magnitude, ulong factor)
    {
        Decompose(magnitude, out ulong mantissa, out int exponent);
        UInt128 product = (UInt128)mantissa * factor;
        if (exponent >= 0)
            return product << exponent;   // magnitude < 2^63 keeps this below 2^120
        int shift = -exponent;
        if (shift >= 111)
            return 0;                     // below half of the last place: the product is < 2^110
        UInt128 quotient = product >> shift;
        UInt128 remainder = product - (quotient << shift);
        UInt128 half = UInt128.One << (shift - 1);
        if (remainder > half || (remainder == half && (quotient & 1) == 1))
            quotient++;
        return quotient;
    }

    /// <summary>A finite non-negative double as mantissa × 2^exponent.</summary>
    private static void Decompose(double magnitude, out ulong mantissa, out int exponent)
    {
        ulong bits = BitConverter.DoubleToUInt64Bits(magnitude);
        int biased = (int)(bits >> 52) & 0x7FF;
        mantissa = bits & 0xFFFFFFFFFFFFFUL;
        if (biased == 0)
        {
            exponent = -1074;
        }
        else
        {
            mantissa |= 1UL << 52;
            exponent = biased - 1075;
        }
    }

    /// <summary>Writes scaled / 10^decimals with its point: "0.0005" for 5 at 4 decimals.</summary>
    private static int WriteScaled(ulong scaled, int decimals, Span<byte> destination)
    {
        ulong power = 1;
        for (int i = 0; i < decimals; i++)
            power *= 10;
        return WriteScaled(scaled / power, scaled % power, decimals, destination);
    }

    /// <summary>Writes integer, a point, then fraction padded to <paramref name="decimals"/> digits.</summary>
    private static int WriteScaled(ulong integer, ulong fraction, int decimals, Span<byte> destination)
    {
        Span<byte> digits = stackalloc byte[20];
        int count = 0;
        do
        {
            digits[count++] = (byte)('0' + integer % 10);
            integer /= 10;
        }
        while (integer != 0);
        int length = 0;
        while (count > 0)
            destination[length++] = digits[--count];
        destination[length++] = (byte)'.';
        for (int i = decimals - 1; i >= 0; i--)
        {
            destination[length + i] = (byte)('0' + fraction % 10);
            fraction /= 10;
        }
        return length + decimals;
    }

    private static int Copy(ReadOnlySpan<byte> text, Span<byte> destination)
    {
        text.CopyTo(destination);
        return text.Length;
    }
}
