using System.Diagnostics;
using System.Runtime.CompilerServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Engine;

/// <summary>How an eviction pass ended (Redis's EVICT_OK, EVICT_RUNNING, EVICT_FAIL).</summary>
public enum EvictionResult
{
    /// <summary>Memory is under maxmemory, or the pass freed what it set out to free.</summary>
    Ok,
    /// <summary>The time limit ended the pass with memory still over: more passes follow in the background.</summary>
    Running,
    /// <summary>Nothing the policy may evict is left in the shard (or the policy is noeviction).</summary>
    Fail,
}

/// <summary>
/// maxmemory and its policy for one keyspace. The limit is global (the tracked allocator's total
/// less what Redis also leaves out: the AOF buffers, and here the AOF rewrite's private copy),
/// but data may only be touched by whoever holds its shard, so eviction is shared out: a thread
/// that holds a shard evicts from that shard, before a command (as Redis's processCommand), in
/// the shard's cron and in background passes started while memory stays over (Redis's
/// evictionTimeProc).
/// Each pass recomputes the amount over the limit, so every shard that runs work while over
/// helps until the total is under. Settings are plain fields read without locks.
/// </summary>
public sealed unsafe class Eviction
{
    private readonly Keyspace _keyspace;
    private long _maxMemory;
    private EvictionPolicy _policy;
    private int _samples = 5;
    private int _tenacity;
    private long _timeLimitTicks;
    private int _policyGeneration;
    private long _exceededSinceTicks;
    private long _exceededTotalTicks;
    private long _lastFailRequestTick;
    private int _nextOtherShard;

    /// <summary>Set while CLIENT PAUSE holds writes: <see cref="Perform"/> evicts nothing.</summary>
    internal volatile bool WritesPaused;

    public Eviction(Keyspace keyspace)
    {
        _keyspace = keyspace;
        Tenacity = 10;
    }

    /// <summary>maxmemory in bytes; 0 means no limit.</summary>
    public long MaxMemory
    {
        get => _maxMemory;
        set
        {
            Volatile.Write(ref _maxMemory, value);
            // Redis starts evicting at once when the limit drops below the memory in use.
            if (IsOverLimit)
                RequestBackground();
        }
    }

    public EvictionPolicy Policy
    {
        get => _policy;
        set
        {
            if (_policy == value)
                return;
            _policy = value;
            Interlocked.Increment(ref _policyGeneration); // pools drop candidates scored the old way
            if (IsOverLimit)
                RequestBackground();
        }
    }

    /// <summary>maxmemory-samples: keys sampled per database per selection.</summary>
    public int Samples
    {
        get => _samples;
        set => _samples = Math.Max(1, value);
    }

    /// <summary>
    /// maxmemory-eviction-tenacity, 0..100: how long one pass may run before it hands the rest to
    /// the background (Redis's evictionTimeLimitUs: 50 us per step up to 10, then +15% a step, 100 = no limit).
    /// </summary>
    public int Tenacity
    {
        get => _tenacity;
        set
        {
            _tenacity = Math.Clamp(value, 0, 100);
            long micros = TimeLimitMicros(_tenacity);
            _timeLimitTicks = micros == long.MaxValue ? long.MaxValue : micros * Stopwatch.Frequency / 1_000_000;
        }
    }

    /// <summary>Memory left out of the count, as Redis's freeMemoryGetNotCountedMemory: the AOF buffers and rewrite copy.</summary>
    public Func<long> NotCountedMemory { get; set; } = static () => 0;

    /// <summary>The memory compared with maxmemory: the tracked total less <see cref="NotCountedMemory"/>.</summary>
    public long UsedMemory => Math.Max(0, TrackedAllocator.TotalBytes - NotCountedMemory());

    public bool IsOverLimit
    {
        get
        {
            long max = _maxMemory;
            if (max == 0)
                return false;
            if (TrackedAllocator.TotalBytesNear(max) <= max)
                return false;
            long notCounted = NotCountedMemory();
            return TrackedAllocator.TotalBytesNear(max + notCounted) - notCounted > max;
        }
    }

    /// <summary>
    /// <see cref="IsOverLimit"/>, also ending the current over-limit stretch when under: the check
    /// before every command while maxmemory is set, inlined to a few field reads when well under
    /// (the published total, the caller's unpublished share, the record count).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool NeedsEviction()
    {
        long max = _maxMemory;
        if (max != 0 && TrackedAllocator.TotalBytesNear(max) > max)
            return IsOverLimit || EndExceeded();
        return _exceededSinceTicks != 0 && EndExceeded();
    }

