namespace Diagnostics.Server.Persistence;

/// <summary>
/// LZF decompression (liblzf's format, which Redis uses for RDB strings with rdbcompression yes).
/// The compressed stream is a series of runs, each starting with a control byte:
/// below 32 it is a literal run of control+1 bytes that follow; otherwise the top 3 bits are a
/// length (7 = one more length byte follows) and the low 5 bits plus the next byte are a distance
/// back into the output to copy length+2 bytes from (overlapping copies repeat bytes).
/// </summary>
internal static class Lzf
{
    /// <summary>Decompresses <paramref name="input"/> into <paramref name="output"/>; returns the byte count
    /// written, or -1 when the input is corrupt or does not fit the output.</summary>
    public static int Decompress(ReadOnlySpan<byte> input, Span<byte> output)
    {
        int ip = 0;
        int op = 0;
        while (ip < input.Length)
        {
            int control = input[ip++];
            if (control < 32)
            {
                int literal = control + 1;
                if (ip + literal > input.Length || op + literal > output.Length)
                    return -1;
                input.Slice(ip, literal).CopyTo(output[op..]);
                ip += literal;
                op += literal;
                continue;
            }

            int length = control >> 5;
            int distance = (control & 0x1F) << 8;
            if (length == 7)
            {
                if (ip >= input.Length)
                    return -1;
                length += input[ip++];
            }
            if (ip >= input.Length)
                return -1;
            distance += input[ip++];
            length += 2;
            int reference = op - distance - 1;
            if (reference < 0 || op + length > output.Length)
                return -1;
            if (distance + 1 >= length)
            {
                // Source and destination do not overlap: one block copy.
                output.Slice(reference, length).CopyTo(output[op..]);
                op += length;
            }
            else
            {
                // Overlapping reference: bytes written by this copy are read again by it (run-length style).
                for (int i = 0; i < length; i++)
                    output[op++] = output[reference + i];
            }
        }
        return op;
    }
}
