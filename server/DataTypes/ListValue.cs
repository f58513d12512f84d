using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// A list: a ring of 8-byte slots in tracked native memory, so pushes and pops at both ends are
/// O(1) and LINDEX/LSET/LRANGE reach any position directly. A slot holds an element of up to 7
/// bytes itself (low bit 1, length in the next 7 bits, bytes after), which costs no allocation
/// and is what counters, ids and redis-benchmark's values are; a longer element is a pointer to
/// a block of [int length][bytes] (blocks are 16-byte aligned, so their low bit is 0).
/// <see cref="Bytes"/> is kept exact. Owned by one shard; not thread-safe.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct ListValue
{
    public const int InlineMax = 7;
    private const int InitialCapacity = 8;

    private ulong* _slots;
    private int _capacity;
    private int _head;
    private int _count;
    private long _bytes;

    public readonly int Count => _count;

    /// <summary>Bytes held: this header, the slot ring and every out-of-line element, as the allocator charges them.</summary>
    public readonly long Bytes => _bytes;

    public static ListValue* Create()
    {
        var list = (ListValue*)TrackedAllocator.Alloc((nuint)sizeof(ListValue));
        *list = default;
        list->_bytes = TrackedAllocator.ChargedSize((byte*)list);
        return list;
    }

    public static void Destroy(ListValue* list)
    {
        for (int i = 0; i < list->_count; i++)
            list->FreeElement(list->_slots[list->Physical(i)]);
        TrackedAllocator.Free((byte*)list->_slots);
        TrackedAllocator.Free((byte*)list);
    }

    /// <summary>Element <paramref name="index"/> (0 = head); valid until the list next changes.</summary>
    public readonly ReadOnlySpan<byte> this[int index]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => ElementOf(&_slots[Physical(index)]);
    }

    public void PushHead(ReadOnlySpan<byte> value)
    {
        EnsureRoom();
        _head = (_head - 1) & (_capacity - 1);
        _slots[_head] = NewElement(value);
        _count++;
    }

    public void PushTail(ReadOnlySpan<byte> value)
    {
        EnsureRoom();
        _slots[Physical(_count)] = NewElement(value);
        _count++;
    }

    /// <summary>Drops the head element (read it first with this[0]).</summary>
    public void RemoveHead()
    {
        FreeElement(_slots[_head]);
        _head = (_head + 1) & (_capacity - 1);
        _count--;
        ShrinkIfSparse();
    }

    /// <summary>Drops the tail element (read it first with this[Count - 1]).</summary>
    public void RemoveTail()
    {
        FreeElement(_slots[Physical(_count - 1)]);
        _count--;
        ShrinkIfSparse();
    }

    public void Set(int index, ReadOnlySpan<byte> value)
    {
        ulong* slot = &_slots[Physical(index)];
        ulong fresh = NewElement(value);
        FreeElement(*slot);
        *slot = fresh;
    }

    /// <summary>Inserts before position <paramref name="index"/> (Count appends), moving the shorter side.</summary>
    public void Insert(int index, ReadOnlySpan<byte> value)
    {
        EnsureRoom();
        if (index < _count - index)
        {
            _head = (_head - 1) & (_capacity - 1);
            for (int i = 0; i < index; i++)
                _slots[Physical(i)] = _slots[Physical(i + 1)];
        }
        else
        {
            for (int i = _count; i > index; i--)
                _slots[Physical(i)] = _slots[Physical(i - 1)];
        }
        _slots[Physical(index)] = NewElement(value);
        _count++;
    }

    /// <summary>Keeps only positions <paramref name="start"/>..<paramref name="stop"/> (inclusive, already clamped); an empty range empties the list.</summary>
    public void Trim(int start, int stop)
    {
        if (start > stop)
        {
            start = _count;
            stop = _count - 1;
        }
        for (int i = 0; i < start; i++)
            FreeElement(_slots[Physical(i)]);
        for (int i = stop + 1; i < _count; i++)
            FreeElement(_slots[Physical(i)]);
        _head = Physical(start);
        _count = stop - start + 1;
        ShrinkIfSparse();
    }

    /// <summary>
    /// Removes elements equal to <paramref name="value"/> (LREM): the first <paramref name="limit"/>
    /// from the head when positive, from the tail when negative, all when 0. Returns how many.
    /// </summary>
    public int RemoveMatching(ReadOnlySpan<byte> value, long limit)
    {
        long wanted = limit == 0 ? long.MaxValue : Math.Abs(limit);
        int removed = 0;
        if (limit >= 0)
        {
            int write = 0;
            for (int read = 0; read < _count; read++)
            {
                ulong slot = _slots[Physical(read)];
                if (removed < wanted && ElementOf(&slot).SequenceEqual(value))
                {
                    FreeElement(slot);
                    removed++;
                    continue;
                }
                _slots[Physical(write++)] = slot;
            }
        }
        else
        {
            int write = _count - 1;
            for (int read = _count - 1; read >= 0; read--)
            {
                ulong slot = _slots[Physical(read)];
                if (removed < wanted && ElementOf(&slot).SequenceEqual(value))
                {
                    FreeElement(slot);
                    removed++;
                    continue;
                }
                _slots[Physical(write--)] = slot;
            }
            _head = Physical(removed);
        }
        _count -= removed;
        ShrinkIfSparse();
        return removed;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private readonly int Physical(int index) => (_head + index) & (_capacity - 1);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ReadOnlySpan<byte> ElementOf(ulong* slot)
    {
        ulong value = *slot;
        if ((value & 1) != 0)
            return new ReadOnlySpan<byte>((byte*)slot + 1, (int)((value >> 1) & 0x7F));
        byte* block = (byte*)value;
        return new ReadOnlySpan<byte>(block + sizeof(int), *(int*)block);
    }

    private ulong NewElement(ReadOnlySpan<byte> value)
    {
        if (value.Length <= InlineMax)
        {
            ulong slot = ((ulong)value.Length << 1) | 1;
            value.CopyTo(new Span<byte>((byte*)&slot + 1, InlineMax));
            return slot;
        }
        long size = (long)sizeof(int) + value.Length;
        if (size > TrackedAllocator.MaxBlockBytes)
            throw new BlockTooLargeException(size);
        byte* block = TrackedAllocator.Alloc((nuint)size);
        *(int*)block = value.Length;
        value.CopyTo(new Span<byte>(block + sizeof(int), value.Length));
        _bytes += TrackedAllocator.ChargedSize(block);
        return (ulong)block;
    }

    private void FreeElement(ulong slot)
    {
        if ((slot & 1) != 0)
            return;
        _bytes -= TrackedAllocator.ChargedSize((byte*)slot);
        TrackedAllocator.Free((byte*)slot);
    }

    private void EnsureRoom()
    {
        if (_count < _capacity)
            return;
        Resize(_capacity == 0 ? InitialCapacity : _capacity * 2);
    }

    private void ShrinkIfSparse()
    {
        if (_capacity > InitialCapacity * 4 && _count < _capacity / 4)
            Resize(Math.Max(InitialCapacity, (int)System.Numerics.BitOperations.RoundUpToPowerOf2((uint)Math.Max(_count, 1)) * 2));
    }

    /// <summary>Moves the elements, in order, to a fresh ring of <paramref name="capacity"/> slots starting at 0.</summary>
    private void Resize(int capacity)
    {
        var slots = (ulong*)TrackedAllocator.Alloc((nuint)((long)capacity * sizeof(ulong)));
        for (int i = 0; i < _count; i++)
            slots[i] = _slots[Physical(i)];
        if (_slots != null)
        {
            _bytes -= TrackedAllocator.ChargedSize((byte*)_slots);
            TrackedAllocator.Free((byte*)_slots);
        }
        _slots = slots;
        _capacity = capacity;
        _head = 0;
        _bytes += TrackedAllocator.ChargedSize((byte*)slots);
    }
}
