using System.Runtime.InteropServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.DataTypes.Streams;

/// <summary>One pending entry: delivered to a consumer and not yet acknowledged (Redis's streamNACK).</summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct PendingEntry
{
    public StreamId Id;
    /// <summary>Unix ms of the last delivery (XPENDING's idle time is measured from it).</summary>
    public long DeliveryTime;
    public long DeliveryCount;
    /// <summary>The consumer it was last delivered to.</summary>
    public StreamConsumer* Consumer;
}

/// <summary>
/// A consumer group's or a consumer's pending entries, ordered by ID: sorted chunks of up to
/// <see cref="ChunkSize"/> entries, found by binary search over the chunks' first IDs. New
/// deliveries mostly come in ID order and append to the last chunk; an acknowledgement moves at
/// most one chunk's tail, and a chunk emptied is dropped, so no operation moves the whole list
/// (Redis uses a radix tree; this keeps one allocation per 64 entries). Tracked native memory.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct PendingEntries
{
    public const int ChunkSize = 64;

    [StructLayout(LayoutKind.Sequential)]
    private struct Chunk
    {
        public int Count;
        public int Reserved;
        // followed by ChunkSize PendingEntry
        public static PendingEntry* Items(Chunk* chunk) => (PendingEntry*)(chunk + 1);
    }

    private Chunk** _chunks;
    private int _chunkCount;
    private int _chunkCapacity;
    private long _count;
    private long _bytes;

    public readonly long Count => _count;
    public readonly long Bytes => _bytes;

    public static PendingEntries* Create()
    {
        var list = (PendingEntries*)TrackedAllocator.Alloc((nuint)sizeof(PendingEntries));
        *list = default;
        list->_bytes = TrackedAllocator.ChargedSize((byte*)list);
        return list;
    }

    public static void Destroy(PendingEntries* list)
    {
        for (int i = 0; i < list->_chunkCount; i++)
            TrackedAllocator.Free((byte*)list->_chunks[i]);
        if (list->_chunks != null)
            TrackedAllocator.Free((byte*)list->_chunks);
        TrackedAllocator.Free((byte*)list);
    }

    /// <summary>The entry with this ID, or null.</summary>
    public readonly PendingEntry* Find(StreamId id)
    {
        int c = ChunkFor(id);
        if (c < 0)
            return null;
        Chunk* chunk = _chunks[c];
        int i = IndexIn(chunk, id, out bool found);
        return found ? Chunk.Items(chunk) + i : null;
    }

    /// <summary>Adds an entry for <paramref name="id"/>, which must be absent; returns it, zeroed but for the ID.</summary>
    public PendingEntry* Insert(StreamId id)
    {
        int c = Math.Max(0, ChunkFor(id));
        if (_chunkCount == 0)
            InsertChunk(0);
        Chunk* chunk = _chunks[c];
        if (chunk->Count == ChunkSize)
        {
            // Split: the upper half moves to a new chunk after it (appends in ID order leave the
            // lower half full, so a chunk appended to at its end splits at its end instead).
            int keep = IndexIn(chunk, id, out _) == ChunkSize ? ChunkSize : ChunkSize / 2;
            Chunk* next = InsertChunk(c + 1);
            int moved = ChunkSize - keep;
            Buffer.MemoryCopy(Chunk.Items(chunk) + keep, Chunk.Items(next), (long)ChunkSize * sizeof(PendingEntry), (long)moved * sizeof(PendingEntry));
            next->Count = moved;
            chunk->Count = keep;
            if (moved == 0 || id >= Chunk.Items(next)[0].Id)
                chunk = next;
        }
        int at = IndexIn(chunk, id, out _);
        PendingEntry* items = Chunk.Items(chunk);
        Buffer.MemoryCopy(items + at, items + at + 1, (long)(ChunkSize - at - 1) * sizeof(PendingEntry), (long)(chunk->Count - at) * sizeof(PendingEntry));
        chunk->Count++;
        _count++;
        items[at] = new PendingEntry { Id = id };
        return items + at;
    }

    /// <summary>Removes the entry with this ID; false when absent.</summary>
    public bool Remove(StreamId id)
    {
        int c = ChunkFor(id);
        if (c < 0)
            return false;
        Chunk* chunk = _chunks[c];
        int i = IndexIn(chunk, id, out bool found);
        if (!found)
            return false;
        PendingEntry* items = Chunk.Items(chunk);
        Buffer.MemoryCopy(items + i + 1, items + i, (long)(ChunkSize - i) * sizeof(PendingEntry), (long)(chunk->Count - i - 1) * sizeof(PendingEntry));
        chunk->Count--;
        _count--;
        if (chunk->Count == 0)
            RemoveChunk(c);
        return true;
    }

    /// <summary>A cursor at the first entry with an ID at or above <paramref name="id"/>.</summary>
    public readonly Cursor From(StreamId id)
    {
        int c = Math.Max(0, ChunkFor(id));
        int i = c < _chunkCount ? IndexIn(_chunks[c], id, out _) : 0;
        var cursor = new Cursor(c, i);
        Normalize(ref cursor);
        return cursor;
    }

    /// <summary>A cursor at the last entry with an ID at or below <paramref name="id"/> (for walking backwards).</summary>
    public readonly Cursor AtOrBefore(StreamId id)
    {
        int c = ChunkFor(id);
        if (c < 0)
            return new Cursor(-1, -1);
        int i = IndexIn(_chunks[c], id, out bool found);
        return new Cursor(c, found ? i : i - 1);
    }

    /// <summary>The entry under the cursor, or null past either end.</summary>
    public readonly PendingEntry* At(Cursor cursor)
        => cursor.Chunk < 0 || cursor.Chunk >= _chunkCount || cursor.Index < 0 || cursor.Index >= _chunks[cursor.Chunk]->Count
            ? null : Chunk.Items(_chunks[cursor.Chunk]) + cursor.Index;

    public readonly void MoveNext(ref Cursor cursor)
    {
        cursor = new Cursor(cursor.Chunk, cursor.Index + 1);
        Normalize(ref cursor);
    }

    public readonly void MovePrevious(ref Cursor cursor)
    {
        if (cursor.Index > 0)
        {
            cursor = new Cursor(cursor.Chunk, cursor.Index - 1);
            return;
        }
        int c = cursor.Chunk - 1;
        cursor = c < 0 ? new Cursor(-1, -1) : new Cursor(c, _chunks[c]->Count - 1);
    }

    /// <summary>A position in the list: chunk and index in it.</summary>
    public readonly record struct Cursor(int Chunk, int Index);

    private readonly void Normalize(ref Cursor cursor)
    {
        if (cursor.Chunk >= 0 && cursor.Chunk < _chunkCount && cursor.Index >= _chunks[cursor.Chunk]->Count)
            cursor = new Cursor(cursor.Chunk + 1, 0);
    }

    /// <summary>The last chunk whose first ID is at most <paramref name="id"/>; -1 when none (or empty).</summary>
    private readonly int ChunkFor(StreamId id)
    {
        int lo = 0, hi = _chunkCount - 1, found = -1;
        while (lo <= hi)
        {
            int mid = (lo + hi) >>> 1;
            if (Chunk.Items(_chunks[mid])[0].Id <= id)
            {
                found = mid;
                lo = mid + 1;
            }
            else
                hi = mid - 1;
        }
        return found;
    }

    /// <summary>Where <paramref name="id"/> is or would go in the chunk.</summary>
    private static int IndexIn(Chunk* chunk, StreamId id, out bool found)
    {
        PendingEntry* items = Chunk.Items(chunk);
        int lo = 0, hi = chunk->Count - 1;
        while (lo <= hi)
        {
            int mid = (lo + hi) >>> 1;
            int order = items[mid].Id.CompareTo(id);
            if (order == 0)
            {
                found = true;
                return mid;
            }
            if (order < 0)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
        found = false;
        return lo;
    }

    private Chunk* InsertChunk(int index)
    {
        if (_chunkCount == _chunkCapacity)
        {
            int capacity = Math.Max(4, _chunkCapacity * 2);
            var grown = (Chunk**)TrackedAllocator.Alloc((nuint)(capacity * sizeof(Chunk*)));
            if (_chunks != null)
            {
                Buffer.MemoryCopy(_chunks, grown, (long)capacity * sizeof(Chunk*), (long)_chunkCount * sizeof(Chunk*));
                _bytes -= TrackedAllocator.ChargedSize((byte*)_chunks);
                TrackedAllocator.Free((byte*)_chunks);
            }
            _chunks = grown;
            _chunkCapacity = capacity;
            _bytes += TrackedAllocator.ChargedSize((byte*)_chunks);
        }
        var chunk = (Chunk*)TrackedAllocator.Alloc((nuint)(sizeof(Chunk) + ChunkSize * sizeof(PendingEntry)));
        chunk->Count = 0;
        _bytes += TrackedAllocator.ChargedSize((byte*)chunk);
        Buffer.MemoryCopy(_chunks + index, _chunks + index + 1, (long)(_chunkCapacity - index - 1) * sizeof(Chunk*), (long)(_chunkCount - index) * sizeof(Chunk*));
        _chunks[index] = chunk;
        _chunkCount++;
        return chunk;
    }

    private void RemoveChunk(int index)
    {
        _bytes -= TrackedAllocator.ChargedSize((byte*)_chunks[index]);
        TrackedAllocator.Free((byte*)_chunks[index]);
        Buffer.MemoryCopy(_chunks + index + 1, _chunks + index, (long)(_chunkCapacity - index) * sizeof(Chunk*), (long)(_chunkCount - index - 1) * sizeof(Chunk*));
        _chunkCount--;
    }
}
