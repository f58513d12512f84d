using System.Runtime.CompilerServices;

namespace Diagnostics.Server.Engine;

/// <summary>
/// All shards, and the rule that maps a key to its shard. A key's shard never changes for the
/// life of the process; databases exist in every shard, so SELECT and MOVE stay within one.
/// </summary>
public sealed class Keyspace : IDisposable
{
    private readonly Shard[] _shards;

    public Keyspace(int shardCount, int databases, ExecutionMode mode, int hz, bool runCron = true)
    {
        DatabaseCount = databases;
        Mode = mode;
        Cron = new ShardCron(hz);
        Eviction = new Eviction(this);
        Cron.Eviction = Eviction;
        _shards = new Shard[shardCount];
        for (int i = 0; i < shardCount; i++)
            _shards[i] = new Shard(i, databases, mode, Cron, Watches);
        Gate = new KeyspaceGate(_shards);
        if (mode == ExecutionMode.Inline && runCron)
        {
            // Inline shards have no thread of their own; one timer thread runs their cron.
            _inlineCron = new Thread(RunInlineCron) { IsBackground = true, Name = "shard cron" };
            _inlineCron.Start();
        }
    }

    private readonly Thread? _inlineCron;
    private readonly ManualResetEventSlim _inlineCronWake = new(false, spinCount: 0);
    private volatile bool _stopping;
    private int _inlineEvictionRequested;

    /// <summary>
    /// The inline shards' timer: every cron period it runs each shard's cron; in between, when
    /// eviction is requested, it runs background eviction passes over the shards in turn (each
    /// under that shard's lock, time-limited, so clients get the lock between passes) until
    /// memory is under maxmemory or no shard has anything left to evict.
    /// </summary>
    private void RunInlineCron()
    {
        Memory.TrackedAllocator.NameCurrentThread("shard cron");
        long nextCron = Environment.TickCount64 + Cron.PeriodMs;
        while (!_stopping)
        {
            if (Volatile.Read(ref _inlineEvictionRequested) == 0)
                _inlineCronWake.Wait((int)Math.Max(1, nextCron - Environment.TickCount64));
            _inlineCronWake.Reset();
            if (_stopping)
                return;
            if (Environment.TickCount64 >= nextCron)
            {
                foreach (var shard in _shards)
                    shard.RunCronInline();
                nextCron = Environment.TickCount64 + Cron.PeriodMs;
            }
            if (Interlocked.Exchange(ref _inlineEvictionRequested, 0) == 1)
                RunInlineEvictionRound();
        }
    }

    private void RunInlineEvictionRound()
    {
        bool progress = false;
        foreach (var shard in _shards)
        {
            if (_stopping || !Eviction.IsOverLimit)
                return;
            progress |= shard.RunEvictionInline() != EvictionResult.Fail;
        }
        if (progress && Eviction.IsOverLimit)
            Volatile.Write(ref _inlineEvictionRequested, 1);
    }

    /// <summary>
    /// Starts background eviction over every shard (Redis's startEvictionTimeProc): the inline
    /// timer thread runs passes at once, or each executor gets a pass queued behind its work.
    /// </summary>
    internal void RequestBackgroundEviction()
    {
        if (Mode == ExecutionMode.Inline)
        {
            if (_inlineCron is null)
                return;
            if (Interlocked.Exchange(ref _inlineEvictionRequested, 1) == 0)
                _inlineCronWake.Set();
            return;
        }
        foreach (var shard in _shards)
            if (shard.Eviction.TryMarkQueued())
                shard.Post(shard.Eviction.Work);
    }

    public Eviction Eviction { get; }

    /// <summary>
    /// CLIENT PAUSE (WRITE or ALL): active expiry and eviction stand still, as Redis pauses its
    /// expire and evict actions, so nothing changes the dataset until the pause ends.
    /// </summary>
    public bool WritesPaused
    {
        get => Cron.WritesPaused;
        set
        {
            Cron.WritesPaused = value;
            Eviction.WritesPaused = value;
        }
    }

    public int DatabaseCount { get; }
    public ExecutionMode Mode { get; }

    /// <summary>Commands waiting on threads for shards others hold, and the limit past which they are refused.</summary>
    public ShardWaitLimit Waits { get; } = new();
    public ShardCron Cron { get; }