    /// <summary>Keys evicted since start, all shards (INFO evicted_keys).</summary>
    public long EvictedKeys
    {
        get
        {
            long total = 0;
            foreach (var shard in _keyspace.Shards)
                total += shard.Eviction.EvictedKeys;
            return total;
        }
    }

    /// <summary>CONFIG RESETSTAT: evicted keys and over-limit time start again from 0. The caller holds every shard.</summary>
    public void ResetStatistics()
    {
        foreach (var shard in _keyspace.Shards)
            shard.Eviction.ResetCount();
        Volatile.Write(ref _exceededTotalTicks, 0);
        if (Volatile.Read(ref _exceededSinceTicks) != 0)
            Volatile.Write(ref _exceededSinceTicks, Stopwatch.GetTimestamp());
    }

    /// <summary>Milliseconds memory has been over maxmemory in all, the current stretch included (total_eviction_exceeded_time).</summary>
    public long TotalExceededMilliseconds => TicksToMilliseconds(Volatile.Read(ref _exceededTotalTicks)) + CurrentExceededMilliseconds;

    /// <summary>Milliseconds since memory last rose over maxmemory, 0 when under (current_eviction_exceeded_time).</summary>
    public long CurrentExceededMilliseconds
    {
        get
        {
            long since = Volatile.Read(ref _exceededSinceTicks);
            return since == 0 ? 0 : TicksToMilliseconds(Stopwatch.GetTimestamp() - since);
        }
    }

    /// <summary>
    /// Frees memory from <paramref name="shard"/>, which the caller holds, while the total is over
    /// maxmemory (Redis's performEvictions). Before a command the pass aims at the whole excess,
    /// as Redis frees it before running the command, but stops once it has given its even share
    /// if its shard has come to hold clearly fewer keys than the average shard: a sudden large
    /// excess (a client's buffer grew) is then not paid for by one shard alone, whose recent
    /// keys would go before the others' old ones; the caller starts background passes for the
    /// rest. A background pass aims at its even share, so passes over all shards spread the
    /// eviction evenly. Either kind also stops at the time limit set by the tenacity.
    /// </summary>
    public EvictionResult Perform(Shard shard, bool background = false)
    {
        long max = _maxMemory;
        // Paused writes (CLIENT PAUSE): nothing is evicted and nothing refused, as in Redis.
        if (max == 0 || WritesPaused)
            return EvictionResult.Ok;
        long total = TrackedAllocator.TotalBytesNear(max);
        if (total <= max)
        {
            EndExceeded();
            return EvictionResult.Ok;
        }
        long notCounted = NotCountedMemory();
        if (notCounted != 0)
            total = TrackedAllocator.TotalBytesNear(max + notCounted); // exact where the comparison below is close
        if (total - notCounted <= max)
        {
            EndExceeded();
            return EvictionResult.Ok;
        }
        BeginExceeded();
        var policy = _policy;
        if (policy == EvictionPolicy.NoEviction)
            return EvictionResult.Fail;

        long excess = total - notCounted - max;
        long share = Math.Max(1, excess / _keyspace.ShardCount);
        long toFree = background ? share : excess;
        bool allKeys = (policy & EvictionPolicy.AllKeys) != 0;
        long started = Stopwatch.GetTimestamp();
        var state = shard.Eviction;
        int samples = _samples, generation = Volatile.Read(ref _policyGeneration);
        long freed = 0;
        int evicted = 0;
        bool pastShare = false;
        while (freed < toFree)
        {
            Entry** slot = state.SelectVictim(shard, policy, samples, generation, out Database? db);
            if (slot == null)
                return EvictionResult.Fail; // as Redis's cant_free: the command is refused if memory is still over
            freed += db!.Evict(slot);
            state.CountEviction();
            evicted++;
            // Its share given, the shard goes on only while it is not poorer than the others
            // (checked once the share is reached, then every 16 keys).
            if (freed >= share && freed < toFree && (!pastShare || (evicted & 15) == 0))
            {
                pastShare = true;
                if (HoldsFewerKeysThanAverage(shard, allKeys))
                    return EvictionResult.Ok;
            }
            // As Redis, look up from the work every 16 keys: other shards may have freed the
            // rest, or the time is up and the background carries on.
            if ((evicted & 15) == 0)
            {
                if (TrackedAllocator.TotalBytesNear(max + notCounted) - notCounted <= max)
                    break;
                if (Stopwatch.GetTimestamp() - started > _timeLimitTicks)
                    return EvictionResult.Running;
            }
        }
        return EvictionResult.Ok;
    }

