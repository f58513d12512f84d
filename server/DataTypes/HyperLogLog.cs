using System.Buffers.Binary;
using System.Numerics;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// Redis 7.0's HyperLogLog, on the bytes of the string value that holds it: the same layout, the
/// same edits and the same estimate, so a value made here is byte for byte the value
/// redis-server 7.0.15 makes for the same commands (and one can be moved to the other).
/// <para>
/// Layout: a 16-byte header, "HYLL", the encoding (0 dense, 1 sparse), 3 unused bytes, and the
/// cached cardinality as a little-endian 64-bit integer whose top bit (byte 15's MSB) marks the
/// cache stale. Then 16384 registers: dense, 6 bits each packed from the low bit up (12288
/// bytes); or sparse, a run-length code of ZERO (00xxxxxx, 1-64 zero registers), XZERO
/// (01xxxxxx yyyyyyyy, 1-16384 zero registers) and VAL (1vvvvvxx, value 1-32 repeated 1-4
/// times) opcodes.
/// </para>
/// <para>
/// Values arrive from clients (SET, RESTORE), so every reader treats them as hostile: a sparse
/// form whose runs stop short of 16384 registers or would pass it is corrupt (the Try methods
/// return false, the command replies <see cref="InvalidObjectError"/>), and nothing reads
/// outside the span. One Redis detail is kept on purpose: an XZERO cut by the end of the value
/// reads its second byte as 0, which is what Redis finds there (the string's terminating NUL).
/// The corruption rules are those of Debian's 7.0.15 (with the CVE-2025-32023 fix): any run
/// that would carry the register count past 16384 makes the value corrupt.
/// </para>
/// <para>
/// Nothing here allocates except <see cref="SelfTest"/>: PFADD and PFCOUNT work in the
/// caller's buffers and on the stack.
/// </para>
/// </summary>
public static class HyperLogLog
{
    /// <summary>Bytes before the registers: magic, encoding, 3 unused, cached cardinality.</summary>
    public const int HeaderSize = 16;

    /// <summary>Registers per HyperLogLog (P = 14 index bits).</summary>
    public const int RegisterCount = 1 << IndexBits;

    /// <summary>Bits per dense register.</summary>
    public const int RegisterBits = 6;

    /// <summary>The largest value a dense register holds.</summary>
    public const int MaxRegisterValue = (1 << RegisterBits) - 1;

    /// <summary>Bytes of the dense registers (16384 × 6 bits).</summary>
    public const int DenseRegistersLength = RegisterCount * RegisterBits / 8;

    /// <summary>The exact length of a dense value; any other length with the dense encoding is not a HyperLogLog.</summary>
    public const int DenseLength = HeaderSize + DenseRegistersLength;

    /// <summary>The length of a new, empty (sparse) value: the header and one XZERO of 16384.</summary>
    public const int EmptySparseLength = HeaderSize + 2;

    /// <summary>
    /// The most bytes one <see cref="SparseSet"/> adds to a sparse value (an XZERO split into
    /// XZERO-VAL-XZERO), so a buffer of length + MaxSparseGrowth always has room.
    /// </summary>
    public const int MaxSparseGrowth = 3;

    /// <summary>The largest register value a sparse VAL opcode holds; a larger one makes the value dense.</summary>
    public const int SparseMaxValue = 32;

    /// <summary>hll-sparse-max-bytes's default.</summary>
    public const int DefaultSparseMaxBytes = 3000;

    /// <summary>The encoding byte of a dense value.</summary>
    public const byte DenseEncoding = 0;

    /// <summary>The encoding byte of a sparse value.</summary>
    public const byte SparseEncoding = 1;

    /// <summary>The error for a value that fails <see cref="IsValid"/> (a string of another type gets the usual WRONGTYPE).</summary>
    public const string NotHyperLogLogError = "WRONGTYPE Key is not a valid HyperLogLog string value.";

    /// <summary>The error for a value whose registers do not decode (a Try method returned false).</summary>
    public const string InvalidObjectError = "INVALIDOBJ Corrupted HLL object detected";

    /// <summary>PFDEBUG DECODE on a dense value.</summary>
    public const string NotSparseError = "ERR HLL encoding is not sparse";

    /// <summary>PFDEBUG on a missing key.</summary>
    public const string NoSuchKeyError = "ERR The specified key does not exist";

    /// <summary>PFDEBUG with another subcommand; {0} is the subcommand as the client wrote it.</summary>
    public const string UnknownDebugSubcommandError = "ERR Unknown PFDEBUG subcommand '{0}'";

