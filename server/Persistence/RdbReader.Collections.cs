using System.Buffers.Binary;
using Diagnostics.Server.DataTypes.Packed;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Lists, sets, hashes and sorted sets, in every encoding Redis 2.x to 7.4 writes: plain element
/// sequences, and blobs in the packed encodings (listpack, ziplist, intset, zipmap, quicklist
/// nodes). Each element reaches the visitor as bytes, integers as the decimal text Redis replies.
/// </summary>
public sealed partial class RdbReader
{
    private const byte TypeList = 1;
    private const byte TypeSet = 2;
    private const byte TypeSortedSet = 3;
    private const byte TypeHash = 4;
    private const byte TypeSortedSet2 = 5;
    private const byte TypeHashZipmap = 9;
    private const byte TypeListZiplist = 10;
    private const byte TypeSetIntset = 11;
    private const byte TypeSortedSetZiplist = 12;
    private const byte TypeHashZiplist = 13;
    private const byte TypeListQuicklist = 14;
    private const byte TypeHashListpack = 16;
    private const byte TypeSortedSetListpack = 17;
    private const byte TypeListQuicklist2 = 18;
    private const byte TypeSetListpack = 20;

    // Quicklist 2 nodes: one element stored as is, or a listpack of several.
    private const ulong QuicklistNodePlain = 1;
    private const ulong QuicklistNodePacked = 2;

    private readonly GrowableBuffer _second = new();   // a hash value or score text read after its field

    private static bool IsCollectionType(byte type) => type is TypeList or TypeSet or TypeSortedSet or TypeHash or TypeSortedSet2
        or TypeHashZipmap or TypeListZiplist or TypeSetIntset or TypeSortedSetZiplist or TypeHashZiplist or TypeListQuicklist
        or TypeHashListpack or TypeSortedSetListpack or TypeListQuicklist2 or TypeSetListpack;

    /// <summary>Reads the key (unless <paramref name="keyGiven"/>: already in _key) and value of a collection type; the type byte is already read.</summary>
    private void ReadCollection(byte type, IRdbVisitor visitor, long expireAtUnixMs, bool keyGiven = false)
    {
        if (!keyGiven)
        {
            _reading = "a key";
            ReadString(_key);
        }
        string what = ValueTypeName(type);
        _reading = $"the {what} value of key '{Printable(_key.Span)}'";
        visitor.CollectionEncoding(type);
        switch (type)
        {
            case TypeList:
            case TypeSet:
                {
                    var kind = type == TypeList ? RdbCollection.List : RdbCollection.Set;
                    long count = ReadCount();
                    visitor.BeginCollection(kind, _key.Span, expireAtUnixMs, count);
                    for (long i = 0; i < count; i++)
                    {
                        ReadString(_value);
                        if (kind == RdbCollection.List)
                            visitor.ListElement(_value.Span);
                        else
                            visitor.SetMember(_value.Span);
                    }
                    break;
                }
            case TypeHash:
                {
                    long count = ReadCount();
                    visitor.BeginCollection(RdbCollection.Hash, _key.Span, expireAtUnixMs, count);
                    for (long i = 0; i < count; i++)
                    {
                        ReadString(_value);
                        ReadString(_second);
                        visitor.HashField(_value.Span, _second.Span);
                    }
                    break;
                }
            case TypeSortedSet:
            case TypeSortedSet2:
                {
                    long count = ReadCount();
                    visitor.BeginCollection(RdbCollection.SortedSet, _key.Span, expireAtUnixMs, count);
                    for (long i = 0; i < count; i++)
                    {
                        ReadString(_value);
                        long at = Offset;
                        double score = type == TypeSortedSet2 ? ReadBinaryScore() : ReadTextScore();
                        if (double.IsNaN(score))
                            throw new RdbFormatException($"a NaN score while reading {_reading}", at);
                        visitor.SortedSetMember(_value.Span, score);
                    }
                    break;
                }
            case TypeListQuicklist:
            case TypeListQuicklist2:
                {
                    long nodes = ReadCount();
                    visitor.BeginCollection(RdbCollection.List, _key.Span, expireAtUnixMs, 0);
                    for (long i = 0; i < nodes; i++)
                    {
                        ulong container = type == TypeListQuicklist ? QuicklistNodePacked : ReadPlainLength();
                        long at = Offset;
                        ReadString(_value);
                        if (container == QuicklistNodePlain)
                            visitor.ListPlainNode(_value.Span);
                        else if (container == QuicklistNodePacked)
                            ListNode(type == TypeListQuicklist ? PackedFormat.Ziplist : PackedFormat.Listpack, visitor, at);
                        else
                            throw new RdbFormatException($"unknown quicklist node container {container} while reading {_reading}", at);
                    }
                    break;
                }
            default:
                {
                    long at = Offset;
                    ReadString(_value);
                    var (format, kind) = type switch
                    {
                        TypeHashZipmap => (PackedFormat.Zipmap, RdbCollection.Hash),
                        TypeListZiplist => (PackedFormat.Ziplist, RdbCollection.List),
                        TypeSetIntset => (PackedFormat.Intset, RdbCollection.Set),
                        TypeSortedSetZiplist => (PackedFormat.Ziplist, RdbCollection.SortedSet),
                        TypeHashZiplist => (PackedFormat.Ziplist, RdbCollection.Hash),
                        TypeHashListpack => (PackedFormat.Listpack, RdbCollection.Hash),
                        TypeSortedSetListpack => (PackedFormat.Listpack, RdbCollection.SortedSet),
                        _ => (PackedFormat.Listpack, RdbCollection.Set),
                    };
                    // An intset states its count in its header (a loader sizes the set by it, as Redis does).
                    long hint = format == PackedFormat.Intset && _value.Span.Length >= 8 ? BinaryPrimitives.ReadUInt32LittleEndian(_value.Span[4..]) : 0;
                    visitor.BeginCollection(kind, _key.Span, expireAtUnixMs, hint);
                    if (format == PackedFormat.Listpack)
                        visitor.FromListpack();
                    Unpack(format, kind, visitor, at);
                    break;
                }
        }
        visitor.EndCollection();
    }

