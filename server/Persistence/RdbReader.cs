using System.Buffers;
using System.Buffers.Binary;
using System.Buffers.Text;
using System.Text;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Reads one RDB (Redis's snapshot format, versions 1 to 12: Redis 7.0 writes 10, 7.2 writes 11,
/// 7.4 writes 12) and hands its contents to an <see cref="IRdbVisitor"/>. It is what loads the base
/// file Redis 7 keeps in its append-only directory, and the RDB preamble of a single-file AOF.
/// Strings, lists, sets, hashes and sorted sets load in every encoding (RdbReader.Collections.cs);
/// streams, module values and hash field expiry (7.4), which this server does not have, stop the
/// load with an <see cref="RdbFormatException"/> naming the type, as does every kind of corruption.
/// </summary>
/// <remarks>
/// Layout: "REDIS" + 4 version digits, then a sequence of one-byte opcodes (AUX, SELECTDB,
/// RESIZEDB, expiry, LRU/LFU hints...) and value types (each followed by a key and a value), then
/// EOF (0xFF) and, from version 5, the little-endian CRC-64 of everything before it.
/// </remarks>
public sealed partial class RdbReader
{
    public const int MinVersion = 1;
    public const int MaxVersion = 12;
    private const int FirstVersionWithChecksum = 5;

    private const byte OpcodeSlotInfo = 0xF4;        // 7.4 cluster mode: per-slot size hints
    private const byte OpcodeFunction2 = 0xF5;       // one function library (its source code)
    private const byte OpcodeFunctionPreGa = 0xF6;   // 7.0 release candidates only
    private const byte OpcodeModuleAux = 0xF7;
    private const byte OpcodeIdle = 0xF8;            // LRU idle time of the next key
    private const byte OpcodeFreq = 0xF9;            // LFU counter of the next key
    private const byte OpcodeAux = 0xFA;
    private const byte OpcodeResizeDb = 0xFB;
    private const byte OpcodeExpireTimeMs = 0xFC;
    private const byte OpcodeExpireTime = 0xFD;      // seconds, written before Redis 2.6
    private const byte OpcodeSelectDb = 0xFE;
    private const byte OpcodeEof = 0xFF;

    private const byte TypeString = 0;
    private const byte LastValueType = 25;

    // A length whose top two bits are 11 is not a length but a string encoding marker.
    private const int EncodingInt8 = 0;
    private const int EncodingInt16 = 1;
    private const int EncodingInt32 = 2;
    private const int EncodingLzf = 3;

    private const int BufferSize = 64 * 1024;
    private const long NoExpiry = long.MinValue;

    private readonly Stream _stream;
    // A stream that cannot seek back cannot be repositioned after the RDB: read no byte past it.
    private readonly bool _exactReads;
    private byte[] _buffer;
    private int _pos;
    private int _end;
    private long _bufferOffset;   // RDB offset of _buffer[0]
    private ulong _crc;
    private int _crcPos;          // _buffer[.._crcPos] is already folded into _crc
    private string _reading = "the header";   // what is being read, for error messages

    private readonly GrowableBuffer _key = new();
    private readonly GrowableBuffer _value = new();
    private readonly GrowableBuffer _compressed = new();   // LZF input, never a string's destination

    private RdbReader(Stream stream)
    {
        _stream = stream;
        _exactReads = !stream.CanSeek;
        _buffer = ArrayPool<byte>.Shared.Rent(BufferSize);
    }

    /// <summary>
    /// Reads one complete RDB starting at the stream's current position and returns the bytes it
    /// took (magic through the checksum inclusive). A seekable stream is left positioned right after
    /// the RDB, so a caller can go on reading the AOF commands that follow a preamble; a stream that
    /// cannot seek is never read past the RDB.
    /// </summary>
    /// <exception cref="RdbFormatException">The RDB is corrupt, truncated, or holds data this server does not support.</exception>
    public static long Read(Stream stream, IRdbVisitor visitor)
    {
        ArgumentNullException.ThrowIfNull(stream);
        ArgumentNullException.ThrowIfNull(visitor);
        long start = stream.CanSeek ? stream.Position : 0;
        var reader = new RdbReader(stream);
        try
        {
            long consumed = reader.ReadAll(visitor);
            if (stream.CanSeek)
                stream.Position = start + consumed;
            return consumed;
        }
        finally
        {
            reader.ReleaseBuffers();
        }
    }

    private long Offset => _bufferOffset + _pos;

    private long ReadAll(IRdbVisitor visitor)
    {
        int version = ReadHeader();
        long expireAt = NoExpiry;
        while (true)
        {
            long opcodeOffset = Offset;
            _reading = "an opcode or value type";
            byte type = ReadByte();
            switch (type)
            {
                case TypeString:
                    _reading = "a key";
                    ReadString(_key);
                    _reading = "the string value of a key";
                    ReadString(_value);
                    // 0 means "no expiry" to the visitor; an expiry at or before the epoch still means expired.
                    visitor.String(_key.Span, _value.Span, expireAt == NoExpiry ? 0 : Math.Max(expireAt, 1));
                    expireAt = NoExpiry;
                    break;
                case OpcodeEof:
                    return ReadChecksum(version);
                case OpcodeSelectDb:
                    _reading = "a SELECTDB index";
                    ulong index = ReadPlainLength();
                    if (index > int.MaxValue)
                        throw new RdbFormatException($"SELECTDB index {index} is out of range", opcodeOffset);
                    visitor.SelectDatabase((int)index);
                    break;
                case OpcodeResizeDb:
                    _reading = "a RESIZEDB size hint";
                    ulong keys = ReadPlainLength();
                    ulong expires = ReadPlainLength();
                    if (keys > long.MaxValue || expires > long.MaxValue)
                        throw new RdbFormatException($"RESIZEDB hint {keys}/{expires} is out of range", opcodeOffset);
                    visitor.ResizeDatabase((long)keys, (long)expires);
                    break;
                case OpcodeExpireTimeMs:
                    _reading = "an expire time in milliseconds";
                    Fill(8);
                    expireAt = BinaryPrimitives.ReadInt64LittleEndian(_buffer.AsSpan(_pos, 8));
                    _pos += 8;
                    break;
                case OpcodeExpireTime:
                    _reading = "an expire time in seconds";
                    Fill(4);
                    expireAt = BinaryPrimitives.ReadInt32LittleEndian(_buffer.AsSpan(_pos, 4)) * 1000L;
                    _pos += 4;
                    break;
                case OpcodeIdle:
                    _reading = "an LRU idle time";
                    ReadPlainLength();
                    break;
                case OpcodeFreq:
                    _reading = "an LFU frequency";
                    ReadByte();
                    break;
                case OpcodeAux:
                    _reading = "an AUX field name";
                    ReadString(_key);
                    _reading = "an AUX field value";
                    ReadString(_value);
                    visitor.Aux(_key.Span, _value.Span);
                    break;
                case OpcodeFunction2:
                    // The payload is one string, the library's source: the visitor decides whether
                    // to load it (a replica's full sync does; the AOF base loader does not yet).
                    _reading = "a function library";
                    ReadString(_value);
                    visitor.FunctionLibrary(_value.Span);
                    break;
                case OpcodeFunctionPreGa:
                    throw new RdbFormatException(
                        "function library in the pre-release format of Redis 7.0 release candidates (opcode 0xF6) is not supported", opcodeOffset);
                case OpcodeModuleAux:
                    // Redis itself refuses to load module data whose module is not loaded; this
                    // server has no modules.
                    _reading = "a module id";
                    ulong moduleId = ReadPlainLength();
                    throw new RdbFormatException(
                        $"module auxiliary data (opcode 0xF7) of module type '{ModuleTypeName(moduleId)}' is not supported: this server has no modules", opcodeOffset);
                case OpcodeSlotInfo:
                    _reading = "a SLOT_INFO hint";
                    ReadPlainLength();   // slot
                    ReadPlainLength();   // keys in the slot
                    ReadPlainLength();   // expiring keys in the slot
                    break;
                default:
                    if (IsStreamType(type))
                    {
                        ReadStream(type, visitor, expireAt == NoExpiry ? 0 : Math.Max(expireAt, 1));
                        expireAt = NoExpiry;
                        break;
                    }
                    if (IsCollectionType(type))
                    {
                        ReadCollection(type, visitor, expireAt == NoExpiry ? 0 : Math.Max(expireAt, 1));
                        expireAt = NoExpiry;
                        break;
                    }
                    if (type <= LastValueType && type != 8)
                    {
                        _reading = "a key";
                        ReadString(_key);
                        throw new RdbFormatException(
                            $"value type {type} ({ValueTypeName(type)}) of key '{Printable(_key.Span)}' is not supported: {UnsupportedBecause(type)}", opcodeOffset);
                    }
                    throw new RdbFormatException($"unknown opcode or value type {type} (0x{type:X2})", opcodeOffset);
            }
        }
    }

    private int ReadHeader()
    {
        Fill(9);
        ReadOnlySpan<byte> header = _buffer.AsSpan(_pos, 9);
        if (!header[..5].SequenceEqual("REDIS"u8))
            throw new RdbFormatException($"bad magic: expected \"REDIS\", found \"{Printable(header[..5])}\"", 0);
        int version = 0;
        foreach (byte digit in header[5..])
        {
            if (digit is < (byte)'0' or > (byte)'9')
                throw new RdbFormatException($"bad version field \"{Printable(header[5..])}\": expected 4 decimal digits", 5);
            version = version * 10 + (digit - '0');
        }
        if (version is < MinVersion or > MaxVersion)
            throw new RdbFormatException($"unsupported RDB version {version}: this reader handles versions {MinVersion} to {MaxVersion}", 5);
        _pos += 9;
        return version;
    }

    private long ReadChecksum(int version)
    {
        if (version < FirstVersionWithChecksum)
            return Offset;
        FoldCrc();
        ulong computed = _crc;
        long checksumOffset = Offset;
        _reading = "the checksum";
        Fill(8);
        ulong stored = BinaryPrimitives.ReadUInt64LittleEndian(_buffer.AsSpan(_pos, 8));
        _pos += 8;
        // Redis writes 0 when rdbchecksum is off: nothing to verify then.
        if (stored != 0 && stored != computed)
            throw new RdbFormatException($"checksum mismatch: the RDB says 0x{stored:x16} but its content hashes to 0x{computed:x16}", checksumOffset);
        return Offset;
    }

    private byte ReadByte()
    {
        Fill(1);
        return _buffer[_pos++];
    }

    /// <summary>Reads a length; <paramref name="encoding"/> is true when it is a string encoding marker instead.</summary>
    private ulong ReadLength(out bool encoding)
    {
        long at = Offset;
        byte first = ReadByte();
        encoding = false;
        switch (first >> 6)
        {
            case 0:
                return (ulong)(first & 0x3F);
            case 1:
                return (ulong)((first & 0x3F) << 8 | ReadByte());
            case 2:
                if (first == 0x80)
                {
                    Fill(4);
                    uint length32 = BinaryPrimitives.ReadUInt32BigEndian(_buffer.AsSpan(_pos, 4));
                    _pos += 4;
                    return length32;
                }
                if (first == 0x81)
                {
                    Fill(8);
                    ulong length64 = BinaryPrimitives.ReadUInt64BigEndian(_buffer.AsSpan(_pos, 8));
                    _pos += 8;
                    return length64;
                }
                throw new RdbFormatException($"invalid length encoding 0x{first:X2} while reading {_reading}", at);
            default:
                encoding = true;
                return (ulong)(first & 0x3F);
        }
    }

    private ulong ReadPlainLength()
    {
        long at = Offset;
        ulong length = ReadLength(out bool encoding);
        if (encoding)
            throw new RdbFormatException($"expected a length while reading {_reading}, found string encoding marker {length}", at);
        return length;
    }

    /// <summary>Reads a string (raw, integer-encoded or LZF-compressed) into <paramref name="target"/>.</summary>
    private void ReadString(GrowableBuffer target)
    {
        long at = Offset;
        ulong length = ReadLength(out bool encoding);
        if (!encoding)
        {
            ReadStringBytes(target, CheckedLength(length, at));
            return;
        }
        switch (length)
        {
            case EncodingInt8:
                Fill(1);
                FormatInteger(target, (sbyte)_buffer[_pos]);
                _pos += 1;
                break;
            case EncodingInt16:
                Fill(2);
                FormatInteger(target, BinaryPrimitives.ReadInt16LittleEndian(_buffer.AsSpan(_pos, 2)));
                _pos += 2;
                break;
            case EncodingInt32:
                Fill(4);
                FormatInteger(target, BinaryPrimitives.ReadInt32LittleEndian(_buffer.AsSpan(_pos, 4)));
                _pos += 4;
                break;
            case EncodingLzf:
                ReadCompressed(target, at);
                break;
            default:
                throw new RdbFormatException($"unknown string encoding {length} while reading {_reading}", at);
        }
    }

    private void ReadCompressed(GrowableBuffer target, long at)
    {
        int compressedLength = CheckedLength(ReadPlainLength(), at);
        ulong statedLength = ReadPlainLength();
        // LZF turns 3 input bytes into at most 264 output bytes (a back reference of maximal
        // length): a larger stated size is corrupt, and must not be allocated.
        if (statedLength > (ulong)compressedLength * 88 || statedLength > (ulong)Array.MaxLength)
            throw new RdbFormatException($"corrupt LZF-compressed string while reading {_reading}: {compressedLength} compressed bytes cannot hold {statedLength} bytes", at);
        int length = (int)statedLength;
        ReadStringBytes(_compressed, compressedLength);
        int produced = Lzf.Decompress(_compressed.Span, target.Reserve(length));
        if (produced != length)
            throw new RdbFormatException($"corrupt LZF-compressed string while reading {_reading}: it does not decompress to its stated {length} bytes", at);
    }

    private static void FormatInteger(GrowableBuffer target, long value)
    {
        Span<byte> text = target.Reserve(20);
        Utf8Formatter.TryFormat(value, text, out int written);
        target.Length = written;
    }

    /// <summary>Checks a string length read at <paramref name="at"/> before anything is allocated for it.</summary>
    private int CheckedLength(ulong length, long at)
    {
        if (length > (ulong)Array.MaxLength)
            throw new RdbFormatException($"string length {length} while reading {_reading} is beyond what this server can hold", at);
        // A corrupt length must not make the reader allocate gigabytes it will never fill. Only
        // lengths past what is buffered cost the Length/Position look-up, and only once per large string.
        if (length > (ulong)(_end - _pos) && length > BufferSize && _stream.CanSeek)
        {
            long remaining = _end - _pos + Math.Max(0, _stream.Length - _stream.Position);
            if ((long)length > remaining)
                throw new RdbFormatException($"truncated: a string of {length} bytes while reading {_reading}, but only {remaining} bytes remain", at);
        }
        return (int)length;
    }

    /// <summary>
    /// Reads <paramref name="length"/> bytes into <paramref name="target"/>. A forward-only stream
    /// cannot say how much remains, so there a large string's buffer grows (doubling) as its bytes
    /// arrive: an 18-byte file claiming a 2 GB key allocated 2 GB before failing as truncated.
    /// </summary>
    private void ReadStringBytes(GrowableBuffer target, int length)
    {
        if (!_exactReads || length <= BufferSize)
        {
            ReadBytes(target.Reserve(length));
            return;
        }
        ReadBytes(target.Reserve(BufferSize));
        while (target.Length < length)
        {
            int filled = target.Length;
            ReadBytes(target.Extend((int)Math.Min(length, 2L * filled))[filled..]);
        }
    }

    /// <summary>Fills <paramref name="destination"/> from the RDB, bypassing the buffer for large reads.</summary>
    private void ReadBytes(Span<byte> destination)
    {
        while (!destination.IsEmpty)
        {
            int available = _end - _pos;
            if (available > 0)
            {
                int n = Math.Min(available, destination.Length);
                _buffer.AsSpan(_pos, n).CopyTo(destination);
                _pos += n;
                destination = destination[n..];
            }
            else if (destination.Length >= _buffer.Length)
            {
                FoldCrc();
                _bufferOffset += _pos;
                _pos = _end = _crcPos = 0;
                int n = _stream.Read(destination);
                if (n <= 0)
                    throw Truncated();
                _crc = Crc64.Update(_crc, destination[..n]);
                _bufferOffset += n;
                destination = destination[n..];
            }
            else
            {
                Fill(destination.Length);
            }
        }
    }

    /// <summary>Makes at least <paramref name="count"/> (at most the buffer size) bytes available at _pos.</summary>
    private void Fill(int count)
    {
        if (_end - _pos >= count)
            return;
        if (_buffer.Length - _pos < count)
            Compact();
        while (_end - _pos < count)
        {
            int want = _exactReads ? count - (_end - _pos) : _buffer.Length - _end;
            int n = _stream.Read(_buffer, _end, want);
            if (n <= 0)
                throw Truncated();
            _end += n;
        }
    }

    private void Compact()
    {
        FoldCrc();
        int live = _end - _pos;
        Buffer.BlockCopy(_buffer, _pos, _buffer, 0, live);
        _bufferOffset += _pos;
        _end = live;
        _pos = 0;
        _crcPos = 0;
    }

    private void FoldCrc()
    {
        _crc = Crc64.Update(_crc, _buffer.AsSpan(_crcPos, _pos - _crcPos));
        _crcPos = _pos;
    }

    private RdbFormatException Truncated()
        => new($"truncated: the data ends while reading {_reading}", _bufferOffset + _end);

    private void ReleaseBuffers()
    {
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = [];
        _key.Release();
        _value.Release();
        _compressed.Release();
        _second.Release();
    }

    private static string UnsupportedBecause(byte type) => type switch
    {
        6 or 7 => "this server has no modules",
        _ => "this server has no hash field expiry",
    };

    private static string ValueTypeName(byte type) => type switch
    {
        0 => "string",
        1 => "list linked list",
        2 => "set hash table",
        3 => "sorted set",
        4 => "hash",
        5 => "sorted set 2",
        6 => "module pre-GA",
        7 => "module 2",
        9 => "hash zipmap",
        10 => "list ziplist",
        11 => "set intset",
        12 => "sorted set ziplist",
        13 => "hash ziplist",
        14 => "list quicklist",
        15 => "stream listpacks",
        16 => "hash listpack",
        17 => "sorted set listpack",
        18 => "list quicklist 2",
        19 => "stream listpacks 2",
        20 => "set listpack",
        21 => "stream listpacks 3",
        22 => "hash metadata pre-GA",
        23 => "hash listpack with field expiry pre-GA",
        24 => "hash metadata",
        25 => "hash listpack with field expiry",
        _ => "unknown",
    };

    /// <summary>The 9-character type name a module id encodes (Redis's moduleTypeNameByID): the top 54 bits, 6 per character.</summary>
    private static string ModuleTypeName(ulong moduleId)
    {
        const string charset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        Span<char> name = stackalloc char[9];
        ulong id = moduleId >> 10;
        for (int i = 8; i >= 0; i--)
        {
            name[i] = charset[(int)(id & 63)];
            id >>= 6;
        }
        return new string(name);
    }

    /// <summary>Bytes for an error message: printable ASCII as is, the rest as \xNN, cut at 64 bytes.</summary>
    private static string Printable(ReadOnlySpan<byte> bytes)
    {
        var text = new StringBuilder();
        foreach (byte b in bytes.Length > 64 ? bytes[..64] : bytes)
        {
            if (b is >= 0x20 and < 0x7F && b != (byte)'\\' && b != (byte)'\'' && b != (byte)'"')
                text.Append((char)b);
            else
                text.Append($"\\x{b:x2}");
        }
        if (bytes.Length > 64)
            text.Append("...");
        return text.ToString();
    }

    /// <summary>
    /// A reusable byte buffer for keys, values and compressed input: small keys cost no allocation
    /// once the buffer has grown. Up to 1 MiB it comes from the shared pool; beyond that (values up
    /// to Redis's 512 MB) it is allocated for this load only, so the pool never parks huge arrays.
    /// </summary>
    private sealed class GrowableBuffer
    {
        private const int PooledLimit = 1024 * 1024;
        private byte[] _array = [];
        private bool _pooled;

        public int Length { get; set; }

        public ReadOnlySpan<byte> Span => _array.AsSpan(0, Length);

        /// <summary>Makes room for <paramref name="size"/> bytes (previous content is dropped) and sets the length to it.</summary>
        public Span<byte> Reserve(int size)
        {
            if (_array.Length < size)
            {
                Release();
                if (size <= PooledLimit)
                {
                    _array = ArrayPool<byte>.Shared.Rent(Math.Max(size, 256));
                    _pooled = true;
                }
                else
                {
                    _array = GC.AllocateUninitializedArray<byte>(size);
                }
            }
            Length = size;
            return _array.AsSpan(0, size);
        }

        /// <summary>Grows to <paramref name="size"/> bytes keeping the current content, and sets the length to it.</summary>
        public Span<byte> Extend(int size)
        {
            if (_array.Length < size)
            {
                byte[] larger = GC.AllocateUninitializedArray<byte>(size);
                _array.AsSpan(0, Length).CopyTo(larger);
                Release();
                _array = larger;
            }
            Length = size;
            return _array.AsSpan(0, size);
        }

        public void Release()
        {
            if (_pooled)
                ArrayPool<byte>.Shared.Return(_array);
            _array = [];
            _pooled = false;
            Length = 0;
        }
    }
}
