using System.Runtime.CompilerServices;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Transactions;

namespace Diagnostics.Server.Engine;

/// <summary>
/// One numbered database's part of one shard: the keys whose hash routes to this shard, plus a
/// vector of the keys that have a TTL, which holds their expiry times (for lookups, active expiry
/// sampling and INFO keyspace's expires).
/// Only the owning shard's executor touches it, so nothing here locks.
/// </summary>
public sealed unsafe class Database : IDisposable
{
    private readonly KeyTable _keys = new();
    private VolatileKey* _volatile;
    private int _volatileCount;
    private int _volatileCapacity;

    private readonly Shard? _shard;

    private readonly WatchRegistrations _watchRegistrations;

    public Database(int index, Shard? shard = null, WatchRegistrations? watchRegistrations = null)
    {
        Index = index;
        _shard = shard;
        _watchRegistrations = watchRegistrations ?? new WatchRegistrations();
    }

    /// <summary>The shard this database is part of (null for a detached one).</summary>
    internal Shard? Shard => _shard;

    /// <summary>The effects scope of whoever holds this database's shard (null: nothing is reported).</summary>
    public CommandEffects? Effects => _shard?.Effects;

    /// <summary>The database number (SELECT), which moves with the data on SWAPDB.</summary>
    public int Index { get; internal set; }
    public long Count => _keys.Count;
    public int ExpiresCount => _volatileCount;
    /// <summary>Sum of TTLs seen by the last active expire cycle (avg_ttl in INFO keyspace).</summary>
    public long AverageTtlMs { get; internal set; }
    public KeyTable Keys => _keys;

    /// <summary>The key's absolute expiry in Unix milliseconds, 0 when it has no TTL.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public long ExpireAtOf(Entry* e) => e->VolatileIndex < 0 ? 0 : _volatile[e->VolatileIndex].ExpireAt;

    /// <summary>Whether the key's TTL has passed at <paramref name="nowMs"/> (false for a key without one).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool IsExpired(Entry* e, long nowMs) => e->VolatileIndex >= 0 && _volatile[e->VolatileIndex].ExpireAt <= nowMs;

    /// <summary>Finds a live key; an expired one is deleted on the spot (lazy expiry) and reported missing.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public Entry* Lookup(ReadOnlySpan<byte> key, uint hash, long nowMs)
    {
        Entry** slot = LookupSlot(key, hash, nowMs);
        return slot == null ? null : *slot;
    }

    /// <summary>Deletes a key whose time passed, recording the deletion for the AOF.</summary>
    private void RemoveExpired(Entry** slot)
    {
        var effects = Effects;
        effects?.Deleted(Index, Entry.KeyOf(*slot));
        Watched?.Touch(Entry.KeyOf(*slot));
        if (_shard?.Tracking is { Any: true } tracking)
            tracking.KeyRemoved(Entry.KeyOf(*slot), Keyspace.Hash(Entry.KeyOf(*slot)), _shard);
        effects?.Notify(KeyspaceEventTypes.Expired, "expired"u8, Entry.KeyOf(*slot), Index);
        // Counted before the key goes: INFO, read from another thread, never sees it gone uncounted.
        ExpiredKeys++;
        RemoveAt(slot);
    }

    /// <summary>Keys removed because their TTL passed (INFO stats expired_keys).</summary>
    public long ExpiredKeys { get; internal set; }

    /// <summary>
    /// Deletes the entry at <paramref name="slot"/> to free memory (maxmemory), the way DEL does,
    /// and records the deletion for the AOF like an expiry, so a replay drops the key too.
    /// Returns the bytes the entry was charged.
    /// </summary>
    public long Evict(Entry** slot)
    {
        long bytes = EntryStore.ChargedBytes(*slot);
        var effects = Effects;
        effects?.Deleted(Index, Entry.KeyOf(*slot));
        Watched?.Touch(Entry.KeyOf(*slot));
        if (_shard?.Tracking is { Any: true } tracking)
            tracking.KeyRemoved(Entry.KeyOf(*slot), Keyspace.Hash(Entry.KeyOf(*slot)), _shard);
        effects?.Notify(KeyspaceEventTypes.Evicted, "evicted"u8, Entry.KeyOf(*slot), Index);
        RemoveAt(slot);
        return bytes;
    }