    private const int IndexBits = 14;                       // P
    private const int PatternBits = 64 - IndexBits;         // Q: hash bits left to count the 0...01 pattern in
    private const uint HashSeed = 0xadc83b19;
    private const double AlphaInfinity = 0.721347520444481703680;   // 0.5 / ln(2)
    private const int SparseZeroMaxLength = 64;
    private const int SparseValMaxLength = 4;
    private const byte CacheStaleBit = 0x80;
    private const int CacheStaleByte = 15;

    /// <summary>What <see cref="SparseSet"/> did.</summary>
    public enum SparseSetResult
    {
        /// <summary>The register already held the value or more; nothing was written.</summary>
        Unchanged,

        /// <summary>The register grew; the value was edited in place and its cache marked stale.</summary>
        Changed,

        /// <summary>
        /// Redis would make the value dense here (the value passes 32, or the sparse form would
        /// pass hll-sparse-max-bytes); nothing was written. Convert with <see cref="TryToDense"/>,
        /// then <see cref="DenseSet"/> (which then returns true).
        /// </summary>
        NeedsDense,

        /// <summary>The sparse form ends before the register; nothing was written (reply <see cref="InvalidObjectError"/>).</summary>
        Corrupt,
    }

    // ---------------------------------------------------------------- header

    /// <summary>Writes a new, empty HyperLogLog (sparse, cached cardinality 0) into the first <see cref="EmptySparseLength"/> bytes.</summary>
    public static void WriteEmptySparse(Span<byte> destination)
    {
        var value = destination[..EmptySparseLength];
        value.Clear();
        "HYLL"u8.CopyTo(value);
        value[4] = SparseEncoding;
        WriteXZero(value[HeaderSize..], RegisterCount);
    }

    /// <summary>
    /// Redis's check of a string before any HyperLogLog command (isHLLObjectOrReply): at least a
    /// header, the magic "HYLL", a known encoding, and exactly <see cref="DenseLength"/> bytes
    /// when dense. False: reply <see cref="NotHyperLogLogError"/>. The sparse opcodes are not
    /// checked here; the operations that read them report corruption themselves.
    /// </summary>
    public static bool IsValid(ReadOnlySpan<byte> value) =>
        value.Length >= HeaderSize
        && value[..4].SequenceEqual("HYLL"u8)
        && (value[4] == SparseEncoding || (value[4] == DenseEncoding && value.Length == DenseLength));

    /// <summary>True when a valid value is dense.</summary>
    public static bool IsDense(ReadOnlySpan<byte> value) => value.Length >= HeaderSize && value[4] == DenseEncoding;

    /// <summary>PFDEBUG ENCODING's status reply for a valid value: "dense" or "sparse".</summary>
    public static ReadOnlySpan<byte> EncodingName(ReadOnlySpan<byte> value) => IsDense(value) ? "dense"u8 : "sparse"u8;

    /// <summary>True when the cached cardinality is current (PFCOUNT may answer it without counting).</summary>
    public static bool IsCacheValid(ReadOnlySpan<byte> hll) => (hll[CacheStaleByte] & CacheStaleBit) == 0;

    /// <summary>Marks the cached cardinality stale, as PFADD (when a register grew) and PFMERGE do; the other bytes stay.</summary>
    public static void InvalidateCache(Span<byte> hll) => hll[CacheStaleByte] |= CacheStaleBit;

    // ---------------------------------------------------------------- hashing

    /// <summary>
    /// Where an element lands (hllPatLen): MurmurHash64A of its bytes with seed 0xadc83b19; the
    /// low 14 bits pick the register (<paramref name="index"/>), and <paramref name="count"/> is
    /// the position of the first 1 bit in the other 50 (1-51, 51 when they are all 0).
    /// </summary>
    public static void ElementPosition(ReadOnlySpan<byte> element, out int index, out int count)
    {
        ulong hash = MurmurHash64A(element, HashSeed);
        index = (int)(hash & (RegisterCount - 1));
        // The sentinel bit past the 50 counts ends an all-zero pattern at 51.
        ulong pattern = (hash >> IndexBits) | (1UL << PatternBits);
        count = BitOperations.TrailingZeroCount(pattern) + 1;
    }

