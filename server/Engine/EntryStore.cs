using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Engine;

/// <summary>Allocation and release of <see cref="Entry"/> blocks through the tracked allocator.</summary>
public static unsafe class EntryStore
{
    public static Entry* AllocateString(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        Entry* e = Allocate(key, value.Length, ValueType.String);
        value.CopyTo(Entry.ValueOf(e));
        return e;
    }

    /// <summary>A new entry with room for <paramref name="valueLength"/> value bytes, left for the caller to fill.</summary>
    public static Entry* Allocate(ReadOnlySpan<byte> key, int valueLength, ValueType type)
    {
        long size = Entry.BlockSize(key.Length, valueLength);
        if (size > TrackedAllocator.MaxBlockBytes)
            throw new BlockTooLargeException(size);
        Entry* e = (Entry*)TrackedAllocator.Alloc((nuint)size);
        e->Next = null;
        e->KeyLength = key.Length;
        e->ValueLength = valueLength;
        e->VolatileIndex = -1;
        e->AccessClock = LruClock.Now;
        e->Type = type;
        e->Form = ValueForm.Structure;
        e->Frequency = LfuCounter.InitialValue;
        e->Flags = EntryFlags.None;
        key.CopyTo(new Span<byte>((byte*)e + Entry.HeaderSize, key.Length));
        return e;
    }

    /// <summary>True when the block can hold a value of <paramref name="valueLength"/> bytes without wasting more than half of it.</summary>
    public static bool FitsInPlace(Entry* e, int valueLength)
    {
        nuint usable = TrackedAllocator.UsableSize((byte*)e);
        nuint needed = (nuint)Entry.BlockSize(e->KeyLength, valueLength); // never negative: lengths are ints, the sum a long
        return needed <= usable && needed * 2 >= usable;
    }

    /// <summary>Bytes charged for this entry and the structure of its value, header and allocator overhead included (MEMORY USAGE).</summary>
    public static long ChargedBytes(Entry* e)
        => TrackedAllocator.ChargedSize((byte*)e) + (e->Type == ValueType.String ? 0 : DataTypes.Values.StructureBytes(e));

    /// <summary>Frees the entry and, for a non-string, the value structure it points to.</summary>
    public static void Free(Entry* e)
    {
        if (e->Type != ValueType.String)
            DataTypes.Values.FreeStructure(e);
        TrackedAllocator.Free((byte*)e);
    }

    public static void FreeChain(Entry* chain)
    {
        while (chain != null)
        {
            Entry* next = chain->Next;
            Free(chain);
            chain = next;
        }
    }
}
