using System.Buffers.Text;
using System.Security.Cryptography;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Engine;

/// <summary>
/// DEBUG DIGEST and DEBUG DIGEST-VALUE, computed as Redis 7.0's debug.c does (computeDatasetDigest,
/// xorObjectDigest), so a dataset held here and the same dataset held by redis-server give the same
/// 20 bytes. Two SHA1 steps build it: xor (order-free: set members, hash fields, keys) and mix
/// (ordered: list elements, stream entries, and the parts of one key or element). Every element is
/// hashed in the string form Redis decodes it to, which for integers Redis stores compactly is the
/// same canonical text this server keeps. The caller holds every shard.
/// </summary>
public static unsafe class DatasetDigest
{
    public const int Size = 20;

    /// <summary>Hex of the all-zero digest: an empty dataset, a missing key.</summary>
    public static ReadOnlySpan<byte> ZeroHex => "0000000000000000000000000000000000000000"u8;

    /// <summary>
    /// The whole keyspace: for each non-empty database in order, its number (4 bytes, big-endian)
    /// mixed into the result, then each key's digest xored in. Keys whose TTL passed but are not
    /// yet removed count, as in Redis (it walks the dict, not lookups).
    /// </summary>
    public static void Compute(Keyspace keyspace, Span<byte> result)
    {
        result.Clear();
        Span<byte> dbNumber = stackalloc byte[4];
        fixed (byte* final = result)
        {
            var visitor = new KeyVisitor(final);
            for (int db = 0; db < keyspace.DatabaseCount; db++)
            {
                if (keyspace.KeyCount(db) == 0)
                    continue;
                System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(dbNumber, db);
                Mix(result, dbNumber);
                foreach (var shard in keyspace.Shards)
                    shard.Databases[db].Keys.ForEach(ref visitor);
            }
        }
    }

    /// <summary>One key: its name mixed, then its value as <see cref="Value"/> continues it; xored into the result.</summary>
    private readonly struct KeyVisitor(byte* final) : IEntryVisitor
    {
        public void Visit(Entry* entry)
        {
            Span<byte> digest = stackalloc byte[Size];
            digest.Clear();
            Mix(digest, Entry.KeyOf(entry));
            Value(entry, digest);
            Xor(new Span<byte>(final, Size), digest);
        }
    }

    /// <summary>
    /// Continues <paramref name="digest"/> with the entry's value (DEBUG DIGEST-VALUE starts it at
    /// zero): the Redis type number mixed, the content, then "!!expire!!" xored when it has a TTL.
    /// </summary>
    public static void Value(Entry* e, Span<byte> digest)
    {
        Span<byte> type = stackalloc byte[4];
        System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(type, RedisTypeNumber(e->Type));
        Mix(digest, type);
        switch (e->Type)
        {
            case ValueType.String:
                Mix(digest, Entry.ValueOf(e));
                break;
            case ValueType.List:
            {
                // Integer elements are mixed as their text, as Redis's digest of a quicklist does.
                Span<byte> scratch = stackalloc byte[24];
                var iterator = Values.List(e)->From(0, forward: true);
                while (iterator.Next(out var element))
                    Mix(digest, element.AsBytes(scratch));
                break;
            }
            case ValueType.Set:
                foreach (ReadOnlySpan<byte> member in Sets.Members(e))
                    Xor(digest, member);
                break;
            case ValueType.SortedSet:
                SortedSet(SortedSetView.Of(e), digest);
                break;
            case ValueType.Hash:
                Hash(e, digest);
                break;
            case ValueType.Stream:
                Stream(Values.Stream(e), digest);
                break;
        }
        if (e->HasExpiry)
            Xor(digest, "!!expire!!"u8);
    }

    /// <summary>Each member and its score as printf("%.17g") (7.0; 7.2 moved to shortest form) mixed into a per-element digest, xored in.</summary>
    private static void SortedSet(in SortedSetView set, Span<byte> digest)
    {
        Span<byte> element = stackalloc byte[Size];
        Span<byte> score = stackalloc byte[PrintfG17.MaxLength];
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        for (var at = set.First; !at.IsEnd; at = at.Next)
        {
            element.Clear();
            Mix(element, at.Member(scratch));
            Mix(element, score[..PrintfG17.Format(at.Score, score)]);
            Xor(digest, element);
        }
    }

    /// <summary>Each field then its value mixed into a per-field digest, xored in.</summary>
    private static void Hash(Entry* e, Span<byte> digest)
    {
        Span<byte> element = stackalloc byte[Size];
        var pairs = Hashes.Pairs(e);
        while (pairs.MoveNext())
        {
            element.Clear();
            Mix(element, pairs.Field);
            Mix(element, pairs.Value);
            Xor(digest, element);
        }
    }

    /// <summary>
    /// Live entries in ID order: the ID as "ms.seq", then each field and value, all mixed. Redis 7.0
    /// leaves out the consumer groups, the deleted entries and the node layout.
    /// </summary>
    private static void Stream(StreamValue* stream, Span<byte> digest)
    {
        Span<byte> id = stackalloc byte[StreamId.MaxTextLength];
        Span<byte> fieldScratch = stackalloc byte[20];
        Span<byte> valueScratch = stackalloc byte[20];
        var iterator = new StreamIterator(stream, StreamId.Min, StreamId.Max);
        while (iterator.Next(out StreamEntry entry))
        {
            Utf8Formatter.TryFormat(entry.Id.Ms, id, out int length);
            id[length++] = (byte)'.';
            Utf8Formatter.TryFormat(entry.Id.Seq, id[length..], out int seqLength);
            Mix(digest, id[..(length + seqLength)]);
            var fields = entry.Fields();
            for (int i = 0; i < entry.FieldCount; i++)
            {
                fields.Next(out ListpackElement field, out ListpackElement value);
                Mix(digest, field.AsBytes(fieldScratch));
                Mix(digest, value.AsBytes(valueScratch));
            }
        }
    }

    /// <summary>Redis's OBJ_* numbers, which the digest hashes (OBJ_MODULE is 5, so streams are 6).</summary>
    private static int RedisTypeNumber(ValueType type) => type switch
    {
        ValueType.String => 0,
        ValueType.List => 1,
        ValueType.Set => 2,
        ValueType.SortedSet => 3,
        ValueType.Hash => 4,
        _ => 6,
    };

    /// <summary>digest ^= SHA1(data): the order-free step.</summary>
    private static void Xor(Span<byte> digest, ReadOnlySpan<byte> data)
    {
        Span<byte> hash = stackalloc byte[Size];
        SHA1.HashData(data, hash);
        for (int i = 0; i < Size; i++)
            digest[i] ^= hash[i];
    }

    /// <summary>digest = SHA1(digest ^ SHA1(data)): the ordered step ("fo","obar" differs from "foo","bar").</summary>
    private static void Mix(Span<byte> digest, ReadOnlySpan<byte> data)
    {
        Xor(digest, data);
        Span<byte> copy = stackalloc byte[Size];
        digest.CopyTo(copy);
        SHA1.HashData(copy, digest);
    }

    /// <summary>Lower-case hex, as Redis's "%02x" per byte; <paramref name="hex"/> is 40 bytes.</summary>
    public static void WriteHex(ReadOnlySpan<byte> digest, Span<byte> hex)
    {
        ReadOnlySpan<byte> alphabet = "0123456789abcdef"u8;
        for (int i = 0; i < Size; i++)
        {
            hex[2 * i] = alphabet[digest[i] >> 4];
            hex[2 * i + 1] = alphabet[digest[i] & 0xF];
        }
    }
}