    /// <summary>
    /// MurmurHash2, 64-bit (MurmurHash64A), reading 8-byte blocks little-endian as Redis does on
    /// every architecture.
    /// </summary>
    public static ulong MurmurHash64A(ReadOnlySpan<byte> data, uint seed)
    {
        const ulong m = 0xc6a4a7935bd1e995;
        const int r = 47;
        ulong h = seed ^ ((ulong)data.Length * m);

        int blocks = data.Length & ~7;
        for (int at = 0; at < blocks; at += 8)
        {
            ulong k = BinaryPrimitives.ReadUInt64LittleEndian(data.Slice(at, 8));
            k *= m;
            k ^= k >> r;
            k *= m;
            h ^= k;
            h *= m;
        }

        var tail = data[blocks..];
        if (tail.Length > 0)
        {
            for (int i = tail.Length - 1; i >= 0; i--)
                h ^= (ulong)tail[i] << (8 * i);
            h *= m;
        }

        h ^= h >> r;
        h *= m;
        h ^= h >> r;
        return h;
    }

    // ---------------------------------------------------------------- dense

    /// <summary>
    /// Raises register <paramref name="index"/> of a dense value to <paramref name="count"/>
    /// (0-63) when it holds less; true when it grew. Does not touch the cache: PFADD marks it
    /// stale once at the end when anything grew.
    /// </summary>
    public static bool DenseSet(Span<byte> hll, int index, int count)
    {
        if ((uint)count > MaxRegisterValue)
            throw new ArgumentOutOfRangeException(nameof(count));
        var registers = hll.Slice(HeaderSize, DenseRegistersLength);
        if (ReadRegister(registers, index) >= count)
            return false;
        WriteRegister(registers, index, count);
        return true;
    }

    /// <summary>Register <paramref name="index"/> of a dense value.</summary>
    public static int DenseGet(ReadOnlySpan<byte> hll, int index) =>
        ReadRegister(hll.Slice(HeaderSize, DenseRegistersLength), index);

    /// <summary>
    /// PFMERGE's last step on a dense destination: raises each register to the merged maximum
    /// (<paramref name="registers"/>, one byte per register). The caller then marks the cache stale.
    /// </summary>
    public static void DenseMergeRegisters(Span<byte> hll, ReadOnlySpan<byte> registers)
    {
        registers = registers[..RegisterCount];
        for (int i = 0; i < RegisterCount; i++)
        {
            if (registers[i] != 0)
                DenseSet(hll, i, registers[i]);
        }
    }

    // Registers are packed from each byte's low bit up, so a register either sits in one byte
    // (bit offsets 0 and 2) or straddles two (offsets 4 and 6). The last register (offset 2 of
    // the last byte) never reaches past the array.
    private static int ReadRegister(ReadOnlySpan<byte> registers, int index)
    {
        int bit = index * RegisterBits;
        int at = bit >> 3, shift = bit & 7;
        int value = registers[at] >> shift;
        if (shift > 8 - RegisterBits)
            value |= registers[at + 1] << (8 - shift);
        return value & MaxRegisterValue;
    }

    private static void WriteRegister(Span<byte> registers, int index, int value)
    {
        int bit = index * RegisterBits;
        int at = bit >> 3, shift = bit & 7;
        registers[at] = (byte)((registers[at] & ~(MaxRegisterValue << shift)) | (value << shift));
        if (shift > 8 - RegisterBits)
        {
            int high = 8 - shift;
            registers[at + 1] = (byte)((registers[at + 1] & ~(MaxRegisterValue >> high)) | (value >> high));
        }
    }

    // ---------------------------------------------------------------- sparse