    /// <summary>
    /// After the shards a command holds had nothing left to evict while memory is still over:
    /// evicts from the other shards, as Redis refuses a write only when nothing in its whole
    /// keyspace can go. Inline mode takes each other shard with a try-acquire, never a wait, so a
    /// thread that holds shards cannot deadlock with one that holds the shard it wants; a busy
    /// shard is skipped. Executor mode cannot touch another executor's shard: it counts (racily)
    /// what the others hold and leaves the evicting to their background passes. Fail only when no
    /// shard holds a key the policy may evict; Running when one does but could not be reached now
    /// (the command goes ahead, the background passes catch up).
    /// </summary>
    public EvictionResult PerformInOtherShards()
    {
        if (WritesPaused)
            return EvictionResult.Ok;
        if (_policy == EvictionPolicy.NoEviction)
            return EvictionResult.Fail;
        var shards = _keyspace.Shards;
        if (_keyspace.Mode == ExecutionMode.Inline)
        {
            // Start where the last caller stopped, so a stream of such writes spreads over the shards.
            int start = (int)((uint)Interlocked.Increment(ref _nextOtherShard) % (uint)shards.Length);
            var result = EvictionResult.Fail;
            for (int i = 0; i < shards.Length; i++)
            {
                var shard = shards[(start + i) % shards.Length];
                if (shard.IsHeldByCurrentThread || !shard.TryEnterInline(0))
                    continue; // the command's own (already tried), or busy: its holder evicts before its own commands
                try
                {
                    result = (EvictionResult)Math.Min((int)result, (int)shard.Cron.EvictForCommandElsewhere(shard));
                }
                finally
                {
                    shard.ExitInline();
                }
                if (!IsOverLimit)
                    return EvictionResult.Ok;
            }
            if (result != EvictionResult.Fail)
                return result;
        }
        return HasEvictableKeys() ? EvictionResult.Running : EvictionResult.Fail;
    }

    /// <summary>True when some shard holds a key the policy may evict (counts read without the shards' locks).</summary>
    private bool HasEvictableKeys()
    {
        bool allKeys = (_policy & EvictionPolicy.AllKeys) != 0;
        foreach (var shard in _keyspace.Shards)
            foreach (var db in shard.Databases)
                if ((allKeys ? db.Count : db.ExpiresCount) > 0)
                    return true;
        return false;
    }

    /// <summary>
    /// True when <paramref name="shard"/> holds under 90% of the average shard's keys that the
    /// policy may evict (other shards' counts read without their locks: an estimate is enough).
    /// </summary>
    private bool HoldsFewerKeysThanAverage(Shard shard, bool allKeys)
    {
        long mine = 0, all = 0;
        foreach (var other in _keyspace.Shards)
        {
            long count = 0;
            foreach (var db in other.Databases)
                count += allKeys ? db.Count : db.ExpiresCount;
            all += count;
            if (other == shard)
                mine = count;
        }
        return mine * _keyspace.ShardCount * 10 < all * 9;
    }

    /// <summary>Starts background passes over every shard (no-op under noeviction, where nothing can go).</summary>
    public void RequestBackground()
    {
        if (_policy != EvictionPolicy.NoEviction && _maxMemory != 0)
            _keyspace.RequestBackgroundEviction();
    }

    /// <summary>
    /// After a command's shard had nothing left to evict, the other shards may still have: start
    /// them, at most once a millisecond, so a flood of refused writes does not flood the shards.
    /// </summary>
    public void RequestBackgroundAfterFail()
    {
        long tick = Environment.TickCount64;
        if (Volatile.Read(ref _lastFailRequestTick) == tick)
            return;
        Volatile.Write(ref _lastFailRequestTick, tick);
        RequestBackground();
    }

    private void BeginExceeded()
    {
        if (Volatile.Read(ref _exceededSinceTicks) == 0)
            Interlocked.CompareExchange(ref _exceededSinceTicks, Stopwatch.GetTimestamp(), 0);
    }

    /// <summary>Closes the over-limit stretch, if one is open; returns false so callers can chain it.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool EndExceeded()
    {
        if (Volatile.Read(ref _exceededSinceTicks) == 0)
            return false;
        long since = Interlocked.Exchange(ref _exceededSinceTicks, 0);
        if (since != 0)
            Interlocked.Add(ref _exceededTotalTicks, Stopwatch.GetTimestamp() - since);
        return false;
    }

    private static long TimeLimitMicros(int tenacity)
    {
        if (tenacity <= 10)
            return 50L * tenacity; // a linear progression from 0 to 500 us
        if (tenacity < 100)
            return (long)(500.0 * Math.Pow(1.15, tenacity - 10.0)); // about 2 minutes at 99
        return long.MaxValue;
    }

    private static long TicksToMilliseconds(long ticks) => ticks * 1000 / Stopwatch.Frequency;
}
