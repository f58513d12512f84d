using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Diagnostics.Server.Engine;

/// <summary>What a key holds; the numbers are fixed because they are stored in native memory.</summary>
public enum ValueType : byte
{
    String = 0,
    List = 1,
    Set = 2,
    SortedSet = 3,
    Hash = 4,
    Stream = 5,
}

/// <summary>What an entry remembers about its value's history beyond its bytes.</summary>
[Flags]
public enum EntryFlags : byte
{
    None = 0,
    /// <summary>
    /// A string Redis would hold as "raw" whatever its bytes: one changed in place (APPEND,
    /// SETRANGE, SETBIT, BITFIELD, PFADD, PFCOUNT's cache) or built as a raw string (BITOP,
    /// PFMERGE), as Redis's dbUnshareStringValue and createRawStringObject leave them. A new value
    /// (SET, INCR, RESTORE, a load) starts without it, as tryObjectEncoding re-encodes those.
    /// </summary>
    RawString = 1,
}

/// <summary>
/// How a non-string value is held, as Redis's OBJ_ENCODING_* says it: its big structure (hash
/// table, skip list, quicklist, stream), or a packed block for a small value (a listpack, an
/// intset), converted to the big one exactly when Redis converts. Stored in the entry.
/// </summary>
public enum ValueForm : byte
{
    /// <summary>The type's big structure (or a string's bytes).</summary>
    Structure = 0,
    /// <summary>A <see cref="DataTypes.Packed.NativeListpack"/>: small hashes, sets and sorted sets.</summary>
    Listpack = 1,
    /// <summary>An integer set: small sets of integers.</summary>
    Intset = 2,
}

/// <summary>
/// One key and its value in a single native block: this header, then the key bytes, then the
/// value bytes (for strings) or a pointer to the value's own structure (other types).
/// One block per key keeps lookups to one cache miss after the bucket and costs one allocation.
/// The header holds only what every key needs (28 bytes, so a 12-byte key and a value pointer
/// fit glibc's 56-byte chunk): a TTL lives in the database's volatile-key vector beside the
/// entry's index there, and the key's hash is computed again where a rehash needs it, as
/// Redis's dict does, rather than stored in every key.
/// </summary>
[StructLayout(LayoutKind.Sequential, Pack = 4)]
public unsafe struct Entry
{
    public const int HeaderSize = 28;

    /// <summary>Next entry in the same hash bucket.</summary>
    public Entry* Next;
    public int KeyLength;
    public int ValueLength;
    /// <summary>Slot in the database's volatile-key vector (which holds the expiry time), or -1: no TTL.</summary>
    public int VolatileIndex;
    /// <summary>LRU clock in seconds at the last access (OBJECT IDLETIME, LRU eviction).</summary>
    public uint AccessClock;
    public ValueType Type;
    /// <summary>How the value is held (its structure or a packed form); the value pointer's meaning depends on it.</summary>
    public ValueForm Form;
    /// <summary>Logarithmic access counter (OBJECT FREQ, LFU eviction).</summary>
    public byte Frequency;
    public EntryFlags Flags;

    /// <summary>Whether the key has a TTL (its time is in the database's volatile-key vector).</summary>
    public readonly bool HasExpiry
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => VolatileIndex >= 0;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> KeyOf(Entry* entry) => new((byte*)entry + HeaderSize, entry->KeyLength);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Span<byte> ValueOf(Entry* entry) => new((byte*)entry + HeaderSize + entry->KeyLength, entry->ValueLength);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static byte* ValuePointer(Entry* entry) => (byte*)entry + HeaderSize + entry->KeyLength;

    public static long BlockSize(int keyLength, int valueLength) => (long)HeaderSize + keyLength + valueLength;
}