    /// <summary>
    /// Raises register <paramref name="index"/> of a sparse value to <paramref name="count"/>
    /// (1-63) when it holds less, editing the opcodes in place exactly as Redis's hllSparseSet
    /// does (split the run that holds the register, then merge equal neighbouring VALs), so the
    /// bytes stay Redis's. The value is <c>buffer[..length]</c>; <paramref name="length"/> is
    /// updated. Nothing is written past the new length, and the buffer needs room for it:
    /// <c>length + <see cref="MaxSparseGrowth"/></c> always suffices, and so does
    /// <paramref name="sparseMaxBytes"/> when length ≤ it (the value never grows past it).
    /// <para>
    /// PFADD, per element: <see cref="ElementPosition"/>; on a dense value <see cref="DenseSet"/>;
    /// on a sparse one SparseSet, and on <see cref="SparseSetResult.NeedsDense"/>
    /// <see cref="TryToDense"/> into a new <see cref="DenseLength"/> value (false: reply
    /// <see cref="InvalidObjectError"/>) which replaces the sparse one, then DenseSet.
    /// </para>
    /// </summary>
    /// <param name="sparseMaxBytes">hll-sparse-max-bytes: a split that would make the value longer returns NeedsDense.</param>
    public static SparseSetResult SparseSet(Span<byte> buffer, ref int length, int index, int count, int sparseMaxBytes)
    {
        if ((uint)index >= RegisterCount)
            throw new ArgumentOutOfRangeException(nameof(index));
        if (count < 1 || count > MaxRegisterValue)
            throw new ArgumentOutOfRangeException(nameof(count));
        if (length < HeaderSize || length > buffer.Length)
            throw new ArgumentOutOfRangeException(nameof(length));

        // A value VAL cannot hold: Redis promotes before even looking at the opcodes.
        if (count > SparseMaxValue)
            return SparseSetResult.NeedsDense;

        var ops = buffer[HeaderSize..length];

        // Find the opcode covering the register; 'first' is the first register it covers.
        int at = 0, first = 0, previous = -1, size = 0, run = 0;
        while (at < ops.Length)
        {
            size = ReadOpcode(ops, at, out run, out _);
            if (index < first + run)
                break;
            previous = at;
            at += size;
            first += run;
        }
        if (at >= ops.Length)
            return SparseSetResult.Corrupt;

        byte op = ops[at];
        bool isVal = IsVal(op);
        if (isVal)
        {
            if (ValValue(op) >= count)
                return SparseSetResult.Unchanged;
        }

        // A run of one (VAL or ZERO) becomes one VAL in place.
        if (run == 1 && !IsXZero(op))
        {
            ops[at] = Val(count, 1);
            MergeAdjacentValues(buffer, ref length, previous);
            InvalidateCache(buffer);
            return SparseSetResult.Changed;
        }

        // Otherwise split the run: [run before][VAL count,1][run after], at most 5 bytes
        // (XZERO-VAL-XZERO); zero runs take ZERO up to 64 registers, XZERO beyond.
        Span<byte> sequence = stackalloc byte[5];
        int written = 0;
        int last = first + run - 1;
        int before = index - first, after = last - index;
        if (isVal)
        {
            int current = ValValue(op);
            if (before > 0)
                sequence[written++] = Val(current, before);
            sequence[written++] = Val(count, 1);
            if (after > 0)
                sequence[written++] = Val(current, after);
        }
        else
        {
            if (before > 0)
                written += WriteZeroRun(sequence[written..], before);
            sequence[written++] = Val(count, 1);
            if (after > 0)
                written += WriteZeroRun(sequence[written..], after);
        }

        int delta = written - size;
        if (delta > 0 && length + delta > sparseMaxBytes)
            return SparseSetResult.NeedsDense;
        int newLength = length + delta;
        if (newLength > buffer.Length)
            throw new ArgumentException("The buffer has no room for the grown value.", nameof(buffer));

        int next = at + size;   // past the replaced opcode
        int end = ops.Length;
        if (delta != 0 && next < end)
            buffer.Slice(HeaderSize + next, end - next).CopyTo(buffer[(HeaderSize + next + delta)..]);
        // Redis copies all of the new sequence; when the opcode was an XZERO cut by the end of
        // the value, its last byte lands on the terminator and is lost. Keep what fits.
        int kept = Math.Min(written, newLength - HeaderSize - at);
        if (kept > 0)
            sequence[..kept].CopyTo(buffer[(HeaderSize + at)..]);
        length = newLength;

        MergeAdjacentValues(buffer, ref length, previous);
        InvalidateCache(buffer);
        return SparseSetResult.Changed;
    }

    /// <summary>
    /// PFMERGE's last step on a sparse destination: sets each non-zero merged register
    /// (<paramref name="registers"/>, one byte per register) in register order through
    /// <see cref="SparseSet"/>, as Redis does, so the bytes match. When Redis would promote,
    /// the value is converted into <paramref name="denseScratch"/> (at least
    /// <see cref="DenseLength"/> bytes) and the rest is set there: the result is then dense and
    /// the method returns true. The caller then marks the cache stale.
    /// <paramref name="buffer"/> needs room for max(length, sparseMaxBytes) bytes.
    /// </summary>
    public static bool SparseMergeRegisters(Span<byte> buffer, ref int length, ReadOnlySpan<byte> registers, int sparseMaxBytes, Span<byte> denseScratch)
    {
        registers = registers[..RegisterCount];
        bool dense = false;
        for (int i = 0; i < RegisterCount; i++)
        {
            int value = registers[i];
            if (value == 0)
                continue;
            if (dense)
            {
                DenseSet(denseScratch, i, value);
                continue;
            }
            // Redis ignores a corrupt result here (the destination already passed the merge's
            // checks), and a failed promotion leaves it sparse for the next register.
            if (SparseSet(buffer, ref length, i, value, sparseMaxBytes) == SparseSetResult.NeedsDense
                && TryToDense(buffer[..length], denseScratch))
            {
                dense = true;
                DenseSet(denseScratch, i, value);
            }
        }
        return dense;
    }

