using System.Buffers.Binary;
using System.Buffers.Text;
using System.Runtime.CompilerServices;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Protocol;
using ValueType = Diagnostics.Server.Engine.ValueType;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Writes RDB version 10, byte for byte what Redis 7.0 writes, into a growable buffer of tracked
/// native memory (charged to the thread that serializes): the header and AUX fields, SELECTDB and
/// RESIZEDB, each key with its expiry, access hint, type, name and value, and EOF with the CRC-64.
/// Values are written in the form they are held in, as Redis writes the encoding it holds:
/// strings as integers or LZF-compressed when that is shorter, lists as their quicklist nodes,
/// intsets and listpacks (small sets, hashes, sorted sets) as their blocks, big ones element by
/// element, streams as their nodes and consumer groups (RdbWriter.Collections.cs, .Streams.cs).
/// <para>
/// One writer may produce a whole file, or each shard may fill its own and a file writer
/// concatenate them: the RDB is then header + each buffer in turn + EOF. The checksum covers every
/// byte before it, whichever buffer held it: the consumer folds each buffer's <see cref="Written"/>
/// into a running <see cref="Crc64"/> (<see cref="UpdateChecksum"/>) as it takes it out, and
/// passes the running value to <see cref="WriteEof"/> on the last writer, which adds what that
/// writer still holds. A writer alone: <c>WriteEof(0)</c>. Take the bytes out and
/// <see cref="Clear"/> whenever <see cref="Length"/> grows large: one buffer stays under 2 GB.
/// </para>
/// Not thread-safe: one serializing thread per writer.
/// </summary>
public sealed unsafe partial class RdbWriter : IDisposable
{
    /// <summary>Redis 7.0's RDB version, written in the header and in DUMP payloads.</summary>
    public const int Version = 10;

    private const byte OpcodeFunction2 = 0xF5;
    private const byte OpcodeIdle = 0xF8;
    private const byte OpcodeFreq = 0xF9;
    private const byte OpcodeAux = 0xFA;
    private const byte OpcodeResizeDb = 0xFB;
    private const byte OpcodeExpireTimeMs = 0xFC;
    private const byte OpcodeSelectDb = 0xFE;
    private const byte OpcodeEof = 0xFF;

    public const byte TypeString = 0;
    public const byte TypeSet = 2;
    public const byte TypeHash = 4;
    public const byte TypeSortedSet2 = 5;
    public const byte TypeSetIntset = 11;
    public const byte TypeHashListpack = 16;
    public const byte TypeSortedSetListpack = 17;
    public const byte TypeListQuicklist2 = 18;
    public const byte TypeStreamListpacks2 = 19;

    // A string's encoding marker: the top two bits set, then which encoding.
    private const byte EncodingInt8 = 0xC0;
    private const byte EncodingInt16 = 0xC1;
    private const byte EncodingInt32 = 0xC2;
    private const byte EncodingLzf = 0xC3;

    private const int InitialCapacity = 4096;
    // A buffer that grew past this for one big value is given back by Clear instead of kept.
    private const int RetainedCapacity = 4 * 1024 * 1024;
    // The most an LZF header takes: marker, then two lengths of up to 9 bytes.
    private const int LzfHeaderMax = 19;
    // Room left before a staged blob (a listpack or intset built in place) for its length prefix.
    private const int StageGap = 9;

    private static readonly byte[] s_redisVersion = System.Text.Encoding.ASCII.GetBytes(Commands.ConnectionCommands.CompatibleVersion);

    private byte* _data;
    private int _capacity;
    private int _length;
    private LzfCompressor? _lzf;

    public RdbWriter(RdbWriteOptions options) => Options = options;

    public RdbWriteOptions Options { get; }

    /// <summary>Bytes written since the last <see cref="Clear"/>.</summary>
    public int Length => _length;

    /// <summary>The bytes written since the last <see cref="Clear"/>; valid until the next write.</summary>
    public ReadOnlySpan<byte> Written => new(_data, _length);

    /// <summary>Tracked bytes held by the buffer (its capacity).</summary>
    public long CapacityBytes => _capacity;

    /// <summary>Continues <paramref name="crc"/> over <see cref="Written"/>: call before taking the bytes out and clearing.</summary>
    public ulong UpdateChecksum(ulong crc) => Crc64.Update(crc, Written);

    /// <summary>Forgets what was written, keeping the memory unless one large value inflated it.</summary>
    public void Clear()
    {
        _length = 0;
        if (_capacity > RetainedCapacity)
            ReleaseBuffer();
    }

    public void Dispose()
    {
        ReleaseBuffer();
        _length = 0;
        _lzf?.Dispose();
        _lzf = null;
    }

