using System.Runtime.InteropServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// LZF compression as Redis's copy of liblzf 3.6 does it (lzf_compress with HLOG 16 and
/// VERY_FAST), so the RDB strings and DUMP payloads written here are the bytes redis-server writes
/// for the same value. Written by hand: no .NET library on this machine's NuGet source implements
/// LZF, and matching Redis byte for byte needs its exact hash and match rules anyway.
/// <para>
/// liblzf's hash table starts uninitialised; an empty slot (offset 0 from the input) never
/// matches, so a zeroed table gives the output of a fresh redis-server. Zeroing 256 KB for every
/// string would cost more than compressing short values, so each call numbers its positions from
/// a base past everything stored before: older entries read as empty without being cleared.
/// </para>
/// The table lives in tracked native memory, charged to the thread that serializes. Not thread-safe.
/// </summary>
internal sealed unsafe class LzfCompressor : IDisposable
{
    private const int HashLog = 16;
    private const int HashSize = 1 << HashLog;
    private const int MaxLiteral = 1 << 5;
    private const int MaxOffset = 1 << 13;
    private const int MaxReference = (1 << 8) + (1 << 3);

    private uint* _table;
    private uint _base;

    public LzfCompressor()
    {
        _table = (uint*)TrackedAllocator.Alloc(HashSize * sizeof(uint));
        NativeMemory.Clear(_table, HashSize * sizeof(uint));
    }

    /// <summary>
    /// Compresses <paramref name="input"/> into at most <paramref name="outputLimit"/> bytes of
    /// <paramref name="output"/> (which must have room for that many). Returns the compressed size,
    /// or 0 when it does not fit (the caller then stores the input as it is), as lzf_compress does.
    /// </summary>
    public int Compress(ReadOnlySpan<byte> input, Span<byte> output, int outputLimit)
    {
        int inLength = input.Length;
        if (inLength == 0 || outputLimit == 0)
            return 0;
        if ((ulong)_base + (ulong)inLength + 2 > uint.MaxValue)
        {
            NativeMemory.Clear(_table, HashSize * sizeof(uint));
            _base = 0;
        }
        uint origin = _base;
        _base += (uint)inLength + 1;
        uint* table = _table;

        int ip = 0;
        int op = 1; // the first literal run's control byte is written when the run ends
        int literal = 0;
        uint hash = inLength >= 2 ? (uint)(input[0] << 8 | input[1]) : 0;
        while (ip < inLength - 2)
        {
            hash = (hash << 8) | input[ip + 2];
            uint* slot = table + Index(hash);
            uint stored = *slot;
            *slot = origin + (uint)ip;
            // A slot from an earlier call, or holding offset 0, is empty (liblzf: ref > in_data).
            int reference = stored > origin ? (int)(stored - origin) : 0;
            if (reference > 0 && reference < ip && ip - reference - 1 < MaxOffset
                && input[reference + 2] == input[ip + 2] && input[reference] == input[ip] && input[reference + 1] == input[ip + 1])
            {
                int offset = ip - reference - 1;
                int length = 2;
                int maxLength = Math.Min(inLength - ip - length, MaxReference);
                if (op + 3 + 1 >= outputLimit && op - (literal == 0 ? 1 : 0) + 3 + 1 >= outputLimit)
                    return 0;
                output[op - literal - 1] = (byte)(literal - 1); // stop the literal run
                op -= literal == 0 ? 1 : 0;                       // or undo it when empty
                length = MatchLength(input, reference, ip, length, maxLength);
                length -= 2; // now the byte count - 1
                ip++;
                if (length < 7)
                {
                    output[op++] = (byte)((offset >> 8) + (length << 5));
                }
                else
                {
                    output[op++] = (byte)((offset >> 8) + (7 << 5));
                    output[op++] = (byte)(length - 7);
                }
                output[op++] = (byte)offset;
                literal = 0;
                op++; // start a run
                ip += length + 1;
                if (ip >= inLength - 2)
                    break;
                // VERY_FAST: hash the last two positions of the match only.
                ip -= 2;
                hash = (uint)(input[ip] << 8 | input[ip + 1]);
                hash = (hash << 8) | input[ip + 2];
                table[Index(hash)] = origin + (uint)ip;
                ip++;
                hash = (hash << 8) | input[ip + 2];
                table[Index(hash)] = origin + (uint)ip;
                ip++;
            }
            else
            {
                if (op >= outputLimit)
                    return 0;
                literal++;
                output[op++] = input[ip++];
                if (literal == MaxLiteral)
                {
                    output[op - literal - 1] = (byte)(literal - 1);
                    literal = 0;
                    op++;
                }
            }
        }
        if (op + 3 > outputLimit) // at most 3 bytes can be missing here
            return 0;
        while (ip < inLength)
        {
            literal++;
            output[op++] = input[ip++];
            if (literal == MaxLiteral)
            {
                output[op - literal - 1] = (byte)(literal - 1);
                literal = 0;
                op++;
            }
        }
        output[op - literal - 1] = (byte)(literal - 1); // end the run
        op -= literal == 0 ? 1 : 0;
        return op;
    }

    /// <summary>liblzf's IDX for VERY_FAST: a multiplicative-style hash of the 3 bytes in the low 24 bits.</summary>
    private static uint Index(uint hash) => ((hash >> (3 * 8 - HashLog)) - hash * 5) & (HashSize - 1);

    /// <summary>
    /// How far the match at <paramref name="reference"/> extends, as liblzf's loop counts it: when
    /// more than 16 bytes may match it first compares 16 bytes unrolled without the bound (so a
    /// match near the end may run to the input's last byte), then continues up to the bound.
    /// </summary>
    private static int MatchLength(ReadOnlySpan<byte> input, int reference, int ip, int length, int maxLength)
    {
        if (maxLength > 16)
        {
            for (int i = 0; i < 16; i++)
            {
                length++;
                if (input[reference + length] != input[ip + length])
                    return length;
            }
        }
        do
            length++;
        while (length < maxLength && input[reference + length] == input[ip + length]);
        return length;
    }

    public void Dispose()
    {
        if (_table != null)
            TrackedAllocator.Free((byte*)_table);
        _table = null;
    }
}
