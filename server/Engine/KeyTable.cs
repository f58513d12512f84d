using System.Diagnostics;
using System.Runtime.CompilerServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Engine;

/// <summary>
/// A chained hash table of <see cref="Entry"/> blocks, with bucket arrays in tracked native
/// memory. It grows by incremental rehashing, as Redis's dict does: a second table is allocated
/// and buckets migrate a few at a time on each operation and in the shard's cron, so no single
/// command pays for moving a million keys. Entries do not store their hash (it would cost every
/// key 4 bytes): a lookup compares lengths and bytes along a chain that averages under one entry,
/// and a rehash hashes each key it moves again (<see cref="Keyspace.Hash"/>).
/// Owned by one shard executor; not thread-safe.
/// </summary>
public sealed unsafe class KeyTable : IDisposable
{
    private const long InitialSize = 4;
    private const int EmptyVisitsPerStep = 10;

    private Entry** _table0;
    private long _size0;
    private long _used0;
    private Entry** _table1;
    private long _size1;
    private long _used1;
    private long _rehashIndex = -1;
#if DEBUG
    // Debug builds (the test suite's) catch two threads inside the table at once: a shard held
    // wrongly shows up as a failure naming the second thread's path, not as keys lost later.
    private int _userThread;
    private int _userDepth;
#endif

    public long Count => _used0 + _used1;
    public bool IsRehashing => _rehashIndex >= 0;
    /// <summary>Buckets in both tables (for MEMORY STATS overhead figures).</summary>
    public long BucketCount => _size0 + _size1;

    /// <summary>
    /// The pointer that refers to the entry for <paramref name="key"/> (a bucket slot or the
    /// previous entry's Next), or null. Valid until the table is next modified.
    /// </summary>
    public Entry** FindSlot(ReadOnlySpan<byte> key, uint hash)
    {
        using var use = Use();
        if (_rehashIndex >= 0)
            RehashStep(1);
        if (_size0 == 0)
            return null;
        Entry** slot = FindIn(_table0, _size0, key, hash);
        if (slot == null && _rehashIndex >= 0)
            slot = FindIn(_table1, _size1, key, hash);
        return slot;
    }