    /// <summary>
    /// Converts a sparse value into its dense form in the first <see cref="DenseLength"/> bytes
    /// of <paramref name="dense"/>: the header is copied (magic, unused bytes and cached
    /// cardinality kept) with the dense encoding, the registers decoded. False when the opcodes
    /// do not cover exactly 16384 registers (reply <see cref="InvalidObjectError"/>); the
    /// destination then holds garbage. A dense input is copied as it is; one failing
    /// <see cref="IsValid"/> returns false.
    /// </summary>
    public static bool TryToDense(ReadOnlySpan<byte> sparse, Span<byte> dense)
    {
        dense = dense[..DenseLength];
        if (!IsValid(sparse))
            return false;
        if (IsDense(sparse))
        {
            sparse.CopyTo(dense);
            return true;
        }

        dense.Clear();
        sparse[..HeaderSize].CopyTo(dense);
        dense[4] = DenseEncoding;
        var registers = dense[HeaderSize..];
        var ops = sparse[HeaderSize..];
        int index = 0;
        for (int at = 0; at < ops.Length;)
        {
            at += ReadOpcode(ops, at, out int run, out int value);
            if (run > RegisterCount - index)
                return false;
            if (value != 0)
            {
                for (int end = index + run; index < end; index++)
                    WriteRegister(registers, index, value);
            }
            else
            {
                index += run;
            }
        }
        return index == RegisterCount;
    }

    // Merges runs of equal VALs around an edit, as Redis does: from the opcode before the edited
    // one, at most 5 opcodes, a merge counting as one. The scan is bounded so the result (and its
    // bytes) are Redis's even where a longer scan would merge more.
    private static void MergeAdjacentValues(Span<byte> buffer, ref int length, int previous)
    {
        var ops = buffer[HeaderSize..length];
        int end = ops.Length;
        int at = previous >= 0 ? previous : 0;
        for (int scans = 5; at < end && scans > 0; scans--)
        {
            byte op = ops[at];
            if (IsXZero(op))
            {
                at += 2;
                continue;
            }
            if (!IsVal(op))
            {
                at++;
                continue;
            }
            if (at + 1 < end && IsVal(ops[at + 1]) && ValValue(op) == ValValue(ops[at + 1]))
            {
                int run = ValLength(op) + ValLength(ops[at + 1]);
                if (run <= SparseValMaxLength)
                {
                    ops[at + 1] = Val(ValValue(op), run);
                    ops[(at + 1)..end].CopyTo(ops[at..]);
                    end--;
                    continue;   // the merged VAL may merge again with the next one
                }
            }
            at++;
        }
        length = HeaderSize + end;
    }

    // Reads the opcode at 'at': its registers (run), their value (0 for ZERO/XZERO) and its size.
    private static int ReadOpcode(ReadOnlySpan<byte> ops, int at, out int run, out int value)
    {
        byte op = ops[at];
        if (IsVal(op))
        {
            value = ValValue(op);
            run = ValLength(op);
            return 1;
        }
        value = 0;
        if (!IsXZero(op))
        {
            run = (op & 0x3F) + 1;
            return 1;
        }
        // An XZERO cut by the end of the value: Redis reads the string's terminating NUL.
        int low = at + 1 < ops.Length ? ops[at + 1] : 0;
        run = ((op & 0x3F) << 8 | low) + 1;
        return 2;
    }

    private static bool IsVal(byte op) => (op & 0x80) != 0;
    private static bool IsXZero(byte op) => (op & 0xC0) == 0x40;
    private static int ValValue(byte op) => ((op >> 2) & 0x1F) + 1;
    private static int ValLength(byte op) => (op & 0x03) + 1;
    private static byte Val(int value, int run) => (byte)(0x80 | (value - 1) << 2 | (run - 1));

    private static int WriteZeroRun(Span<byte> destination, int run)
    {
        if (run <= SparseZeroMaxLength)
        {
            destination[0] = (byte)(run - 1);
            return 1;
        }
        WriteXZero(destination, run);
        return 2;
    }

    private static void WriteXZero(Span<byte> destination, int run)
    {
        int stored = run - 1;
        destination[0] = (byte)(0x40 | stored >> 8);
        destination[1] = (byte)stored;
    }

    // ---------------------------------------------------------------- counting

