namespace Diagnostics.Server.Engine;

/// <summary>
/// One shard's eviction state, used only by whoever holds the shard: Redis's eviction pool (the
/// 16 best candidates met so far, kept across calls so each sample improves on the last ones),
/// the round-robin database cursor of the random policies, and the count of keys evicted.
/// </summary>
public sealed unsafe class ShardEviction
{
    /// <summary>Redis's EVPOOL_SIZE.</summary>
    public const int PoolSize = 16;
    /// <summary>Redis's EVPOOL_CACHED_SDS_SIZE: key copies up to this size reuse their buffer.</summary>
    private const int CachedKeyBytes = 255;

    private Candidate[]? _pool;
    private int _poolGeneration = -1;
    private int _nextDatabase;
    private long _evictedKeys;
    private int _backgroundQueued;

    internal ShardEviction() => Work = new EvictionWork(this);

    /// <summary>Keys this shard evicted since start (INFO stats evicted_keys is their sum).</summary>
    public long EvictedKeys => Volatile.Read(ref _evictedKeys);

    /// <summary>The background pass queued to the shard's executor (executor mode only).</summary>
    internal EvictionWork Work { get; }

    private sealed class Candidate
    {
        public long Score;
        public int Database;
        public uint Hash;
        public int KeyLength;
        public byte[] Key = new byte[CachedKeyBytes];
        public bool Used;

        public ReadOnlySpan<byte> KeySpan => Key.AsSpan(0, KeyLength);
    }

    internal void CountEviction() => Volatile.Write(ref _evictedKeys, _evictedKeys + 1); // one writer: the shard's holder

    /// <summary>CONFIG RESETSTAT, by a caller that holds the shard.</summary>
    internal void ResetCount() => Volatile.Write(ref _evictedKeys, 0);

    /// <summary>Marks the background pass queued; false when it already is.</summary>
    internal bool TryMarkQueued() => Interlocked.Exchange(ref _backgroundQueued, 1) == 0;

    internal void ClearQueued() => Volatile.Write(ref _backgroundQueued, 0);

    /// <summary>
    /// The slot of the key to evict next under <paramref name="policy"/>, in database
    /// <paramref name="database"/>, or null when the shard holds nothing the policy may evict.
    /// </summary>
    internal Entry** SelectVictim(Shard shard, EvictionPolicy policy, int samples, int policyGeneration, out Database? database)
    {
        return policy.UsesPool()
            ? SelectFromPool(shard, policy, samples, policyGeneration, out database)
            : SelectRandom(shard, (policy & EvictionPolicy.AllKeys) != 0, out database);
    }

    /// <summary>
    /// Redis's LRU/LFU/TTL selection: sample every database into the pool, then take the best
    /// candidate that still exists (a key deleted since it was sampled is a ghost and skipped).
    /// </summary>
    private Entry** SelectFromPool(Shard shard, EvictionPolicy policy, int samples, int policyGeneration, out Database? database)
    {
        var pool = _pool ??= CreatePool();
        if (_poolGeneration != policyGeneration)
        {
            // Scores of another policy are in other units; start over.
            foreach (var candidate in pool)
                candidate.Used = false;
            _poolGeneration = policyGeneration;
        }
        bool allKeys = (policy & EvictionPolicy.AllKeys) != 0;
        var databases = shard.Databases;
        while (true)
        {
            long keys = 0;
            for (int i = 0; i < databases.Length; i++)
            {
                var db = databases[i];
                long count = allKeys ? db.Count : db.ExpiresCount;
                if (count == 0)
                    continue;
                Populate(pool, db, i, allKeys, policy, samples, shard.Random);
                keys += count;
            }
            if (keys == 0)
            {
                database = null;
                return null;
            }
            for (int k = PoolSize - 1; k >= 0; k--)
            {
                var candidate = pool[k];
                if (!candidate.Used)
                    continue;
                candidate.Used = false;
                if (candidate.Database >= databases.Length)
                    continue;
                var db = databases[candidate.Database];
                Entry** slot = db.Keys.FindSlot(candidate.KeySpan, candidate.Hash);
                if (slot != null && (allKeys || (*slot)->HasExpiry))
                {
                    database = db;
                    return slot;
                }
            }
            // Every candidate was a ghost: the pool is empty now, so the next round fills it.
        }
    }