    private enum PackedFormat { Listpack, Ziplist, Intset, Zipmap }

    /// <summary>
    /// Hands one quicklist node in <see cref="_value"/> to the visitor as a listpack, checked
    /// element by element first; a ziplist node (type 14) is converted, element by element as
    /// Redis's load converts it, so the node stays the node it was.
    /// </summary>
    private void ListNode(PackedFormat format, IRdbVisitor visitor, long blobOffset)
    {
        try
        {
            ReadOnlySpan<byte> blob = _value.Span;
            if (format == PackedFormat.Listpack)
            {
                var check = new Listpack(blob);
                while (check.Next(out _))
                {
                }
                visitor.ListNode(blob);
                return;
            }
            visitor.ListNode(ZiplistAsListpack(blob));
        }
        catch (InvalidDataException ex)
        {
            throw new RdbFormatException($"corrupt {format.ToString().ToLowerInvariant()} while reading {_reading}: {ex.Message}", blobOffset);
        }
    }

    /// <summary>A ziplist's elements as a listpack (each element stored as an integer when it reads as one, as lpAppend does).</summary>
    private static byte[] ZiplistAsListpack(ReadOnlySpan<byte> ziplist)
    {
        Span<byte> scratch = stackalloc byte[24];
        long size = NativeListpack.HeaderSize + 1;
        int count = 0;
        var sizing = new Ziplist(ziplist);
        while (sizing.Next(out var element))
        {
            size += NativeListpack.StringSize(element.AsBytes(scratch));
            count++;
        }
        if (size > int.MaxValue - 64)
            throw new InvalidDataException($"a ziplist node of {size} bytes as a listpack");
        var listpack = new byte[size];
        int at = NativeListpack.HeaderSize;
        var reader = new Ziplist(ziplist);
        while (reader.Next(out var element))
            at += NativeListpack.WriteString(element.AsBytes(scratch), listpack.AsSpan(at));
        listpack[at] = 0xFF;
        BinaryPrimitives.WriteUInt32LittleEndian(listpack, (uint)size);
        BinaryPrimitives.WriteUInt16LittleEndian(listpack.AsSpan(4), (ushort)Math.Min(count, ushort.MaxValue));
        return listpack;
    }