    /// <summary>
    /// Single-key PFCOUNT: the cached cardinality when current, else the estimate, which is then
    /// cached (<paramref name="cacheWritten"/>: the value changed, so Redis signals the key
    /// modified and propagates). False for a value failing <see cref="IsValid"/> or a corrupt
    /// sparse form (reply <see cref="InvalidObjectError"/>; nothing written). The count is what
    /// Redis replies, including its -9223372036854775808 for registers no estimate fits.
    /// </summary>
    public static bool TryCount(Span<byte> hll, out long cardinality, out bool cacheWritten)
    {
        cacheWritten = false;
        cardinality = 0;
        if (!IsValid(hll))
            return false;
        if (IsCacheValid(hll))
        {
            cardinality = (long)BinaryPrimitives.ReadUInt64LittleEndian(hll.Slice(8, 8));
            return true;
        }
        if (!TryEstimate(hll, out cardinality))
            return false;
        BinaryPrimitives.WriteInt64LittleEndian(hll.Slice(8, 8), cardinality);
        cacheWritten = true;
        return true;
    }

    /// <summary>The estimate from the registers, neither reading nor writing the cache; false as <see cref="TryCount"/>.</summary>
    public static bool TryEstimate(ReadOnlySpan<byte> hll, out long cardinality)
    {
        cardinality = 0;
        if (!IsValid(hll))
            return false;
        Span<int> histogram = stackalloc int[MaxRegisterValue + 1];
        histogram.Clear();
        if (IsDense(hll))
        {
            DenseHistogram(hll.Slice(HeaderSize, DenseRegistersLength), histogram);
        }
        else if (!SparseHistogram(hll[HeaderSize..], histogram))
        {
            return false;
        }
        cardinality = Estimate(histogram);
        return true;
    }

    /// <summary>
    /// Raises <paramref name="maxRegisters"/> (one byte per register, 16384) to this value's
    /// registers, as PFCOUNT with several keys and PFMERGE do. False for a value failing
    /// <see cref="IsValid"/> or a corrupt sparse form (reply <see cref="InvalidObjectError"/>);
    /// the maxima may then be partly raised.
    /// </summary>
    public static bool TryMergeInto(ReadOnlySpan<byte> hll, Span<byte> maxRegisters)
    {
        maxRegisters = maxRegisters[..RegisterCount];
        if (!IsValid(hll))
            return false;
        if (IsDense(hll))
        {
            var registers = hll.Slice(HeaderSize, DenseRegistersLength);
            for (int at = 0, index = 0; at < registers.Length; at += 3, index += 4)
            {
                int b0 = registers[at], b1 = registers[at + 1], b2 = registers[at + 2];
                Raise(maxRegisters, index, b0 & MaxRegisterValue);
                Raise(maxRegisters, index + 1, (b0 >> 6 | b1 << 2) & MaxRegisterValue);
                Raise(maxRegisters, index + 2, (b1 >> 4 | b2 << 4) & MaxRegisterValue);
                Raise(maxRegisters, index + 3, b2 >> 2);
            }
            return true;
        }

        var ops = hll[HeaderSize..];
        int covered = 0;
        for (int at = 0; at < ops.Length;)
        {
            at += ReadOpcode(ops, at, out int run, out int value);
            if (run > RegisterCount - covered)
                return false;
            if (value != 0)
            {
                for (int i = covered; i < covered + run; i++)
                    Raise(maxRegisters, i, value);
            }
            covered += run;
        }
        return covered == RegisterCount;
    }

    /// <summary>
    /// Reads all 16384 registers of a value, one per byte (PFDEBUG GETREG's numbers, after the
    /// command made the value dense); false as <see cref="TryMergeInto"/>.
    /// </summary>
    public static bool TryReadRegisters(ReadOnlySpan<byte> hll, Span<byte> registers)
    {
        registers[..RegisterCount].Clear();
        return TryMergeInto(hll, registers);
    }

    /// <summary>The estimate of merged registers (one byte per register, 16384): multi-key PFCOUNT's union count.</summary>
    public static long CountRaw(ReadOnlySpan<byte> maxRegisters)
    {
        maxRegisters = maxRegisters[..RegisterCount];
        // Sized for any byte, so a stray value cannot index past it; merged registers are ≤ 63.
        Span<int> histogram = stackalloc int[256];
        histogram.Clear();
        foreach (byte value in maxRegisters)
            histogram[value]++;
        return Estimate(histogram);
    }

    private static void Raise(Span<byte> maxRegisters, int index, int value)
    {
        if (value > maxRegisters[index])
            maxRegisters[index] = (byte)value;
    }

