using System.Numerics;
using System.Runtime.InteropServices;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// Bit operations on a string value seen as a bitmap, as Redis numbers its bits: bit 0 is the
/// most significant bit of byte 0. Pure functions on spans; the commands own lookups and growth.
/// </summary>
public static class Bitmap
{
    /// <summary>Set bits in <paramref name="bytes"/>, a word at a time.</summary>
    public static long PopCount(ReadOnlySpan<byte> bytes)
    {
        long count = 0;
        ReadOnlySpan<ulong> words = MemoryMarshal.Cast<byte, ulong>(bytes);
        foreach (ulong word in words)
            count += BitOperations.PopCount(word);
        foreach (byte b in bytes[(words.Length * sizeof(ulong))..])
            count += BitOperations.PopCount(b);
        return count;
    }

    /// <summary>
    /// The position of the first bit equal to <paramref name="bit"/> in <paramref name="bytes"/>.
    /// When none is found: -1 looking for a 1; the first bit past the end looking for a 0 (the
    /// string is seen as padded with zeros on the right, as Redis's redisBitpos does).
    /// </summary>
    public static long FirstBit(ReadOnlySpan<byte> bytes, int bit)
    {
        byte skip = bit == 1 ? (byte)0 : (byte)0xFF;
        int i = bytes.IndexOfAnyExcept(skip);
        if (i < 0)
            return bit == 1 ? -1 : (long)bytes.Length * 8;
        byte b = bit == 1 ? bytes[i] : (byte)~bytes[i];
        return (long)i * 8 + BitOperations.LeadingZeroCount((uint)b) - 24;
    }

    /// <summary>The bit at <paramref name="offset"/>; 0 past the end.</summary>
    public static int GetBit(ReadOnlySpan<byte> bytes, ulong offset)
    {
        ulong index = offset >> 3;
        return index < (ulong)bytes.Length && (bytes[(int)index] & (0x80 >> (int)(offset & 7))) != 0 ? 1 : 0;
    }

    public static void SetBit(Span<byte> bytes, ulong offset, int value)
    {
        int mask = 0x80 >> (int)(offset & 7);
        ref byte b = ref bytes[(int)(offset >> 3)];
        b = (byte)(value != 0 ? b | mask : b & ~mask);
    }

    /// <summary>
    /// The unsigned integer of <paramref name="bits"/> bits (1-64) starting at bit
    /// <paramref name="offset"/>, most significant first; bits past the end read as 0.
    /// </summary>
    public static ulong GetUnsigned(ReadOnlySpan<byte> bytes, ulong offset, int bits)
    {
        ulong value = 0;
        for (int i = 0; i < bits; i++)
            value = (value << 1) | (uint)GetBit(bytes, offset + (ulong)i);
        return value;
    }

    /// <summary>As <see cref="GetUnsigned"/>, the top bit read as the sign (two's complement).</summary>
    public static long GetSigned(ReadOnlySpan<byte> bytes, ulong offset, int bits)
    {
        ulong value = GetUnsigned(bytes, offset, bits);
        if (bits < 64 && (value & (1UL << (bits - 1))) != 0)
            value |= ulong.MaxValue << bits;
        return (long)value;
    }

    /// <summary>Writes the low <paramref name="bits"/> bits of <paramref name="value"/> at bit <paramref name="offset"/>; the bytes must reach that far.</summary>
    public static void SetInteger(Span<byte> bytes, ulong offset, int bits, ulong value)
    {
        for (int i = 0; i < bits; i++)
            SetBit(bytes, offset + (ulong)i, (int)((value >> (bits - 1 - i)) & 1));
    }