    public Entry* Find(ReadOnlySpan<byte> key, uint hash)
    {
        Entry** slot = FindSlot(key, hash);
        return slot == null ? null : *slot;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Entry** FindIn(Entry** table, long size, ReadOnlySpan<byte> key, uint hash)
    {
        Entry** slot = &table[hash & (size - 1)];
        while (*slot != null)
        {
            Entry* e = *slot;
            if (e->KeyLength == key.Length && Entry.KeyOf(e).SequenceEqual(key))
                return slot;
            slot = &e->Next;
        }
        return null;
    }

    /// <summary>Adds an entry whose key, of hash <paramref name="hash"/>, is known to be absent.</summary>
    public void Insert(Entry* entry, uint hash)
    {
        Debug.Assert(hash == Keyspace.Hash(Entry.KeyOf(entry)), "an entry inserted under another key's hash would never be found");
        using var use = Use();
        ExpandIfNeeded();
        if (_rehashIndex >= 0)
        {
            Entry** bucket = &_table1[hash & (_size1 - 1)];
            entry->Next = *bucket;
            *bucket = entry;
            _used1++;
        }
        else
        {
            Entry** bucket = &_table0[hash & (_size0 - 1)];
            entry->Next = *bucket;
            *bucket = entry;
            _used0++;
        }
    }

    /// <summary>Puts <paramref name="replacement"/> where the entry at <paramref name="slot"/> was.</summary>
    public static void Replace(Entry** slot, Entry* replacement)
    {
        replacement->Next = (*slot)->Next;
        *slot = replacement;
    }

    /// <summary>Removes the entry at <paramref name="slot"/> and returns it (the caller frees it).</summary>
    public Entry* Unlink(Entry** slot)
    {
        using var use = Use();
        Entry* e = *slot;
        bool inTable1 = _rehashIndex >= 0 && IsInTable1(slot, e); // decided while e is still linked
        *slot = e->Next;
        e->Next = null;
        if (inTable1)
            _used1--;
        else
            _used0--;
        return e;
    }

    // A slot is either a bucket of one of the tables or the Next field of an entry in a chain.
    // Entries of migrated buckets (index below the rehash index) are in table 1; so are entries
    // added during the rehash, whatever their table-0 bucket, so above the rehash index the
    // table-0 chain itself must be checked.
    private bool IsInTable1(Entry** slot, Entry* e)
    {
        if (slot >= _table1 && slot < _table1 + _size1)
            return true;
        if (slot >= _table0 && slot < _table0 + _size0)
            return false;
        long bucket = Keyspace.Hash(Entry.KeyOf(e)) & (_size0 - 1);
        if (bucket < _rehashIndex)
            return true;
        for (Entry* x = _table0[bucket]; x != null; x = x->Next)
            if (x == e)
                return false;
        return true;
    }

    /// <summary>A random entry, or null when empty (RANDOMKEY, eviction sampling).</summary>
    public Entry* RandomEntry(Random random)
    {
        using var use = Use();
        if (Count == 0)
            return null;
        if (_rehashIndex >= 0)
            RehashStep(1);
        Entry* head;
        while (true)
        {
            if (_rehashIndex >= 0)
            {
                // Buckets of table 0 below the rehash index are empty; skip them.
                long span = _size0 - _rehashIndex + _size1;
                long pick = _rehashIndex + random.NextInt64(span);
                head = pick < _size0 ? _table0[pick] : _table1[pick - _size0];
            }
            else
            {
                head = _table0[random.NextInt64(_size0)];
            }
            if (head != null)
                break;
        }
        int length = 0;
        for (Entry* e = head; e != null; e = e->Next)
            length++;
        int index = random.Next(length);
        while (index-- > 0)
            head = head->Next;
        return head;
    }

    /// <summary>
    /// Redis's reverse-binary cursor scan: every entry present for the whole scan is visited at
    /// least once even if the table grows or shrinks between calls. Returns the next cursor (0 = done).
    /// </summary>
    public ulong Scan<TVisitor>(ulong cursor, ref TVisitor visitor) where TVisitor : struct, IEntryVisitor
    {
        using var use = Use();
        if (Count == 0)
            return 0;
        ulong v = cursor;
        if (_rehashIndex < 0)
        {
            ulong mask = (ulong)_size0 - 1;
            VisitChain(_table0[v & mask], ref visitor);
            return ScanCursor.Advance(v, mask);
        }

        Entry** small = _table0, large = _table1;
        long smallSize = _size0, largeSize = _size1;
        if (smallSize > largeSize)
        {
            Entry** swap = small;
            small = large;
            large = swap;
            (smallSize, largeSize) = (largeSize, smallSize);
        }
        ulong m0 = (ulong)smallSize - 1, m1 = (ulong)largeSize - 1;
        VisitChain(small[v & m0], ref visitor);
        do
        {
            VisitChain(large[v & m1], ref visitor);
            v = ScanCursor.Advance(v, m1);
        } while ((v & (m0 ^ m1)) != 0);
        return v;
    }

    private static void VisitChain<TVisitor>(Entry* e, ref TVisitor visitor) where TVisitor : struct, IEntryVisitor
    {
        while (e != null)
        {
            Entry* next = e->Next;
            visitor.Visit(e);
            e = next;
        }
    }

    /// <summary>Calls the visitor for every entry; the visitor must not modify the table.</summary>
    public void ForEach<TVisitor>(ref TVisitor visitor) where TVisitor : struct, IEntryVisitor
    {
        using var use = Use();
        for (long i = 0; i < _size0; i++)
            VisitChain(_table0[i], ref visitor);
        for (long i = 0; i < _size1; i++)
            VisitChain(_table1[i], ref visitor);
    }

    /// <summary>Moves up to <paramref name="buckets"/> buckets to the new table. Returns false when done.</summary>
    public bool RehashStep(int buckets)
    {
        using var use = Use();
        if (_rehashIndex < 0)
            return false;
        int emptyVisits = buckets * EmptyVisitsPerStep;
        long mask1 = _size1 - 1;
        while (buckets-- > 0 && _used0 != 0)
        {
            while (_table0[_rehashIndex] == null)
            {
                _rehashIndex++;
                if (--emptyVisits == 0)
                    return true;
            }
            Entry* e = _table0[_rehashIndex];
            while (e != null)
            {
                Entry* next = e->Next;
                Entry** bucket = &_table1[Keyspace.Hash(Entry.KeyOf(e)) & mask1];
                e->Next = *bucket;
                *bucket = e;
                _used0--;
                _used1++;
                e = next;
            }
            _table0[_rehashIndex] = null;
            _rehashIndex++;
        }
        if (_used0 == 0)
        {
            TrackedAllocator.Free((byte*)_table0);
            _table0 = _table1;
            _size0 = _size1;
            _used0 = _used1;
            _table1 = null;
            _size1 = 0;
            _used1 = 0;
            _rehashIndex = -1;
            return false;
        }
        return true;
    }

    /// <summary>Rehashes for about <paramref name="milliseconds"/> (the shard cron's share).</summary>
    public void RehashFor(int milliseconds)
    {
        long deadline = Environment.TickCount64 + milliseconds;
        while (RehashStep(100))
        {
            if (Environment.TickCount64 >= deadline)
                return;
        }
    }

    /// <summary>Starts shrinking when the table is under 10% full, as Redis's htNeedsResize does.</summary>
    public void ShrinkIfSparse()
    {
        using var use = Use();
        if (_rehashIndex >= 0 || _size0 <= InitialSize)
            return;
        if (_used0 * 100 / _size0 < 10)
            StartResize(Math.Max(InitialSize, (long)System.Numerics.BitOperations.RoundUpToPowerOf2((ulong)Math.Max(_used0, 1))));
    }

    private void ExpandIfNeeded()
    {
        if (_rehashIndex >= 0)
            return;
        if (_size0 == 0)
        {
            _table0 = AllocateBuckets(InitialSize);
            _size0 = InitialSize;
            return;
        }
        if (_used0 >= _size0)
            StartResize(_size0 * 2);
    }

    private void StartResize(long size)
    {
        if (size == _size0)
            return;
        _table1 = AllocateBuckets(size);
        _size1 = size;
        _rehashIndex = 0;
    }

    private static Entry** AllocateBuckets(long size) => (Entry**)TrackedAllocator.AllocZeroed((nuint)(size * sizeof(Entry*)));

    /// <summary>Detaches every entry and returns them as one chain; the table is left empty.</summary>
    public Entry* DetachAll()
    {
        using var use = Use();
        Entry* chain = null;
        for (int t = 0; t < 2; t++)
        {
            Entry** table = t == 0 ? _table0 : _table1;
            long size = t == 0 ? _size0 : _size1;
            for (long i = 0; i < size; i++)
            {
                Entry* e = table[i];
                while (e != null)
                {
                    Entry* next = e->Next;
                    e->Next = chain;
                    chain = e;
                    e = next;
                }
            }
        }
        FreeBuckets();
        return chain;
    }

    private UseScope Use() => new(this);

    /// <summary>One thread's use of the table; checks and counts in Debug builds, nothing in Release.</summary>
    private readonly ref struct UseScope
    {
#if DEBUG
        private readonly KeyTable _table;

        public UseScope(KeyTable table)
        {
            _table = table;
            int me = Environment.CurrentManagedThreadId;
            int user = Interlocked.CompareExchange(ref table._userThread, me, 0);
            if (user != 0 && user != me)
                Environment.FailFast($"KeyTable used by thread {me} while thread {user} is inside it: the shard is not held.\n{new StackTrace(1, true)}");
            table._userDepth++;
        }

        public void Dispose()
        {
            if (--_table._userDepth == 0)
                Volatile.Write(ref _table._userThread, 0);
        }
#else
        public UseScope(KeyTable table)
        {
        }

        public void Dispose()
        {
        }
#endif
    }

    private void FreeBuckets()
    {
        TrackedAllocator.Free((byte*)_table0);
        TrackedAllocator.Free((byte*)_table1);
        _table0 = _table1 = null;
        _size0 = _size1 = _used0 = _used1 = 0;
        _rehashIndex = -1;
    }

    public void Dispose()
    {
        Entry* chain = DetachAll();
        EntryStore.FreeChain(chain);
    }
}

/// <summary>Called once per entry by <see cref="KeyTable"/> iteration; a struct so calls inline.</summary>
public unsafe interface IEntryVisitor
{
    void Visit(Entry* entry);
}
