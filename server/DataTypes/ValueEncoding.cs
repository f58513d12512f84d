using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using ValueType = Diagnostics.Server.Engine.ValueType;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// OBJECT ENCODING and DEBUG OBJECT's names for how a value is held. Strings follow Redis: "int"
/// when the bytes read as a 64-bit integer in at most 20 bytes, "embstr" up to 44 bytes, else
/// "raw". A small hash, set or sorted set held packed answers "listpack" or "intset" (its
/// <see cref="Entry.Form"/>); a big one names its structure: "hashtable" for hashes and sets,
/// "skiplist" for sorted sets; lists answer "quicklist" as Redis 7.0's always do.
/// </summary>
public static unsafe class ValueEncoding
{
    public static ReadOnlySpan<byte> Of(Entry* e) => e->Form switch
    {
        ValueForm.Listpack => "listpack"u8,
        ValueForm.Intset => "intset"u8,
        _ => OfStructure(e),
    };

    private static ReadOnlySpan<byte> OfStructure(Entry* e) => e->Type switch
    {
        ValueType.String when (e->Flags & EntryFlags.RawString) != 0 => "raw"u8,
        ValueType.String when IsInteger(e, out _) => "int"u8,
        ValueType.String when e->ValueLength <= 44 => "embstr"u8,
        ValueType.String => "raw"u8,
        ValueType.List => "quicklist"u8,
        ValueType.SortedSet => "skiplist"u8,
        ValueType.Stream => "stream"u8,
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
                // Each node as the RDB writes it: its container, then its bytes (before LZF).
                ListValue* list = Values.List(e);
                long total = LengthPrefix(list->NodeCount);
                for (int i = 0; i < list->NodeCount; i++)
                    total += 1 + Prefixed(list->NodeAt(i)->Size);
                return total;
            }
            case ValueType.SortedSet when e->Form == ValueForm.Listpack:
                // Written as the listpack's bytes in one RDB string.
                return Prefixed(NativeListpack.Bytes(Values.Packed(e)));
            case ValueType.SortedSet:
            {
                long total = LengthPrefix(Values.SortedSet(e)->Count);
                for (SkipNode* node = SortedSetValue.ListOf(Values.SortedSet(e))->First; node != null; node = SkipNode.Next(node))
                    total += Prefixed(node->MemberLength) + sizeof(double);
                return total;
            }
            case ValueType.Stream:
                return StreamSerializedLength(Values.Stream(e));
            case ValueType.Hash when e->Form == ValueForm.Listpack:
                // Written as the block itself, one RDB string.
                return Prefixed(NativeListpack.Bytes(Values.Packed(e)));
            case ValueType.Set:
                return SetSerializedLength(e);
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

    /// <summary>
    /// A stream as RDB writes it (type 19): each node as its 16-byte key and its listpack, then the
    /// counters and IDs, then every group with its pending entries and consumers.
    /// </summary>
    private static long StreamSerializedLength(Streams.StreamValue* stream)
    {
        long total = LengthPrefix(stream->NodeCount);
        for (int i = 0; i < stream->NodeCount; i++)
            total += Prefixed(16) + Prefixed(NativeListpack.Bytes(stream->Node(i)->Listpack));
        // length, last ID (2), first ID (2), max deleted ID (2), entries added, group count
        total += LengthPrefix(stream->Length) + 6 * 9 + LengthPrefix(stream->EntriesAdded);
        total += LengthPrefix(stream->Groups == null ? 0 : stream->Groups->Count);
        if (stream->Groups == null)
            return total;
        foreach (var (name, pointer) in stream->Groups->Sorted())
        {
            var group = (Streams.ConsumerGroup*)pointer;
            total += Prefixed(name.Length) + 2 * 9 + LengthPrefix(group->EntriesRead < 0 ? 0 : group->EntriesRead);
            total += LengthPrefix(group->Pending->Count) + group->Pending->Count * (16 + 8 + 1);
            total += LengthPrefix(group->ConsumerCount);
            foreach (nint consumer in group->SortedConsumers())
            {
                var c = (Streams.StreamConsumer*)consumer;
                total += Prefixed(Streams.StreamConsumer.NameOf(c).Length) + 8 + LengthPrefix(c->Pending->Count) + c->Pending->Count * 16;
            }
        }
        return total;
    }

    /// <summary>
    /// A set as the RDB writer writes it: an intset as its blob; any other form as the plain set
    /// type (count, then each member, integers of up to 11 characters in their compact form).
    /// </summary>
    private static long SetSerializedLength(Entry* e)
    {
        if (e->Form == ValueForm.Intset)
            return Prefixed(NativeIntset.Bytes(Values.Packed(e)));
        long total = LengthPrefix(Sets.Count(e));
        foreach (ReadOnlySpan<byte> member in Sets.Members(e))
        {
            if (member.Length <= 11 && NumberFormat.TryParseInt64(member, out long n) && n is >= int.MinValue and <= int.MaxValue)
                total += n is >= sbyte.MinValue and <= sbyte.MaxValue ? 2 : n is >= short.MinValue and <= short.MaxValue ? 3 : 5;
            else
                total += Prefixed(member.Length);
        }
        return total;
    }

    private static long Prefixed(long length) => LengthPrefix(length) + length;

    private static long LengthPrefix(long length) => length < 64 ? 1 : length < 16384 ? 2 : length <= uint.MaxValue ? 5 : 9;
}