    /// <summary>A random key that has a TTL, or null (volatile-* eviction sampling).</summary>
    public Entry* RandomVolatile(Random random) => _volatileCount == 0 ? null : _volatile[random.Next(_volatileCount)].Entry;

    /// <summary>
    /// The bytes held for <paramref name="e"/> (MEMORY USAGE): its block as charged by the
    /// allocator, plus its share of the bucket array and, when it has a TTL, of the expires vector.
    /// </summary>
    public long MemoryUsage(Entry* e)
    {
        long bytes = EntryStore.ChargedBytes(e);
        if (_keys.Count > 0)
            bytes += _keys.BucketCount * sizeof(Entry*) / _keys.Count;
        if (e->VolatileIndex >= 0 && _volatileCount > 0)
            bytes += VolatileVectorBytes / _volatileCount;
        return bytes;
    }

    /// <summary>Bytes of the vector that indexes the keys with a TTL (MEMORY STATS overhead.hashtable.expires).</summary>
    public long VolatileVectorBytes => (long)_volatileCapacity * sizeof(VolatileKey);

    /// <summary>Like <see cref="Lookup"/> but returns the slot, for callers that replace or remove the entry.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public Entry** LookupSlot(ReadOnlySpan<byte> key, uint hash, long nowMs)
    {
        Entry** slot = _keys.FindSlot(key, hash);
        if (slot == null)
            return null;
        if (IsExpired(*slot, nowMs))
        {
            if (_shard is { Cron.ReplicaMode: true })
            {
                // A replica: the master's commands still see the key (its DEL is on its way);
                // other reads see it missing and leave it; a write on a writable replica deletes it.
                var effects = Effects;
                if (effects is { FromMaster: true })
                    return slot;
                if (effects is not { MayWrite: true })
                    return null;
            }
            if (!(_shard is { Cron.WritesPaused: true } && Effects is { MayWrite: false }))
                RemoveExpired(slot);
            return null;
        }
        return slot;
    }

    /// <summary>
    /// Sets a string value. <paramref name="expireAt"/>: 0 for no TTL, -1 to keep the existing TTL,
    /// otherwise absolute Unix milliseconds. Reuses the block when the new value fits.
    /// </summary>
    public Entry* SetString(ReadOnlySpan<byte> key, uint hash, ReadOnlySpan<byte> value, long expireAt, long nowMs)
    {
        Entry** slot = LookupSlot(key, hash, nowMs);
        return slot == null ? AddString(key, hash, value, expireAt == -1 ? 0 : expireAt) : OverwriteString(slot, value, expireAt);
    }

    /// <summary>Adds a key known to be absent.</summary>
    public Entry* AddString(ReadOnlySpan<byte> key, uint hash, ReadOnlySpan<byte> value, long expireAt)
    {
        Entry* e = EntryStore.AllocateString(key, value);
        _keys.Insert(e, hash);
        if (expireAt > 0)
            SetExpire(e, expireAt);
        Effects?.Notify(KeyspaceEventTypes.New, "new"u8, key, Index);
        return e;
    }

    /// <summary>
    /// Adds an entry built by the caller (or detached from another database) whose key, of hash
    /// <paramref name="hash"/>, is known to be absent; <paramref name="expireAt"/>: its TTL, 0 for none.
    /// </summary>
    public void Add(Entry* e, uint hash, long expireAt = 0)
    {
        e->VolatileIndex = -1;
        _keys.Insert(e, hash);
        if (expireAt > 0)
            SetExpire(e, expireAt);
        var effects = Effects;
        effects?.Notify(KeyspaceEventTypes.New, "new"u8, Entry.KeyOf(e), Index);
        // A list, sorted set or stream appearing where clients wait makes the key ready for them
        // (Redis's signalKeyAsReady in dbAdd); lists and sorted sets gain elements only then.
        if (Blocked is { } blocked && e->Type is ValueType.List or ValueType.SortedSet or ValueType.Stream && blocked.HasWaiters(Entry.KeyOf(e)))
            effects?.SignalReady(this, Entry.KeyOf(e));
    }

    /// <summary>A stream that gained entries (or lost a group) where clients wait is ready for them.</summary>
    public void SignalWaiters(ReadOnlySpan<byte> key)
    {
        if (Blocked is { } blocked && blocked.HasWaiters(key))
            Effects?.SignalReady(this, key);
    }

