using System.Globalization;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// C's printf "%.17g" for doubles, the text Redis gives a Lua number passed to redis.call
/// (0.1 is "0.10000000000000001", 3.0 is "3", 1e20 is "1e+20"). .NET has no %g: its "G17" writes
/// "1E+20". Formats into the caller's buffer without allocating.
/// </summary>
internal static class CFormat
{
    private const int Precision = 17;

    /// <summary>Writes <paramref name="value"/> as %.17g into <paramref name="target"/> (at least 32 bytes); returns the length.</summary>
    public static int G17(double value, Span<byte> target)
    {
        if (double.IsNaN(value))
            return Ascii(double.IsNegative(value) ? "-nan" : "nan", target);
        if (double.IsInfinity(value))
            return Ascii(value < 0 ? "-inf" : "inf", target);
        // "E16": one digit, the point, 16 digits, "E", the signed exponent: 17 significant digits.
        Span<char> scientific = stackalloc char[32];
        value.TryFormat(scientific, out int length, "E16", CultureInfo.InvariantCulture);
        scientific = scientific[..length];
        int n = 0;
        if (scientific[0] == '-')
        {
            target[n++] = (byte)'-';
            scientific = scientific[1..];
        }
        int e = scientific.IndexOf('E');
        int exponent = int.Parse(scientific[(e + 1)..], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture);
        Span<char> digits = stackalloc char[Precision];
        digits[0] = scientific[0];
        scientific[2..e].CopyTo(digits[1..]);
        int significant = Precision;
        while (significant > 1 && digits[significant - 1] == '0')
            significant--;
        if (value == 0)
            exponent = 0;

        if (exponent >= -4 && exponent < Precision)
        {
            if (exponent < 0)
            {
                target[n++] = (byte)'0';
                target[n++] = (byte)'.';
                for (int i = -1; i > exponent; i--)
                    target[n++] = (byte)'0';
                for (int i = 0; i < significant; i++)
                    target[n++] = (byte)digits[i];
                return n;
            }
            for (int i = 0; i <= exponent; i++)
                target[n++] = (byte)digits[i];
            if (significant > exponent + 1)
            {
                target[n++] = (byte)'.';
                for (int i = exponent + 1; i < significant; i++)
                    target[n++] = (byte)digits[i];
            }
            return n;
        }
        target[n++] = (byte)digits[0];
        if (significant > 1)
        {
            target[n++] = (byte)'.';
            for (int i = 1; i < significant; i++)
                target[n++] = (byte)digits[i];
        }
        target[n++] = (byte)'e';
        target[n++] = exponent < 0 ? (byte)'-' : (byte)'+';
        int magnitude = Math.Abs(exponent);
        if (magnitude >= 100)
            target[n++] = (byte)('0' + magnitude / 100);
        target[n++] = (byte)('0' + magnitude / 10 % 10);
        target[n++] = (byte)('0' + magnitude % 10);
        return n;
    }

    private static int Ascii(string text, Span<byte> target)
    {
        for (int i = 0; i < text.Length; i++)
            target[i] = (byte)text[i];
        return text.Length;
    }
}
