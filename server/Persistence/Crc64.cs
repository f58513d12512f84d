using System.Buffers.Binary;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Redis's CRC-64 ("Jones": polynomial 0xad93d23594c935a9, reflected, initial value 0, no final
/// xor), the checksum that ends every RDB since version 5. Hand-written because nothing this
/// machine's NuGet copy can restore provides this variant: System.IO.Hashing is not restorable
/// here, and its Crc64 is the ECMA-182 variant anyway. Slicing-by-8 keeps loading a large AOF base
/// from being bound by the checksum.
/// </summary>
internal static class Crc64
{
    // The polynomial bit-reversed, as a reflected (LSB-first) CRC uses it.
    private const ulong ReflectedPolynomial = 0x95AC9329AC4BC9B5;

    // Table k gives the CRC contribution of a byte followed by k zero bytes.
    private static readonly ulong[] Tables = BuildTables();

    private static ulong[] BuildTables()
    {
        var tables = new ulong[8 * 256];
        for (uint n = 0; n < 256; n++)
        {
            ulong crc = n;
            for (int bit = 0; bit < 8; bit++)
                crc = (crc & 1) != 0 ? (crc >> 1) ^ ReflectedPolynomial : crc >> 1;
            tables[n] = crc;
        }
        for (int k = 1; k < 8; k++)
        {
            for (int n = 0; n < 256; n++)
            {
                ulong previous = tables[(k - 1) * 256 + n];
                tables[k * 256 + n] = (previous >> 8) ^ tables[(int)(previous & 0xFF)];
            }
        }
        return tables;
    }

    /// <summary>Continues <paramref name="crc"/> over <paramref name="data"/> (start with 0).</summary>
    public static ulong Update(ulong crc, ReadOnlySpan<byte> data)
    {
        ReadOnlySpan<ulong> t = Tables;
        while (data.Length >= 8)
        {
            crc ^= BinaryPrimitives.ReadUInt64LittleEndian(data);
            crc = t[7 * 256 + (int)(crc & 0xFF)]
                ^ t[6 * 256 + (int)((crc >> 8) & 0xFF)]
                ^ t[5 * 256 + (int)((crc >> 16) & 0xFF)]
                ^ t[4 * 256 + (int)((crc >> 24) & 0xFF)]
                ^ t[3 * 256 + (int)((crc >> 32) & 0xFF)]
                ^ t[2 * 256 + (int)((crc >> 40) & 0xFF)]
                ^ t[1 * 256 + (int)((crc >> 48) & 0xFF)]
                ^ t[(int)(crc >> 56)];
            data = data[8..];
        }
        foreach (byte b in data)
            crc = t[(int)((crc ^ b) & 0xFF)] ^ (crc >> 8);
        return crc;
    }

    public static ulong Compute(ReadOnlySpan<byte> data) => Update(0, data);
}
