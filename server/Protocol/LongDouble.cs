using System.Numerics;

namespace Diagnostics.Server.Protocol;

/// <summary>
/// The x87 80-bit extended precision number that Redis's INCRBYFLOAT (and HINCRBYFLOAT) computes
/// with as C's long double on x86-64: a 64-bit mantissa and a 15-bit exponent. .NET has no such
/// type, and doing the sum in double visibly changes results (Redis prints 0.1 + 0.2 as "0.3" and
/// 1000.1 as "1000.09999999999999998"), so parsing, addition and printing are emulated exactly
/// here, each correctly rounded to nearest-even as glibc's strtold, the FPU and printf are.
/// Only these rare float commands use it; it allocates big integers freely.
/// </summary>
public readonly struct LongDouble
{
    /// <summary>Longest text Redis parses as a long double (MAX_LONG_DOUBLE_CHARS excluded).</summary>
    public const int MaxTextLength = 5 * 1024;

    private const int MantissaBits = 64;
    /// <summary>Smallest exponent of the mantissa's unit (subnormals): 2^-16445.</summary>
    private const int MinExponent = -16445;
    /// <summary>Largest exponent of the mantissa's unit: the top finite value is (2^64-1)·2^16320.</summary>
    private const int MaxExponent = 16320;
    /// <summary>Digits after the point in Redis's human-friendly output (%.17Lf).</summary>
    private const int FractionDigits = 17;

    private static readonly BigInteger s_fractionScale = BigInteger.Pow(10, FractionDigits);
    private static readonly BigInteger s_mantissaLimit = BigInteger.One << MantissaBits;

    private enum Kind : byte { Finite, Infinity, NaN }

    // Value = (-1)^negative · mantissa · 2^exponent for finite values.
    private readonly ulong _mantissa;
    private readonly int _exponent;
    private readonly bool _negative;
    private readonly Kind _kind;

    private LongDouble(ulong mantissa, int exponent, bool negative, Kind kind = Kind.Finite)
    {
        _mantissa = mantissa;
        _exponent = exponent;
        _negative = negative;
        _kind = kind;
    }

    public static LongDouble Zero => default;

    public bool IsFinite => _kind == Kind.Finite;

    /// <summary>
    /// Parses <paramref name="text"/> as Redis's string2ld does: the whole text must be one
    /// strtold number (decimal, hexadecimal "0x1.8p3", "inf"/"infinity", optional sign), no
    /// surrounding spaces, not NaN, and not out of range (overflow, or a nonzero number that
    /// rounds to zero). Infinity is accepted, as Redis does, for the caller to reject on use.
    /// </summary>
    public static bool TryParse(ReadOnlySpan<byte> text, out LongDouble value)
    {
        value = default;
        if (text.IsEmpty || text.Length >= MaxTextLength)
            return false;
        bool negative = false;
        int i = 0;
        if (text[0] is (byte)'+' or (byte)'-')
        {
            negative = text[0] == (byte)'-';
            i = 1;
        }
        ReadOnlySpan<byte> body = text[i..];
        if (NumberFormat.EqualsIgnoreCase(body, "inf"u8) || NumberFormat.EqualsIgnoreCase(body, "infinity"u8))
        {
            value = new LongDouble(0, 0, negative, Kind.Infinity);
            return true;
        }
        if (body.Length >= 2 && body[0] == (byte)'0' && (body[1] | 0x20) == (byte)'x')
            return TryParseHex(body[2..], negative, out value);
        return TryParseDecimal(body, negative, out value);
    }

    private static bool TryParseDecimal(ReadOnlySpan<byte> body, bool negative, out LongDouble value)
    {
        value = default;
        BigInteger digits = BigInteger.Zero;
        int significantDigits = 0, fractionDigits = 0, i = 0;
        bool anyDigit = false, inFraction = false;
        ulong chunk = 0;
        int chunkLength = 0;
        for (; i < body.Length; i++)
        {
            byte b = body[i];
            if (b == (byte)'.' && !inFraction)
            {
                inFraction = true;
                continue;
            }
            uint digit = (uint)(b - '0');
            if (digit > 9)
                break;
            anyDigit = true;
            if (inFraction)
                fractionDigits++;
            if (significantDigits == 0 && digit == 0)
                continue; // leading zeros carry no magnitude
            significantDigits++;
            chunk = chunk * 10 + digit;
            if (++chunkLength == 18)
            {
                digits = digits * 1_000_000_000_000_000_000 + chunk;
                chunk = 0;
                chunkLength = 0;
            }
        }
        if (!anyDigit)
            return false;
        if (chunkLength > 0)
            digits = digits * BigInteger.Pow(10, chunkLength) + chunk;

        long exponent = 0;
        if (i < body.Length)
        {
            if ((body[i] | 0x20) != (byte)'e' || !TryParseExponent(body[(i + 1)..], out exponent))
                return false;
        }
        if (digits.IsZero)
        {
            value = new LongDouble(0, 0, negative);
            return true;
        }
        long decimalExponent = exponent - fractionDigits;
        // The value lies in [10^(n-1+e), 10^(n+e)): decide plain overflow or underflow without big powers.
        if (significantDigits - 1 + decimalExponent > 4933)
            return false;
        if (significantDigits + decimalExponent < -4951)
            return false;
        BigInteger numerator = digits, denominator = BigInteger.One;
        if (decimalExponent >= 0)
            numerator *= BigInteger.Pow(10, (int)decimalExponent);
        else
            denominator = BigInteger.Pow(10, (int)-decimalExponent);
        return TryRound(numerator, denominator, 0, negative, out value);
    }

    private static bool TryParseHex(ReadOnlySpan<byte> body, bool negative, out LongDouble value)
    {
        value = default;
        BigInteger digits = BigInteger.Zero;
        int fractionDigits = 0, i = 0;
        bool anyDigit = false, inFraction = false;
        for (; i < body.Length; i++)
        {
            byte b = body[i];
            if (b == (byte)'.' && !inFraction)
            {
                inFraction = true;
                continue;
            }
            int digit = HexValue(b);
            if (digit < 0)
                break;
            anyDigit = true;
            if (inFraction)
                fractionDigits++;
            digits = (digits << 4) + digit;
        }
        // "0x" without hex digits is strtold reading "0" and stopping at the 'x': not all consumed.
        if (!anyDigit)
            return false;
        long exponent = 0;
        if (i < body.Length)
        {
            if ((body[i] | 0x20) != (byte)'p' || !TryParseExponent(body[(i + 1)..], out exponent))
                return false;
        }
        if (digits.IsZero)
        {
            value = new LongDouble(0, 0, negative);
            return true;
        }
        long binaryExponent = exponent - 4L * fractionDigits;
        long magnitude = (long)digits.GetBitLength() + binaryExponent;
        if (magnitude > MaxExponent + MantissaBits + 1)
            return false;
        if (magnitude < MinExponent - 1)
            return false;
        return TryRound(digits, BigInteger.One, (int)binaryExponent, negative, out value);
    }

    /// <summary>An exponent: optional sign then at least one digit; saturates far beyond any finite result.</summary>
    private static bool TryParseExponent(ReadOnlySpan<byte> text, out long exponent)
    {
        exponent = 0;
        bool negative = false;
        int i = 0;
        if (i < text.Length && text[i] is (byte)'+' or (byte)'-')
        {
            negative = text[i] == (byte)'-';
            i++;
        }
        if (i == text.Length)
            return false;
        for (; i < text.Length; i++)
        {
            uint digit = (uint)(text[i] - '0');
            if (digit > 9)
                return false;
            if (exponent < 1_000_000)
                exponent = exponent * 10 + digit;
        }
        if (negative)
            exponent = -exponent;
        return true;
    }

    private static int HexValue(byte b) => b switch
    {
        >= (byte)'0' and <= (byte)'9' => b - '0',
        >= (byte)'a' and <= (byte)'f' => b - 'a' + 10,
        >= (byte)'A' and <= (byte)'F' => b - 'A' + 10,
        _ => -1,
    };

    /// <summary>
    /// Rounds the positive value numerator / denominator · 2^binaryExponent to the nearest
    /// extended precision number (ties to even). False when it overflows or rounds to zero.
    /// </summary>
    private static bool TryRound(BigInteger numerator, BigInteger denominator, int binaryExponent, bool negative, out LongDouble value)
    {
        value = default;
        // log2 of the value lies in (estimate - 1, estimate + 1): aim the mantissa at 64 bits and correct.
        long estimate = (long)numerator.GetBitLength() - (long)denominator.GetBitLength() + binaryExponent;
        long exponent = Math.Max(estimate - MantissaBits, MinExponent);
        BigInteger quotient, remainder, divisor;
        while (true)
        {
            long shift = binaryExponent - exponent;
            BigInteger scaled = shift >= 0 ? numerator << (int)shift : numerator;
            divisor = shift >= 0 ? denominator : denominator << (int)-shift;
            quotient = BigInteger.DivRem(scaled, divisor, out remainder);
            if (quotient >= s_mantissaLimit)
            {
                exponent++;
                continue;
            }
            break;
        }
        int comparison = (remainder << 1).CompareTo(divisor);
        if (comparison > 0 || (comparison == 0 && !quotient.IsEven))
            quotient += 1;
        if (quotient == s_mantissaLimit)
        {
            quotient >>= 1;
            exponent++;
        }
        if (quotient.IsZero || exponent > MaxExponent)
            return false;
        value = new LongDouble((ulong)quotient, (int)exponent, negative);
        return true;
    }

    /// <summary>The correctly rounded sum; infinite on overflow, NaN for inf + -inf.</summary>
    public static LongDouble Add(LongDouble a, LongDouble b)
    {
        if (a._kind == Kind.NaN || b._kind == Kind.NaN)
            return new LongDouble(0, 0, false, Kind.NaN);
        if (a._kind == Kind.Infinity || b._kind == Kind.Infinity)
        {
            if (a._kind == Kind.Infinity && b._kind == Kind.Infinity && a._negative != b._negative)
                return new LongDouble(0, 0, false, Kind.NaN);
            return a._kind == Kind.Infinity ? a : b;
        }
        if (a._mantissa == 0 && b._mantissa == 0)
            return new LongDouble(0, 0, a._negative && b._negative);
        if (a._mantissa == 0)
            return b;
        if (b._mantissa == 0)
            return a;
        int lowest = Math.Min(a._exponent, b._exponent);
        BigInteger sum = Signed(a) << (a._exponent - lowest);
        sum += Signed(b) << (b._exponent - lowest);
        if (sum.IsZero)
            return Zero; // x + (-x) is +0 when rounding to nearest
        bool negative = sum.Sign < 0;
        if (!TryRound(BigInteger.Abs(sum), BigInteger.One, lowest, negative, out var result))
            return new LongDouble(0, 0, negative, Kind.Infinity); // a sum of two finite values only fails by overflowing
        return result;
    }

    private static BigInteger Signed(LongDouble v) => v._negative ? -new BigInteger(v._mantissa) : new BigInteger(v._mantissa);

    /// <summary>
    /// Redis's human-friendly form (ld2string LD_STR_HUMAN): printf "%.17Lf", trailing zeros and a
    /// bare point removed, "-0" written as "0". Never an exponent, so 1e20 prints all its digits.
    /// </summary>
    public byte[] ToHumanFriendlyText()
    {
        if (_kind == Kind.Infinity)
            return _negative ? "-inf"u8.ToArray() : "inf"u8.ToArray();
        if (_kind == Kind.NaN)
            return "nan"u8.ToArray();
        BigInteger scaled;
        if (_exponent >= 0)
        {
            scaled = (new BigInteger(_mantissa) << _exponent) * s_fractionScale;
        }
        else
        {
            BigInteger exact = new BigInteger(_mantissa) * s_fractionScale;
            BigInteger divisor = BigInteger.One << -_exponent;
            scaled = BigInteger.DivRem(exact, divisor, out BigInteger remainder);
            int comparison = (remainder << 1).CompareTo(divisor);
            if (comparison > 0 || (comparison == 0 && !scaled.IsEven))
                scaled += 1;
        }
        string digits = scaled.ToString(System.Globalization.CultureInfo.InvariantCulture).PadLeft(FractionDigits + 1, '0');
        int integerLength = digits.Length - FractionDigits;
        int fractionLength = FractionDigits;
        while (fractionLength > 0 && digits[integerLength + fractionLength - 1] == '0')
            fractionLength--;
        bool minus = _negative && !scaled.IsZero;
        var text = new byte[(minus ? 1 : 0) + integerLength + (fractionLength > 0 ? 1 + fractionLength : 0)];
        int n = 0;
        if (minus)
            text[n++] = (byte)'-';
        for (int i = 0; i < integerLength; i++)
            text[n++] = (byte)digits[i];
        if (fractionLength > 0)
        {
            text[n++] = (byte)'.';
            for (int i = 0; i < fractionLength; i++)
                text[n++] = (byte)digits[integerLength + i];
        }
        return text;
    }
}