    private void ReleaseBuffer()
    {
        if (_data != null)
            TrackedAllocator.Free(_data);
        _data = null;
        _capacity = 0;
    }

    // ---- the file's framing --------------------------------------------------------------------

    /// <summary>"REDIS0010".</summary>
    public void WriteHeader() => WriteRaw("REDIS0010"u8);

    /// <summary>An AUX field (opcode, name, value), both as RDB strings.</summary>
    public void WriteAux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        WriteByte(OpcodeAux);
        WriteString(name);
        WriteString(value);
    }

    /// <summary>An AUX field with an integer value: its decimal text, integer-encoded where it fits (rdbSaveAuxFieldStrInt).</summary>
    public void WriteAux(ReadOnlySpan<byte> name, long value)
    {
        Span<byte> digits = stackalloc byte[20];
        Utf8Formatter.TryFormat(value, digits, out int written);
        WriteAux(name, digits[..written]);
    }

    /// <summary>
    /// The AUX fields Redis 7.0 writes for a standalone server (rdbSaveInfoAuxFields): redis-ver
    /// (the version this server reports in INFO), redis-bits, ctime, used-mem and aof-base (1 for
    /// the preamble of an AOF base file).
    /// </summary>
    public void WriteStandardAux(long ctimeUnixSeconds, long usedMemory, bool aofBase)
    {
        WriteAux("redis-ver"u8, s_redisVersion);
        WriteAux("redis-bits"u8, 64);
        WriteAux("ctime"u8, ctimeUnixSeconds);
        WriteAux("used-mem"u8, usedMemory);
        WriteAux("aof-base"u8, aofBase ? 1 : 0);
    }

    /// <summary>One function library (FUNCTION LOAD's code), as Redis writes each after the AUX fields.</summary>
    public void WriteFunction(ReadOnlySpan<byte> libraryCode)
    {
        WriteByte(OpcodeFunction2);
        WriteString(libraryCode);
    }

    /// <summary>The following keys belong to database <paramref name="db"/>.</summary>
    public void WriteSelectDb(int db)
    {
        WriteByte(OpcodeSelectDb);
        WriteLength((ulong)db);
    }

    /// <summary>The size hint Redis writes after SELECTDB: the database's keys and how many of them have a TTL.</summary>
    public void WriteResizeDb(long keys, long expires)
    {
        WriteByte(OpcodeResizeDb);
        WriteLength((ulong)keys);
        WriteLength((ulong)expires);
    }

    /// <summary>
    /// EOF and the checksum. <paramref name="checksumBefore"/> is the CRC-64 of every RDB byte that
    /// came before this writer's current content (0 when this writer holds the whole RDB); this
    /// writer's content and the EOF byte are folded in here. With rdbchecksum off the checksum
    /// is 0, which readers take as "not checked".
    /// </summary>
    public void WriteEof(ulong checksumBefore)
    {
        WriteByte(OpcodeEof);
        ulong crc = Options.Checksum ? Crc64.Update(checksumBefore, Written) : 0;
        Ensure(8);
        BinaryPrimitives.WriteUInt64LittleEndian(new Span<byte>(_data + _length, 8), crc);
        _length += 8;
    }

    /// <summary>
    /// Ends a DUMP payload (Redis's createDumpPayload): the RDB version and the CRC-64 of the
    /// whole payload so far, both little-endian. The writer must hold the payload alone.
    /// </summary>
    public void WriteDumpTrailer()
    {
        Ensure(10);
        BinaryPrimitives.WriteUInt16LittleEndian(new Span<byte>(_data + _length, 2), Version);
        _length += 2;
        ulong crc = Crc64.Compute(Written);
        BinaryPrimitives.WriteUInt64LittleEndian(new Span<byte>(_data + _length, 8), crc);
        _length += 8;
    }

    // ---- keys -----------------------------------------------------------------------------------

    /// <summary>
    /// One key as rdbSaveKeyValuePair writes it: its expiry (<paramref name="expireAt"/>, absolute
    /// ms, 0 for none), the access hint the options ask for, the value's type, the key's name, the
    /// value. A key whose expiry is at or before <paramref name="nowMs"/> is skipped (false); pass
    /// 0 to write every key, expired ones included, as Redis 7.0's SAVE does (a loading master
    /// drops them).
    /// </summary>
    public bool WriteKey(Entry* e, long expireAt, long nowMs)
    {
        if (expireAt != 0 && expireAt <= nowMs)
            return false;
        if (expireAt != 0)
        {
            WriteByte(OpcodeExpireTimeMs);
            Ensure(8);
            BinaryPrimitives.WriteInt64LittleEndian(new Span<byte>(_data + _length, 8), expireAt);
            _length += 8;
        }
        switch (Options.KeyHint)
        {
            case RdbKeyHint.IdleTime:
                // Seconds are enough, as Redis says: it stores estimateObjectIdleTime / 1000.
                WriteByte(OpcodeIdle);
                WriteLength((ulong)(LruClock.IdleMilliseconds(e->AccessClock) / 1000));
                break;
            case RdbKeyHint.Frequency:
                WriteByte(OpcodeFreq);
                WriteByte(LfuCounter.Decayed(e->Frequency, e->AccessClock));
                break;
        }
        byte type = RdbTypeOf(e, Options);
        WriteByte(type);
        WriteString(Entry.KeyOf(e));
        WriteValueBody(e, type);
        return true;
    }

    /// <summary>The value's type byte and the value, without key or expiry: the body of a DUMP payload.</summary>
    public void WriteValue(Entry* e)
    {
        byte type = RdbTypeOf(e, Options);
        WriteByte(type);
        WriteValueBody(e, type);
    }

    /// <summary>The RDB type Redis 7.0 writes for the value: its compact encoding's when it would hold it in one.</summary>
    public static byte RdbTypeOf(Entry* e, in RdbWriteOptions options) => e->Type switch
    {
        ValueType.String => TypeString,
        ValueType.List => TypeListQuicklist2,
        // Every value is written in the form it has, as Redis writes the encoding it holds; a
        // listpack set as a plain one, since Redis 7.0 (RDB 10) cannot read RDB_TYPE_SET_LISTPACK.
        ValueType.Set => e->Form == ValueForm.Intset ? TypeSetIntset : TypeSet,
        ValueType.Hash => e->Form == ValueForm.Listpack ? TypeHashListpack : TypeHash,
        ValueType.SortedSet => e->Form == ValueForm.Listpack ? TypeSortedSetListpack : TypeSortedSet2,
        ValueType.Stream => TypeStreamListpacks2,
        _ => throw new ArgumentOutOfRangeException(nameof(e), e->Type, "no RDB type for this value"),
    };

    private void WriteValueBody(Entry* e, byte type)
    {
        switch (type)
        {
            case TypeString:
                // An integer-encoded Redis string is written the same way (rdbSaveLongLongAsStringObject).
                WriteString(Entry.ValueOf(e));
                break;
            case TypeListQuicklist2:
                WriteQuicklist(Values.List(e));
                break;
            case TypeSetIntset:
                WriteString(NativeIntset.AsSpan(Values.Packed(e)));
                break;
            case TypeSet:
                WritePlainSet(e);
                break;
            case TypeHashListpack:
                // The block as it is, as Redis writes the listpack it holds.
                WriteString(NativeListpack.AsSpan(Values.Packed(e)));
                break;
            case TypeHash:
                WritePlainHash(Values.Hash(e));
                break;
            case TypeSortedSetListpack:
                WriteString(DataTypes.Packed.NativeListpack.AsSpan(Values.Packed(e)));
                break;
            case TypeSortedSet2:
                WriteSkipListSortedSet(Values.SortedSet(e));
                break;
            default:
                WriteStream(Values.Stream(e));
                break;
        }
    }

    // ---- primitives -------------------------------------------------------------------------------

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void WriteByte(byte value)
    {
        Ensure(1);
        _data[_length++] = value;
    }

    private void WriteRaw(ReadOnlySpan<byte> bytes)
    {
        Ensure(bytes.Length);
        bytes.CopyTo(new Span<byte>(_data + _length, bytes.Length));
        _length += bytes.Length;
    }

    /// <summary>A length (rdbSaveLen): 6 bits, 14 bits, or a marker then 32 or 64 bits big-endian.</summary>
    private void WriteLength(ulong length)
    {
        Ensure(9);
        _length += EncodeLength(length, new Span<byte>(_data + _length, 9));
    }

    private static int EncodeLength(ulong length, Span<byte> destination)
    {
        if (length < 1 << 6)
        {
            destination[0] = (byte)length;
            return 1;
        }
        if (length < 1 << 14)
        {
            destination[0] = (byte)(0x40 | (length >> 8));
            destination[1] = (byte)length;
            return 2;
        }
        if (length <= uint.MaxValue)
        {
            destination[0] = 0x80;
            BinaryPrimitives.WriteUInt32BigEndian(destination[1..], (uint)length);
            return 5;
        }
        destination[0] = 0x81;
        BinaryPrimitives.WriteUInt64BigEndian(destination[1..], length);
        return 9;
    }

    /// <summary>Milliseconds as Redis stores them: 8 bytes little-endian.</summary>
    private void WriteMilliseconds(long ms)
    {
        Ensure(8);
        BinaryPrimitives.WriteInt64LittleEndian(new Span<byte>(_data + _length, 8), ms);
        _length += 8;
    }

    /// <summary>
    /// A string as rdbSaveRawString writes it: up to 11 bytes of canonical integer text within 32
    /// bits as the integer; over 20 bytes LZF-compressed when compression is on and saves at least
    /// 4 bytes; otherwise its length and bytes. <paramref name="value"/> must not point into this buffer.
    /// </summary>
    public void WriteString(ReadOnlySpan<byte> value)
    {
        if (value.Length <= 11 && TryWriteIntegerEncoding(value))
            return;
        if (Options.Compression && value.Length > 20)
        {
            int limit = value.Length - 4;
            Ensure((long)LzfHeaderMax + limit + 1);
            int compressed = Compressor.Compress(value, new Span<byte>(_data + _length + LzfHeaderMax, limit + 1), limit);
            if (compressed > 0)
            {
                PlaceLzf(_length + LzfHeaderMax, compressed, value.Length);
                return;
            }
        }
        WriteLength((ulong)value.Length);
        WriteRaw(value);
    }

    private LzfCompressor Compressor => _lzf ??= new LzfCompressor();

    /// <summary>Integer text that reads back the same (Redis's rdbTryIntegerEncoding) within 32 bits, as 2, 3 or 5 bytes.</summary>
    private bool TryWriteIntegerEncoding(ReadOnlySpan<byte> text)
    {
        if (!NumberFormat.TryParseInt64(text, out long value) || value < int.MinValue || value > int.MaxValue)
            return false;
        Ensure(5);
        byte* at = _data + _length;
        if (value is >= sbyte.MinValue and <= sbyte.MaxValue)
        {
            at[0] = EncodingInt8;
            at[1] = (byte)(sbyte)value;
            _length += 2;
        }
        else if (value is >= short.MinValue and <= short.MaxValue)
        {
            at[0] = EncodingInt16;
            BinaryPrimitives.WriteInt16LittleEndian(new Span<byte>(at + 1, 2), (short)value);
            _length += 3;
        }
        else
        {
            at[0] = EncodingInt32;
            BinaryPrimitives.WriteInt32LittleEndian(new Span<byte>(at + 1, 4), (int)value);
            _length += 5;
        }
        return true;
    }

    /// <summary>Writes the LZF header at the end of the content and moves the compressed bytes at <paramref name="from"/> right after it.</summary>
    private void PlaceLzf(int from, int compressed, int original)
    {
        Span<byte> header = stackalloc byte[LzfHeaderMax];
        header[0] = EncodingLzf;
        int size = 1 + EncodeLength((ulong)compressed, header[1..]);
        size += EncodeLength((ulong)original, header[size..]);
        header[..size].CopyTo(new Span<byte>(_data + _length, size));
        Buffer.MemoryCopy(_data + from, _data + _length + size, compressed, compressed);
        _length += size + compressed;
    }

    // ---- blobs built in place (listpacks, intsets), then written as one RDB string ---------------

    /// <summary>Where a blob is built: past the content, leaving room for the length prefix that goes before it.</summary>
    private int StageStart => _length + StageGap;

    /// <summary>Makes room for <paramref name="bytes"/> bytes at offset <paramref name="at"/> of the buffer.</summary>
    private void EnsureAt(int at, long bytes)
    {
        long needed = at + bytes;
        if (needed > _capacity)
            Grow(needed);
    }

    /// <summary>Writes the blob built at <see cref="StageStart"/> (<paramref name="size"/> bytes) as an RDB string, as <see cref="WriteString"/> would.</summary>
    private void EndStaged(int start, int size)
    {
        if (size <= 11 && TryWriteIntegerEncoding(new ReadOnlySpan<byte>(_data + start, size)))
            return;
        if (Options.Compression && size > 20)
        {
            int limit = size - 4;
            EnsureAt(start + size, limit + 1);
            int compressed = Compressor.Compress(new ReadOnlySpan<byte>(_data + start, size), new Span<byte>(_data + start + size, limit + 1), limit);
            if (compressed > 0)
            {
                // The header may overwrite the staged blob; the compressed copy lies past it.
                PlaceLzf(start + size, compressed, size);
                return;
            }
        }
        int prefix = EncodeLength((ulong)size, new Span<byte>(_data + _length, StageGap));
        if (prefix != StageGap)
            Buffer.MemoryCopy(_data + start, _data + _length + prefix, size, size);
        _length += prefix + size;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Ensure(long extra)
    {
        if (_length + extra > _capacity)
            Grow(_length + extra);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Grow(long needed) => _data = TrackedAllocator.GrowDoubling(_data, ref _capacity, needed, InitialCapacity, "RDB writer buffer");
}