    /// <summary>WATCH registrations in this keyspace: none, and writes skip looking for watchers.</summary>
    public Transactions.WatchRegistrations Watches { get; } = new();
    public Shard[] Shards => _shards;

    /// <summary>Inline mode: where whole-keyspace commands from the request path run, one holder at a time.</summary>
    public KeyspaceGate Gate { get; }

    /// <summary>Keys expired (lazily or by the cron) in every shard and database since start or CONFIG RESETSTAT.</summary>
    public long ExpiredKeys
    {
        get
        {
            long expired = 0;
            foreach (var shard in _shards)
                foreach (var db in shard.Databases)
                    expired += db.ExpiredKeys;
            return expired;
        }
    }
    public int ShardCount => _shards.Length;

    /// <summary>The hash every table and the shard router use; seeded per process against collision flooding.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static uint Hash(ReadOnlySpan<byte> key)
    {
        var hasher = new HashCode();
        hasher.AddBytes(key);
        return (uint)hasher.ToHashCode();
    }

    /// <summary>High bits pick the shard, low bits the bucket, so the two stay independent.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int ShardIndexOf(uint hash) => (int)(((ulong)hash * (uint)_shards.Length) >> 32);

    public Shard ShardOf(uint hash) => _shards[ShardIndexOf(hash)];

    /// <summary>
    /// Runs <paramref name="action"/> on the calling thread with every shard held: their locks
    /// taken in ascending order (inline mode), or their executors parked (executor mode). For
    /// whole-keyspace work off the request path; the caller must not already hold a shard.
    /// </summary>
    public void RunExclusive(Action action)
    {
        if (Mode == ExecutionMode.Inline)
        {
            int entered = 0;
            // Marked as waiting unless the thread runs a command (CONFIG SET appendonly), which says more.
            var slot = Diagnostics.Threads.ThreadCounters.Current.InFlight;
            bool marked = slot.IsIdle;
            try
            {
                if (marked)
                    slot.Begin(Contracts.InFlightWork.WaitingForShards);
                for (; entered < _shards.Length; entered++)
                    _shards[entered].EnterInline();
                if (marked)
                    slot.End();
                action();
            }
            finally
            {
                while (entered > 0)
                    _shards[--entered].ExitInline();
            }
            return;
        }
        var holds = new HoldWork[_shards.Length];
        try
        {
            for (int i = 0; i < _shards.Length; i++)
            {
                holds[i] = new HoldWork();
                _shards[i].Post(holds[i]);
                holds[i].WaitUntilHeld();
            }
            action();
        }
        finally
        {
            foreach (var hold in holds)
            {
                hold?.Release();
            }
        }
    }

    /// <summary>
    /// As <see cref="RunExclusive"/>, but gives up when the shards are not all held within
    /// <paramref name="waitMillis"/> (a long command holds them): for diagnostics that must answer
    /// while the server is in trouble, with what they knew before. Executor mode waits as
    /// <see cref="RunExclusive"/> does.
    /// </summary>
    public bool TryRunExclusive(int waitMillis, Action action)
    {
        if (Mode != ExecutionMode.Inline)
        {
            RunExclusive(action);
            return true;
        }
        long deadline = Environment.TickCount64 + waitMillis;
        int entered = 0;
        try
        {
            for (; entered < _shards.Length; entered++)
                if (!_shards[entered].TryEnterInline((int)Math.Max(0, deadline - Environment.TickCount64)))
                    return false;
            action();
            return true;
        }
        finally
        {
            while (entered > 0)
                _shards[--entered].ExitInline();
        }
    }

    /// <summary>Empties every database of every shard (DEBUG RELOAD, before loading back). Caller holds all shards.</summary>
    public void ClearAll()
    {
        foreach (var shard in _shards)
            foreach (var db in shard.Databases)
                db.Clear();
    }

    public long KeyCount(int db)
    {
        long total = 0;
        foreach (var shard in _shards)
            total += shard.Databases[db].Count;
        return total;
    }

    public void Dispose()
    {
        _stopping = true;
        _inlineCronWake.Set();
        _inlineCron?.Join();
        foreach (var shard in _shards)
            shard.Dispose();
    }
}