    /// <summary>
    /// Whether adding <paramref name="increment"/> to an unsigned field of <paramref name="bits"/>
    /// holding <paramref name="value"/> overflows: 1 above the maximum, -1 below 0, 0 when it fits.
    /// <paramref name="result"/> is what the field takes under <paramref name="overflow"/> (wrapped
    /// or saturated); the plain sum when it fits.
    /// </summary>
    public static int AddUnsigned(ulong value, long increment, int bits, BitfieldOverflow overflow, out ulong result)
    {
        ulong max = bits == 64 ? ulong.MaxValue : (1UL << bits) - 1;
        long maxIncrement = (long)(max - value);
        long minIncrement = -(long)value;
        result = value + (ulong)increment;
        int direction = value > max || (increment > 0 && increment > maxIncrement) ? 1
            : increment < 0 && increment < minIncrement ? -1 : 0;
        if (direction == 0)
            return 0;
        result = overflow == BitfieldOverflow.Saturate ? (direction > 0 ? max : 0) : result & max;
        return direction;
    }

    /// <summary>As <see cref="AddUnsigned"/> for a signed (two's complement) field.</summary>
    public static int AddSigned(long value, long increment, int bits, BitfieldOverflow overflow, out long result)
    {
        long max = bits == 64 ? long.MaxValue : (1L << (bits - 1)) - 1;
        long min = -max - 1;
        // Computed as unsigned so the checks below never overflow; used only once value is in range.
        long maxIncrement = (long)((ulong)max - (ulong)value);
        long minIncrement = (long)((ulong)min - (ulong)value);
        ulong sum = (ulong)value + (ulong)increment;
        result = (long)sum;
        int direction =
            value > max || (bits != 64 && increment > maxIncrement) || (value >= 0 && increment > 0 && increment > maxIncrement) ? 1
            : value < min || (bits != 64 && increment < minIncrement) || (value < 0 && increment < 0 && increment < minIncrement) ? -1
            : 0;
        if (direction == 0)
            return 0;
        if (overflow == BitfieldOverflow.Saturate)
        {
            result = direction > 0 ? max : min;
            return direction;
        }
        // Wrap: keep the low bits and extend the field's sign bit over the rest.
        if (bits < 64)
        {
            ulong mask = ulong.MaxValue << bits;
            sum = (sum & (1UL << (bits - 1))) != 0 ? sum | mask : sum & ~mask;
        }
        result = (long)sum;
        return direction;
    }

    /// <summary>
    /// BITOP's first source into <paramref name="result"/> (as long as the longest source): copied,
    /// or inverted for NOT; the bytes past its end read as zeros.
    /// </summary>
    public static void Begin(BitOperation operation, ReadOnlySpan<byte> first, Span<byte> result)
    {
        first.CopyTo(result);
        result[first.Length..].Clear();
        if (operation == BitOperation.Not)
            for (int i = 0; i < result.Length; i++)
                result[i] = (byte)~result[i];
    }

    /// <summary>Folds one more BITOP source into <paramref name="result"/>; bytes past its end read as zeros.</summary>
    public static void Fold(BitOperation operation, ReadOnlySpan<byte> source, Span<byte> result)
    {
        // Zeros clear an AND and leave OR and XOR alone.
        if (operation == BitOperation.And)
            result[source.Length..].Clear();
        Apply(operation, result[..source.Length], source);
    }

    private static void Apply(BitOperation operation, Span<byte> result, ReadOnlySpan<byte> source)
    {
        Span<ulong> words = MemoryMarshal.Cast<byte, ulong>(result);
        ReadOnlySpan<ulong> sourceWords = MemoryMarshal.Cast<byte, ulong>(source);
        for (int i = 0; i < words.Length; i++)
            words[i] = operation switch
            {
                BitOperation.And => words[i] & sourceWords[i],
                BitOperation.Or => words[i] | sourceWords[i],
                _ => words[i] ^ sourceWords[i],
            };
        for (int i = words.Length * sizeof(ulong); i < result.Length; i++)
            result[i] = operation switch
            {
                BitOperation.And => (byte)(result[i] & source[i]),
                BitOperation.Or => (byte)(result[i] | source[i]),
                _ => (byte)(result[i] ^ source[i]),
            };
    }
}

/// <summary>BITOP's operations (Redis 7: AND, OR, XOR, NOT).</summary>
public enum BitOperation { And, Or, Xor, Not }

/// <summary>What BITFIELD does when SET or INCRBY leaves a field's range.</summary>
public enum BitfieldOverflow { Wrap, Saturate, Fail }