    /// <summary>Hands the elements of the packed blob in <see cref="_value"/> to the visitor.</summary>
    private void Unpack(PackedFormat format, RdbCollection kind, IRdbVisitor visitor, long blobOffset)
    {
        Span<byte> first = stackalloc byte[24];
        Span<byte> second = stackalloc byte[24];
        try
        {
            ReadOnlySpan<byte> blob = _value.Span;
            switch (format)
            {
                case PackedFormat.Intset:
                    var intset = new Intset(blob);
                    while (intset.Next(out long member))
                        visitor.SetMember(new PackedElement(member).AsBytes(first));
                    return;
                case PackedFormat.Zipmap:
                    var zipmap = new Zipmap(blob);
                    while (zipmap.Next(out var field, out var value))
                        visitor.HashField(field, value);
                    return;
            }
            var listpack = format == PackedFormat.Listpack ? new Listpack(blob) : default;
            var ziplist = format == PackedFormat.Ziplist ? new Ziplist(blob) : default;
            while (true)
            {
                if (!(format == PackedFormat.Listpack ? listpack.Next(out var element) : ziplist.Next(out element)))
                    return;
                ReadOnlySpan<byte> bytes = element.AsBytes(first);
                switch (kind)
                {
                    case RdbCollection.List:
                        visitor.ListElement(bytes);
                        continue;
                    case RdbCollection.Set:
                        visitor.SetMember(bytes);
                        continue;
                }
                // Hashes and sorted sets alternate: field then value, member then score.
                if (!(format == PackedFormat.Listpack ? listpack.Next(out var pair) : ziplist.Next(out pair)))
                    throw new InvalidDataException($"an odd number of elements: {bytes.Length}-byte '{Printable(bytes)}' has no {(kind == RdbCollection.Hash ? "value" : "score")}");
                if (kind == RdbCollection.Hash)
                {
                    visitor.HashField(bytes, pair.AsBytes(second));
                    continue;
                }
                double score = pair.IsInteger ? pair.Integer : ParseScore(pair.AsBytes(second));
                visitor.SortedSetMember(bytes, score);
            }
        }
        catch (InvalidDataException ex)
        {
            throw new RdbFormatException($"corrupt {format.ToString().ToLowerInvariant()} while reading {_reading}: {ex.Message}", blobOffset);
        }
    }

    private long ReadCount()
    {
        long at = Offset;
        ulong count = ReadPlainLength();
        if (count > int.MaxValue)
            throw new RdbFormatException($"{count} elements while reading {_reading} is beyond what this server can hold", at);
        return (long)count;
    }

    /// <summary>A score of RDB type 5 onwards: 8 bytes, little-endian IEEE 754.</summary>
    private double ReadBinaryScore()
    {
        Fill(8);
        double score = BinaryPrimitives.ReadDoubleLittleEndian(_buffer.AsSpan(_pos, 8));
        _pos += 8;
        return score;
    }

    /// <summary>A score of RDB type 3: a length byte then that much text; 253, 254 and 255 mean nan, inf and -inf.</summary>
    private double ReadTextScore()
    {
        long at = Offset;
        byte length = ReadByte();
        switch (length)
        {
            case 253: return double.NaN;
            case 254: return double.PositiveInfinity;
            case 255: return double.NegativeInfinity;
        }
        ReadBytes(_second.Reserve(length));
        try
        {
            return ParseScore(_second.Span);
        }
        catch (InvalidDataException ex)
        {
            throw new RdbFormatException($"{ex.Message} while reading {_reading}", at);
        }
    }

    private static double ParseScore(ReadOnlySpan<byte> text)
    {
        if (!Protocol.NumberFormat.TryParseDouble(text, out double score) || double.IsNaN(score))
            throw new InvalidDataException($"score '{Printable(text)}' is not a number");
        return score;
    }
}
