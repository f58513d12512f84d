using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Engine;

/// <summary>
/// Builds entries under another name. The key bytes live inside the entry block, so RENAME and
/// COPY need a new block: <see cref="Rekey"/> moves the value (the old block is released without
/// releasing the value it pointed to), <see cref="Clone"/> duplicates it.
/// </summary>
public static unsafe class EntryCopier
{
    /// <summary>
    /// Returns a detached entry named <paramref name="key"/> that takes over the value and access
    /// statistics of the detached <paramref name="entry"/>, whose block is released (the TTL is
    /// the database's: <see cref="Database.Detach"/> gives it, <see cref="Database.Add"/> takes it).
    /// </summary>
    public static Entry* Rekey(Entry* entry, ReadOnlySpan<byte> key)
    {
        Entry* fresh = CopyBlock(entry, key);
        // Only the block: for strings the value bytes were copied; for other types the value area
        // holds a pointer to the value's structure, which now belongs to the fresh entry.
        TrackedAllocator.Free((byte*)entry);
        return fresh;
    }

    /// <summary>
    /// A detached, independent copy of <paramref name="entry"/> named <paramref name="key"/>,
    /// (COPY keeps the TTL, as Redis does: the caller adds it with the source's).
    /// </summary>
    public static Entry* Clone(Entry* entry, ReadOnlySpan<byte> key)
    {
        Entry* fresh = CopyBlock(entry, key);
        if (entry->Type != ValueType.String)
            DataTypes.Values.CopyStructure(entry, fresh);
        fresh->AccessClock = LruClock.Now;
        fresh->Frequency = LfuCounter.InitialValue;
        return fresh;
    }

    private static Entry* CopyBlock(Entry* entry, ReadOnlySpan<byte> key)
    {
        Entry* fresh = EntryStore.Allocate(key, entry->ValueLength, entry->Type);
        new ReadOnlySpan<byte>(Entry.ValuePointer(entry), entry->ValueLength).CopyTo(Entry.ValueOf(fresh));
        fresh->AccessClock = entry->AccessClock;
        fresh->Frequency = entry->Frequency;
        fresh->Flags = entry->Flags;
        fresh->Form = entry->Form;
        return fresh;
    }
}