    /// <summary>Clients blocked on keys of this database; null until the first one blocks.</summary>
    public BlockingQueues? Blocked { get; private set; }

    /// <summary>Queues a blocked client on <paramref name="key"/>.</summary>
    public void BlockOn(ReadOnlySpan<byte> key, BlockedClient client) => (Blocked ??= new BlockingQueues()).Add(key, client);

    /// <summary>Connections watching keys of this database (WATCH); null until the first WATCH.</summary>
    public WatchedKeys? Watched { get; private set; }

    public void Watch(ReadOnlySpan<byte> key, Watcher watcher) => (Watched ??= new WatchedKeys(_watchRegistrations)).Add(key, watcher);

    /// <summary>
    /// After SWAPDB exchanged the data of two databases: the clients waiting on or watching their
    /// numbers stay with the number, as in Redis. Watchers of both are touched, and waited-on keys
    /// that now hold a value are made ready.
    /// </summary>
    public static void AfterSwap(Database a, Database b, long nowMs)
    {
        (a.Blocked, b.Blocked) = (b.Blocked, a.Blocked);
        (a.Watched, b.Watched) = (b.Watched, a.Watched);
        foreach (var db in (ReadOnlySpan<Database>)[a, b])
        {
            db.Watched?.TouchAll();
            if (db.Blocked is not { } blocked)
                continue;
            foreach (byte[] key in blocked.Keys)
                if (db.Lookup(key, Keyspace.Hash(key), nowMs) != null)
                    db.Effects?.SignalReady(db, key);
        }
    }

    /// <summary>Replaces the value of the entry at <paramref name="slot"/> with a string.</summary>
    public Entry* OverwriteString(Entry** slot, ReadOnlySpan<byte> value, long expireAt)
    {
        Entry* e = *slot;
        if (e->Type == ValueType.String && EntryStore.FitsInPlace(e, value.Length))
        {
            e->ValueLength = value.Length;
            e->Flags &= ~EntryFlags.RawString; // a new value, encoded afresh as Redis does
            value.CopyTo(Entry.ValueOf(e));
        }
        else
        {
            Entry* fresh = EntryStore.AllocateString(Entry.KeyOf(e), value);
            e = ReplaceEntry(slot, fresh);
        }
        e->AccessClock = LruClock.Now;
        if (expireAt != -1)
            SetExpire(e, expireAt);
        return e;
    }

    /// <summary>
    /// Swaps a rebuilt entry (same key) into the table in place of the old one, carrying its TTL
    /// over, and frees the old block. Returns the new entry.
    /// </summary>
    public Entry* ReplaceEntry(Entry** slot, Entry* fresh)
    {
        Entry* old = *slot;
        KeyTable.Replace(slot, fresh);
        fresh->VolatileIndex = old->VolatileIndex;
        fresh->Frequency = old->Frequency;
        if (fresh->VolatileIndex >= 0)
            _volatile[fresh->VolatileIndex].Entry = fresh;
        EntryStore.Free(old);
        return fresh;
    }

    /// <summary>Resizes the entry's value in place or by moving it; the first bytes are kept.</summary>
    public Entry* ResizeString(Entry** slot, int valueLength)
    {
        Entry* e = *slot;
        if (EntryStore.FitsInPlace(e, valueLength))
        {
            e->ValueLength = valueLength;
            return e;
        }
        Entry* fresh = EntryStore.Allocate(Entry.KeyOf(e), valueLength, e->Type);
        int keep = Math.Min(valueLength, e->ValueLength);
        Entry.ValueOf(e)[..keep].CopyTo(Entry.ValueOf(fresh));
        return ReplaceEntry(slot, fresh);
    }

    public bool Delete(ReadOnlySpan<byte> key, uint hash, long nowMs)
    {
        Entry** slot = LookupSlot(key, hash, nowMs);
        if (slot == null)
            return false;
        RemoveAt(slot);
        return true;
    }

    /// <summary>Unlinks and frees the entry at <paramref name="slot"/>.</summary>
    public void RemoveAt(Entry** slot) => EntryStore.Free(Detach(slot, out _));

