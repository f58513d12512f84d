using System.Buffers.Binary;
using Diagnostics.Server.Persistence;

namespace Diagnostics.Server.Scripting.Functions;

/// <summary>
/// FUNCTION DUMP's payload, as Redis writes it so either server restores the other's: each
/// library as the RDB function opcode and its code as an RDB string, then the RDB version (2
/// bytes) and a CRC64 of everything before it (8 bytes), both little-endian.
/// </summary>
internal static class FunctionDump
{
    private const byte OpcodeFunction2 = 0xF5;
    // Redis 7.0's RDB version: a payload this server writes restores on it.
    private const ushort RdbVersion = 10;
    // The newest RDB version whose function payloads this server reads (Redis 7.2 writes 11).
    private const ushort MaxReadableVersion = 12;
    public const string WrongPayload = "ERR DUMP payload version or checksum are wrong";

    public static byte[] Write(IReadOnlyList<FunctionLibrary> libraries)
    {
        using var output = new MemoryStream();
        Span<byte> header = stackalloc byte[5];
        foreach (var library in libraries)
        {
            output.WriteByte(OpcodeFunction2);
            int length = library.Code.Length;
            int n;
            if (length < 1 << 6)
            {
                header[0] = (byte)length;
                n = 1;
            }
            else if (length < 1 << 14)
            {
                header[0] = (byte)(0x40 | length >> 8);
                header[1] = (byte)length;
                n = 2;
            }
            else
            {
                header[0] = 0x80;
                BinaryPrimitives.WriteUInt32BigEndian(header[1..], (uint)length);
                n = 5;
            }
            output.Write(header[..n]);
            output.Write(library.Code);
        }
        Span<byte> footer = stackalloc byte[8];
        BinaryPrimitives.WriteUInt16LittleEndian(footer, RdbVersion);
        output.Write(footer[..2]);
        BinaryPrimitives.WriteUInt64LittleEndian(footer, Crc64.Compute(output.GetBuffer().AsSpan(0, (int)output.Length)));
        output.Write(footer);
        return output.ToArray();
    }

    /// <summary>The libraries' code in <paramref name="payload"/>; false with the error reply text.</summary>
    public static bool TryRead(ReadOnlySpan<byte> payload, List<byte[]> codes, out string? error)
    {
        error = WrongPayload;
        if (payload.Length < 10)
            return false;
        ushort version = BinaryPrimitives.ReadUInt16LittleEndian(payload[^10..]);
        ulong crc = BinaryPrimitives.ReadUInt64LittleEndian(payload[^8..]);
        if (version > MaxReadableVersion || crc != Crc64.Compute(payload[..^8]))
            return false;
        ReadOnlySpan<byte> body = payload[..^10];
        while (!body.IsEmpty)
        {
            if (body[0] != OpcodeFunction2)
            {
                error = "ERR given type is not a function";
                return false;
            }
            if (!TryReadString(body[1..], out byte[]? code, out int used))
            {
                error = "ERR failed loading the library";
                return false;
            }
            codes.Add(code!);
            body = body[(1 + used)..];
        }
        error = null;
        return true;
    }

    /// <summary>An RDB string: plain, or LZF-compressed as Redis writes longer code.</summary>
    private static bool TryReadString(ReadOnlySpan<byte> input, out byte[]? value, out int used)
    {
        value = null;
        used = 0;
        if (!TryReadLength(input, out long length, out bool encoded, out int n))
            return false;
        if (!encoded)
        {
            if (length > input.Length - n)
                return false;
            value = input.Slice(n, (int)length).ToArray();
            used = n + (int)length;
            return true;
        }
        if (length != 3) // only LZF: code is never an integer encoding
            return false;
        if (!TryReadLength(input[n..], out long compressed, out bool e1, out int n1) || e1
            || !TryReadLength(input[(n + n1)..], out long plain, out bool e2, out int n2) || e2)
            return false;
        int start = n + n1 + n2;
        if (compressed > input.Length - start || plain > 512L * 1024 * 1024)
            return false;
        value = new byte[plain];
        if (Lzf.Decompress(input.Slice(start, (int)compressed), value) != plain)
            return false;
        used = start + (int)compressed;
        return true;
    }

    private static bool TryReadLength(ReadOnlySpan<byte> input, out long length, out bool encoded, out int used)
    {
        length = 0;
        encoded = false;
        used = 0;
        if (input.IsEmpty)
            return false;
        byte first = input[0];
        switch (first >> 6)
        {
            case 0:
                length = first & 0x3F;
                used = 1;
                return true;
            case 1:
                if (input.Length < 2)
                    return false;
                length = (first & 0x3F) << 8 | input[1];
                used = 2;
                return true;
            case 2:
                if (first == 0x80 && input.Length >= 5)
                {
                    length = BinaryPrimitives.ReadUInt32BigEndian(input[1..]);
                    used = 5;
                    return true;
                }
                if (first == 0x81 && input.Length >= 9)
                {
                    ulong big = BinaryPrimitives.ReadUInt64BigEndian(input[1..]);
                    if (big > int.MaxValue)
                        return false;
                    length = (long)big;
                    used = 9;
                    return true;
                }
                return false;
            default:
                encoded = true;
                length = first & 0x3F;
                used = 1;
                return true;
        }
    }
}