    /// <summary>Redis's evictionPoolPopulate: sample keys and keep the best in the pool, sorted by ascending score.</summary>
    private static void Populate(Candidate[] pool, Database db, int dbIndex, bool allKeys, EvictionPolicy policy, int samples, Random random)
    {
        for (int s = 0; s < samples; s++)
        {
            Entry* e = allKeys ? db.Keys.RandomEntry(random) : db.RandomVolatile(random);
            if (e == null)
                return;
            long score;
            if ((policy & EvictionPolicy.Lru) != 0)
                score = LruClock.IdleMilliseconds(e->AccessClock);
            else if ((policy & EvictionPolicy.Lfu) != 0)
                score = 255 - LfuCounter.Decayed(e->Frequency, e->AccessClock);
            else
                score = long.MaxValue - db.ExpireAtOf(e); // nearer expiry scores higher
            Insert(pool, score, dbIndex, e);
        }
    }

    private static void Insert(Candidate[] pool, long score, int dbIndex, Entry* e)
    {
        ReadOnlySpan<byte> key = Entry.KeyOf(e);
        uint hash = Keyspace.Hash(key);
        // A key sampled again is already in: once evicted its copy would only be a ghost.
        foreach (var candidate in pool)
            if (candidate.Used && candidate.Hash == hash && candidate.Database == dbIndex && candidate.KeySpan.SequenceEqual(key))
                return;

        int k = 0;
        while (k < PoolSize && pool[k].Used && pool[k].Score < score)
            k++;
        Candidate target;
        if (k == 0 && pool[PoolSize - 1].Used)
            return; // worse than every candidate of a full pool
        if (k < PoolSize && !pool[k].Used)
        {
            target = pool[k];
        }
        else if (!pool[PoolSize - 1].Used)
        {
            // Room on the right: shift [k, end) one place right, reusing the free last slot.
            target = pool[PoolSize - 1];
            Array.Copy(pool, k, pool, k + 1, PoolSize - k - 1);
            pool[k] = target;
        }
        else
        {
            // Full: drop the worst (leftmost) and shift the ones below the insertion point left.
            k--;
            target = pool[0];
            Array.Copy(pool, 1, pool, 0, k);
            pool[k] = target;
        }
        if (target.Key.Length < key.Length)
            target.Key = new byte[key.Length]; // keys longer than Redis's cached size: grown once, then reused
        key.CopyTo(target.Key);
        target.KeyLength = key.Length;
        target.Hash = hash;
        target.Database = dbIndex;
        target.Score = score;
        target.Used = true;
    }

    /// <summary>allkeys-random and volatile-random: a random key of the next database that has one, in turn.</summary>
    private Entry** SelectRandom(Shard shard, bool allKeys, out Database? database)
    {
        var databases = shard.Databases;
        for (int i = 0; i < databases.Length; i++)
        {
            _nextDatabase = (_nextDatabase + 1) % databases.Length;
            var db = databases[_nextDatabase];
            Entry* e = allKeys ? db.Keys.RandomEntry(shard.Random) : db.RandomVolatile(shard.Random);
            if (e == null)
                continue;
            database = db;
            return db.Keys.FindSlot(Entry.KeyOf(e), Keyspace.Hash(Entry.KeyOf(e)));
        }
        database = null;
        return null;
    }

    private static Candidate[] CreatePool()
    {
        var pool = new Candidate[PoolSize];
        for (int i = 0; i < pool.Length; i++)
            pool[i] = new Candidate();
        return pool;
    }
}