    private static void DenseHistogram(ReadOnlySpan<byte> registers, Span<int> histogram)
    {
        // Four registers in every three bytes.
        for (int at = 0; at < registers.Length; at += 3)
        {
            int b0 = registers[at], b1 = registers[at + 1], b2 = registers[at + 2];
            histogram[b0 & MaxRegisterValue]++;
            histogram[(b0 >> 6 | b1 << 2) & MaxRegisterValue]++;
            histogram[(b1 >> 4 | b2 << 4) & MaxRegisterValue]++;
            histogram[b2 >> 2]++;
        }
    }

    private static bool SparseHistogram(ReadOnlySpan<byte> ops, Span<int> histogram)
    {
        int covered = 0;
        for (int at = 0; at < ops.Length;)
        {
            at += ReadOpcode(ops, at, out int run, out int value);
            if (run > RegisterCount - covered)
                return false;
            covered += run;
            histogram[value] += run;
        }
        return covered == RegisterCount;
    }

    // Ertl's improved estimator ("New cardinality estimation algorithms for HyperLogLog
    // sketches", arXiv:1702.01284) from the register histogram, in Redis's order of operations
    // so the doubles, and the rounded count, are bit for bit Redis's.
    private static long Estimate(ReadOnlySpan<int> histogram)
    {
        const double m = RegisterCount;
        double z = m * Tau((m - histogram[PatternBits + 1]) / m);
        for (int j = PatternBits; j >= 1; j--)
        {
            z += histogram[j];
            z *= 0.5;
        }
        z += m * Sigma(histogram[0] / m);
        double estimate = AlphaInfinity * m * m / z;

        // Redis rounds half away from zero (llroundl) and casts through double to uint64. An
        // estimate past long's range (infinite when z is 0, e.g. every register at 51, or 63)
        // gives x86's "integer indefinite" 0x8000000000000000, which Redis replies as negative.
        if (!(estimate < 9223372036854775808.0))
            return long.MinValue;
        return (long)Math.Round(estimate, MidpointRounding.AwayFromZero);
    }

    private static double Sigma(double x)
    {
        if (x == 1.0)
            return double.PositiveInfinity;
        double y = 1, z = x, previous;
        do
        {
            x *= x;
            previous = z;
            z += x * y;
            y += y;
        }
        while (previous != z);
        return z;
    }

    private static double Tau(double x)
    {
        if (x == 0.0 || x == 1.0)
            return 0.0;
        double y = 1.0, z = 1 - x, previous;
        do
        {
            x = Math.Sqrt(x);
            previous = z;
            y *= 0.5;
            // pow, as Redis writes it: both end in the C library's pow, whose rounding a product need not match.
            z -= Math.Pow(1 - x, 2) * y;
        }
        while (previous != z);
        return z / 3;
    }

    // ---------------------------------------------------------------- PFDEBUG / PFSELFTEST

    /// <summary>
    /// The length of PFDEBUG DECODE's text for a sparse value (see <see cref="WriteSparseDecode"/>);
    /// a long because a 512 MB value decodes to more than 2 GB.
    /// </summary>
    public static long SparseDecodeLength(ReadOnlySpan<byte> hll)
    {
        var ops = hll[HeaderSize..];
        long length = 0;
        for (int at = 0; at < ops.Length;)
        {
            byte op = ops[at];
            at += ReadOpcode(ops, at, out int run, out int value);
            // "z:n " / "Z:n " / "v:value,n "
            length += IsVal(op) ? 4 + Digits(value) + Digits(run) : 3 + Digits(run);
        }
        return length == 0 ? 0 : length - 1;   // no trailing space
    }

    /// <summary>
    /// Writes PFDEBUG DECODE's text for a sparse value: each opcode as "z:run" (ZERO), "Z:run"
    /// (XZERO) or "v:value,run" (VAL), separated by single spaces, nothing for no opcodes. Redis
    /// does not check the opcodes here: whatever is there is decoded. Returns the bytes written;
    /// the destination must hold <see cref="SparseDecodeLength"/> bytes.
    /// </summary>
    public static int WriteSparseDecode(ReadOnlySpan<byte> hll, Span<byte> destination)
    {
        var ops = hll[HeaderSize..];
        int written = 0;
        for (int at = 0; at < ops.Length;)
        {
            byte op = ops[at];
            at += ReadOpcode(ops, at, out int run, out int value);
            if (written > 0)
                destination[written++] = (byte)' ';
            if (IsVal(op))
            {
                destination[written++] = (byte)'v';
                destination[written++] = (byte)':';
                written += WriteDigits(destination[written..], value);
                destination[written++] = (byte)',';
            }
            else
            {
                destination[written++] = IsXZero(op) ? (byte)'Z' : (byte)'z';
                destination[written++] = (byte)':';
            }
            written += WriteDigits(destination[written..], run);
        }
        return written;
    }

