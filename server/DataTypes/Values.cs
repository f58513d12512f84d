using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using ValueType = Diagnostics.Server.Engine.ValueType;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// The link between a key's <see cref="Entry"/> and the structure of a non-string value: the
/// entry's 8 value bytes hold a pointer to it. Creating, freeing, measuring and copying any
/// value goes through here, so the engine needs no knowledge of the types.
/// </summary>
public static unsafe class Values
{
    /// <summary>The table of a hash held as one (<see cref="ValueForm.Structure"/>); <see cref="Hashes"/> works on either form.</summary>
    public static FieldTable* Hash(Entry* e) => *(FieldTable**)Entry.ValuePointer(e);
    public static FieldTable* Set(Entry* e) => *(FieldTable**)Entry.ValuePointer(e);
    public static ListValue* List(Entry* e) => *(ListValue**)Entry.ValuePointer(e);
    public static SortedSetValue* SortedSet(Entry* e) => *(SortedSetValue**)Entry.ValuePointer(e);
    public static Streams.StreamValue* Stream(Entry* e) => *(Streams.StreamValue**)Entry.ValuePointer(e);

    /// <summary>The packed block (listpack or intset) of an entry whose <see cref="Entry.Form"/> is not <see cref="ValueForm.Structure"/>.</summary>
    public static byte* Packed(Entry* e) => *(byte**)Entry.ValuePointer(e);

    /// <summary>Points the entry at a new value block of <paramref name="form"/> (a conversion, or a packed block that moved).</summary>
    public static void Repoint(Entry* e, ValueForm form, void* structure)
    {
        *(void**)Entry.ValuePointer(e) = structure;
        e->Form = form;
    }

    /// <summary>A detached entry for <paramref name="key"/> holding a new, empty value of <paramref name="type"/>.</summary>
    public static Entry* NewEntry(ReadOnlySpan<byte> key, ValueType type)
    {
        if (type == ValueType.Hash)
        {
            // A hash starts as a listpack, as Redis's createHashObject.
            Entry* hashEntry = NewEntry(key, type, Hashes.NewListpack());
            hashEntry->Form = ValueForm.Listpack;
            return hashEntry;
        }
        void* structure = type switch
        {
            ValueType.Set => FieldTable.Create(),
            ValueType.List => ListValue.Create(),
            ValueType.SortedSet => SortedSetValue.Create(),
            ValueType.Stream => Streams.StreamValue.Create(),
            _ => throw new ArgumentOutOfRangeException(nameof(type), type, "strings are stored in the entry itself"),
        };
        return NewEntry(key, type, structure);
    }

    /// <summary>A detached entry for <paramref name="key"/> that takes over <paramref name="structure"/>, built by the caller (the STORE forms).</summary>
    public static Entry* NewEntry(ReadOnlySpan<byte> key, ValueType type, void* structure)
    {
        Entry* e = EntryStore.Allocate(key, sizeof(void*), type);
        *(void**)Entry.ValuePointer(e) = structure;
        return e;
    }

    /// <summary>Frees the structure a non-string entry points to (not the entry's own block).</summary>
    public static void FreeStructure(Entry* e)
    {
        if (e->Form != ValueForm.Structure)
        {
            TrackedAllocator.Free(Packed(e));
            return;
        }
        switch (e->Type)
        {
            case ValueType.Hash:
            case ValueType.Set:
                FieldTable.Destroy(Hash(e));
                break;
            case ValueType.List:
                ListValue.Destroy(List(e));
                break;
            case ValueType.SortedSet:
                SortedSetValue.Destroy(SortedSet(e));
                break;
            case ValueType.Stream:
                Streams.StreamValue.Destroy(Stream(e));
                break;
        }
    }

    /// <summary>Bytes held by the value's structure outside the entry block (0 for strings).</summary>
    public static long StructureBytes(Entry* e) => e->Form != ValueForm.Structure ? TrackedAllocator.ChargedSize(Packed(e)) : e->Type switch
    {
        ValueType.Hash or ValueType.Set => Hash(e)->Bytes,
        ValueType.List => List(e)->Bytes,
        ValueType.SortedSet => SortedSet(e)->Bytes,
        ValueType.Stream => Stream(e)->Bytes,
        _ => 0,
    };

    /// <summary>Elements in the value: fields, members, list elements, stream entries; 1 for a string.</summary>
    public static long Length(Entry* e) => e->Form switch
    {
        ValueForm.Listpack => NativeListpack.Count(Packed(e)) / (e->Type is ValueType.Hash or ValueType.SortedSet ? 2 : 1),
        ValueForm.Intset => NativeIntset.Count(Packed(e)),
        _ => StructureLength(e),
    };

    private static long StructureLength(Entry* e) => e->Type switch
    {
        ValueType.Hash or ValueType.Set => Hash(e)->Count,
        ValueType.List => List(e)->Count,
        ValueType.SortedSet => SortedSet(e)->Count,
        ValueType.Stream => Stream(e)->Length,
        _ => 1,
    };

    /// <summary>Points a copied entry block (COPY) at an independent copy of the source's structure.</summary>
    public static void CopyStructure(Entry* source, Entry* copy)
    {
        if (source->Form != ValueForm.Structure)
        {
            byte* block = Packed(source);
            // The value's own bytes, not the block's usable size: the copy is as small as a fresh value.
            int size = source->Form == ValueForm.Intset ? NativeIntset.Bytes(block) : NativeListpack.Bytes(block);
            byte* duplicate = TrackedAllocator.Alloc((nuint)size);
            Buffer.MemoryCopy(block, duplicate, size, size);
            Repoint(copy, source->Form, duplicate);
            return;
        }
        void* structure;
        switch (source->Type)
        {
            case ValueType.Hash:
            case ValueType.Set:
            {
                FieldTable* from = Hash(source);
                FieldTable* to = FieldTable.Create();
                foreach (FieldNode* node in *from)
                    FieldNode.ValueOf(node).CopyTo(FieldNode.ValueOf(to->Add(FieldNode.FieldOf(node), node->Hash, node->ValueLength)));
                structure = to;
                break;
            }
            case ValueType.List:
                structure = List(source)->Copy();
                break;
            case ValueType.SortedSet:
            {
                SortedSetValue* to = SortedSetValue.Create();
                for (SkipNode* node = SortedSetValue.ListOf(SortedSet(source))->First; node != null; node = SkipNode.Next(node))
                    to->Add(SkipNode.MemberOf(node), node->Score);
                structure = to;
                break;
            }
            case ValueType.Stream:
                structure = Streams.StreamValue.Copy(Stream(source));
                break;
            default:
                return;
        }
        *(void**)Entry.ValuePointer(copy) = structure;
    }
}