    /// <summary>
    /// Unlinks the entry at <paramref name="slot"/> without freeing it (MOVE, RENAME), giving its
    /// TTL (0 for none) in <paramref name="expireAt"/> for <see cref="Add"/> in another database.
    /// </summary>
    public Entry* Detach(Entry** slot, out long expireAt)
    {
        Entry* e = _keys.Unlink(slot);
        expireAt = ExpireAtOf(e);
        if (e->VolatileIndex >= 0)
            RemoveVolatile(e);
        return e;
    }

    /// <summary>Sets or clears (0) the absolute expiry time of an entry.</summary>
    public void SetExpire(Entry* e, long expireAt)
    {
        if (expireAt == 0)
        {
            if (e->VolatileIndex >= 0)
                RemoveVolatile(e);
            return;
        }
        if (e->VolatileIndex >= 0)
        {
            _volatile[e->VolatileIndex].ExpireAt = expireAt;
            return;
        }
        if (_volatileCount == _volatileCapacity)
            GrowVolatile();
        e->VolatileIndex = _volatileCount;
        _volatile[_volatileCount++] = new VolatileKey { Entry = e, ExpireAt = expireAt };
    }

    private void RemoveVolatile(Entry* e)
    {
        int index = e->VolatileIndex;
        VolatileKey last = _volatile[--_volatileCount];
        _volatile[index] = last;
        last.Entry->VolatileIndex = index;
        e->VolatileIndex = -1;
    }

    private void GrowVolatile()
    {
        int capacity = Math.Max(16, _volatileCapacity * 2);
        _volatile = (VolatileKey*)TrackedAllocator.Realloc((byte*)_volatile, (nuint)(capacity * sizeof(VolatileKey)));
        _volatileCapacity = capacity;
    }

    /// <summary>
    /// One round of Redis's active expiry: sample up to <paramref name="samples"/> keys with a TTL
    /// and delete the expired ones. Returns how many were sampled and expired so the caller can
    /// decide to go on (it repeats while more than a quarter of the sample had expired).
    /// </summary>
    public (int Sampled, int Expired) ExpireSample(int samples, long nowMs, Random random)
    {
        int sampled = 0, expired = 0;
        long ttlSum = 0;
        int ttlCount = 0;
        for (int i = 0; i < samples && _volatileCount > 0; i++)
        {
            VolatileKey key = _volatile[random.Next(_volatileCount)];
            sampled++;
            if (key.ExpireAt <= nowMs)
            {
                RemoveExpired(_keys.FindSlot(Entry.KeyOf(key.Entry), Keyspace.Hash(Entry.KeyOf(key.Entry))));
                expired++;
            }
            else
            {
                ttlSum += key.ExpireAt - nowMs;
                ttlCount++;
            }
        }
        if (ttlCount > 0)
        {
            long average = ttlSum / ttlCount;
            // Smoothed like Redis: mostly the previous estimate, partly the new sample.
            AverageTtlMs = AverageTtlMs == 0 ? average : (AverageTtlMs / 50 * 49) + (average / 50);
        }
        if (_volatileCount == 0)
            AverageTtlMs = 0;
        return (sampled, expired);
    }

    /// <summary>Background housekeeping from the shard cron: rehash and shrink, forget clients that stopped waiting.</summary>
    public void Housekeep(int rehashMilliseconds)
    {
        Blocked?.Purge();
        Watched?.Purge();
        _keys.ShrinkIfSparse();
        if (_keys.IsRehashing)
            _keys.RehashFor(rehashMilliseconds);
        if (_volatileCapacity > 64 && _volatileCount < _volatileCapacity / 8)
        {
            int capacity = Math.Max(16, _volatileCapacity / 2);
            _volatile = (VolatileKey*)TrackedAllocator.Realloc((byte*)_volatile, (nuint)(capacity * sizeof(VolatileKey)));
            _volatileCapacity = capacity;
        }
    }

    /// <summary>Removes every key and returns them as one chain for the caller to free (now or in the background).</summary>
    public Entry* DetachAll()
    {
        Watched?.TouchAll();
        TrackedAllocator.Free((byte*)_volatile);
        _volatile = null;
        _volatileCount = _volatileCapacity = 0;
        AverageTtlMs = 0;
        return _keys.DetachAll();
    }

    public void Clear() => EntryStore.FreeChain(DetachAll());

    public void Dispose() => Clear();
}