    private static int Digits(int value) => value < 10 ? 1 : value < 100 ? 2 : value < 1000 ? 3 : value < 10000 ? 4 : 5;

    private static int WriteDigits(Span<byte> destination, int value)
    {
        int digits = Digits(value);
        for (int i = digits - 1; i >= 0; i--)
        {
            destination[i] = (byte)('0' + value % 10);
            value /= 10;
        }
        return digits;
    }

    /// <summary>
    /// PFSELFTEST: Redis's two checks. Register access: 1000 rounds of random values written to
    /// every dense register and read back. Approximation: 10 million distinct 8-byte elements
    /// added to a dense and a sparse HyperLogLog at once; at 1, 10, 100 ... 10^7 the sparse one
    /// must still be sparse while below sparseMaxBytes / 2, both must agree, and the error must
    /// stay within 6 standard errors (1 at 10). True: reply +OK; false: reply
    /// <paramref name="error"/> (Redis's text, code included). Allocates, and takes about a
    /// second, as Redis's does.
    /// </summary>
    public static bool SelfTest(out string? error, int sparseMaxBytes = DefaultSparseMaxBytes)
    {
        var random = new Random();
        var dense = new byte[DenseLength];
        WriteEmptyDense(dense);
        var registers = dense.AsSpan(HeaderSize, DenseRegistersLength);
        var expected = new byte[RegisterCount];
        for (int round = 0; round < 1000; round++)
        {
            for (int i = 0; i < RegisterCount; i++)
            {
                int value = random.Next(MaxRegisterValue + 1);
                expected[i] = (byte)value;
                WriteRegister(registers, i, value);
            }
            for (int i = 0; i < RegisterCount; i++)
            {
                int value = ReadRegister(registers, i);
                if (value != expected[i])
                {
                    error = $"ERR TESTFAILED Register {i} should be {expected[i]} but is {value}";
                    return false;
                }
            }
        }

        WriteEmptyDense(dense);
        // A sparse value these edits make never passes a byte per register (an XZERO covers 65 or
        // more), so a huge hll-sparse-max-bytes (Redis takes up to LONG_MAX) needs no bigger buffer.
        int capacity = Math.Min(Math.Max(sparseMaxBytes, EmptySparseLength), HeaderSize + RegisterCount) + MaxSparseGrowth;
        var sparse = new byte[capacity];
        int sparseLength = EmptySparseLength;
        WriteEmptySparse(sparse);
        var promoted = new byte[DenseLength];
        bool isDense = false;

        double relativeError = 1.04 / Math.Sqrt(RegisterCount);
        long checkpoint = 1;
        ulong seed = (ulong)random.NextInt64();
        Span<byte> element = stackalloc byte[8];
        for (long j = 1; j <= 10_000_000; j++)
        {
            BinaryPrimitives.WriteUInt64LittleEndian(element, (ulong)j ^ seed);
            ElementPosition(element, out int index, out int count);
            DenseSet(dense, index, count);
            if (isDense)
            {
                DenseSet(promoted, index, count);
            }
            else if (SparseSet(sparse, ref sparseLength, index, count, sparseMaxBytes) == SparseSetResult.NeedsDense)
            {
                if (!TryToDense(sparse.AsSpan(0, sparseLength), promoted))
                {
                    error = "ERR TESTFAILED dense/sparse disagree";
                    return false;
                }
                isDense = true;
                DenseSet(promoted, index, count);
            }

            if (j != checkpoint)
                continue;
            if (j < sparseMaxBytes / 2 && isDense)
            {
                error = "ERR TESTFAILED sparse encoding not used";
                return false;
            }
            TryEstimate(dense, out long denseCount);
            TryEstimate(isDense ? promoted : sparse.AsSpan(0, sparseLength), out long otherCount);
            if (denseCount != otherCount)
            {
                error = "ERR TESTFAILED dense/sparse disagree";
                return false;
            }
            long absoluteError = Math.Abs(checkpoint - denseCount);
            long maxError = j == 10 ? 1 : (long)Math.Ceiling(relativeError * 6 * checkpoint);
            if (absoluteError > maxError)
            {
                error = $"ERR TESTFAILED Too big error. card:{checkpoint} abserr:{absoluteError}";
                return false;
            }
            checkpoint *= 10;
        }

        error = null;
        return true;
    }

    private static void WriteEmptyDense(Span<byte> destination)
    {
        destination[..DenseLength].Clear();
        "HYLL"u8.CopyTo(destination);
        destination[4] = DenseEncoding;
    }
}
