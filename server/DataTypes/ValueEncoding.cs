using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using ValueType = Diagnostics.Server.Engine.ValueType;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// OBJECT ENCODING and DEBUG OBJECT's names for how a value is held. Strings follow Redis: "int"
/// when the bytes read as a 64-bit integer in at most 20 bytes, "embstr" up to 44 bytes, else
/// "raw". The other types name the Redis encoding closest to the structure really used: a hash
/// table for hashes and sets ("hashtable"), a skip list with a member index for sorted sets
/// ("skiplist"), a ring of elements for lists ("quicklist"). There are no compact small-value
/// encodings (listpack, intset): every value of a type has one representation.
/// </summary>
public static unsafe class ValueEncoding
{
    public static ReadOnlySpan<byte> Of(Entry* e) => e->Type switch
    {
        ValueType.String when IsInteger(e, out _) => "int"u8,
        ValueType.String when e->ValueLength <= 44 => "embstr"u8,
        ValueType.String => "raw"u8,
        ValueType.List => "quicklist"u8,
        ValueType.SortedSet => "skiplist"u8,
        _ => "hashtable"u8,
    };

    /// <summary>True when a string value would be held as an integer by Redis.</summary>
    public static bool IsInteger(Entry* e, out long value)
    {
        value = 0;
        return e->Type == ValueType.String && e->ValueLength <= 20 && NumberFormat.TryParseInt64(Entry.ValueOf(e), out value);
    }

    /// <summary>
    /// The value's size in an RDB file (DEBUG OBJECT serializedlength), without LZF compression:
    /// small integers in their compact form, strings as length prefix plus bytes; aggregates as
    /// an element count then each element (scores as 8-byte doubles).
    /// </summary>
    public static long SerializedLength(Entry* e)
    {
        switch (e->Type)
        {
            case ValueType.String:
                if (IsInteger(e, out long n) && e->ValueLength <= 11)
                {
                    if (n is >= sbyte.MinValue and <= sbyte.MaxValue) return 2;
                    if (n is >= short.MinValue and <= short.MaxValue) return 3;
                    if (n is >= int.MinValue and <= int.MaxValue) return 5;
                }
                return Prefixed(e->ValueLength);
            case ValueType.List:
            {
                ListValue* list = Values.List(e);
                long total = LengthPrefix(list->Count);
                for (int i = 0; i < list->Count; i++)
                    total += Prefixed((*list)[i].Length);
                return total;
            }
            case ValueType.SortedSet:
            {
                long total = LengthPrefix(Values.SortedSet(e)->Count);
                for (SkipNode* node = SortedSetValue.ListOf(Values.SortedSet(e))->First; node != null; node = SkipNode.Next(node))
                    total += Prefixed(node->MemberLength) + sizeof(double);
                return total;
            }
            default:
            {
                FieldTable* table = Values.Hash(e);
                long total = LengthPrefix(table->Count);
                foreach (FieldNode* node in *table)
                    total += Prefixed(node->FieldLength) + (e->Type == ValueType.Hash ? Prefixed(node->ValueLength) : 0);
                return total;
            }
        }
    }

    private static long Prefixed(long length) => LengthPrefix(length) + length;

    private static long LengthPrefix(long length) => length < 64 ? 1 : length < 16384 ? 2 : length <= uint.MaxValue ? 5 : 9;
}
