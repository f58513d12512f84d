using System.Collections.Concurrent;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Engine;

/// <summary>
/// A partition of the keyspace: its own databases and, in executor mode, its own thread that runs
/// every piece of work touching them, in arrival order. The data needs no locks because only that
/// thread touches it; work arrives through a lock-free queue and the thread sleeps when idle.
/// In inline mode the same work runs on the caller's thread under the shard's lock instead.
/// </summary>
public sealed class Shard : IDisposable
{
    private readonly ConcurrentQueue<ShardWork> _queue = new();
    private readonly ManualResetEventSlim _wake = new(false, spinCount: 0);
    private readonly Lock _inlineGate = new();
    private readonly Thread? _thread;
    private readonly ShardCron _cron;
    private volatile bool _stopping;
    private int _sleeping;
    private long _nextCronTick;

    public Shard(int index, int databases, ExecutionMode mode, ShardCron cron)
    {
        Index = index;
        Mode = mode;
        Databases = new Database[databases];
        for (int i = 0; i < databases; i++)
            Databases[i] = new Database(i);
        _cron = cron;
        Random = new Random(unchecked(index * 7919 + Environment.TickCount));
        if (mode == ExecutionMode.Executor)
        {
            _thread = new Thread(Run) { IsBackground = true, Name = $"shard executor {index}" };
            _thread.Start();
        }
    }

    public int Index { get; }
    public ExecutionMode Mode { get; }
    public Database[] Databases { get; }
    /// <summary>This shard's eviction pool and counters (maxmemory), used by whoever holds the shard.</summary>
    public ShardEviction Eviction { get; } = new();
    internal ShardCron Cron => _cron;
    /// <summary>Randomness for sampling (expiry, RANDOMKEY, LFU); used only by whoever holds the shard.</summary>
    public Random Random { get; }

    /// <summary>
    /// Queues work for the executor thread (executor mode only). The queue needs no bound of its
    /// own: every poster waits for its item to run before it posts another (a connection awaits its
    /// batch or park, Keyspace.HoldAll waits for each hold), so it never holds more than one item per
    /// connection, at most maxclients, plus one per concurrent HoldAll; and a batch is bounded too
    /// (1024 commands, the request arena's size).
    /// </summary>
    public void Post(ShardWork work)
    {
        _queue.Enqueue(work);
        if (Volatile.Read(ref _sleeping) == 1)
            _wake.Set();
    }

    /// <summary>Runs work now under the shard's lock (inline mode only).</summary>
    public void RunInline(ShardWork work)
    {
        lock (_inlineGate)
        {
            work.Execute(this);
        }
    }

    /// <summary>
    /// Runs work under the shard's lock if it can be had within <paramref name="waitMillis"/>
    /// (spinning first): false when another thread holds the shard longer than that.
    /// </summary>
    public bool TryRunInline(ShardWork work, int waitMillis)
    {
        if (!_inlineGate.TryEnter(waitMillis))
            return false;
        try
        {
            work.Execute(this);
        }
        finally
        {
            _inlineGate.Exit();
        }
        return true;
    }

    /// <summary>Takes the shard's lock for a coordinated multi-shard command (inline mode only).</summary>
    public void EnterInline() => _inlineGate.Enter();
    public bool TryEnterInline(int waitMillis) => _inlineGate.TryEnter(waitMillis);
    public void ExitInline() => _inlineGate.Exit();

    /// <summary>Inline mode has no thread of its own: the server's timer calls this.</summary>
    public void RunCronInline()
    {
        lock (_inlineGate)
            _cron.Run(this);
    }

    /// <summary>One background eviction pass under the shard's lock (inline mode: the cron thread calls this).</summary>
    public EvictionResult RunEvictionInline()
    {
        lock (_inlineGate)
            return _cron.EvictInBackground(this);
    }

    private void Run()
    {
        TrackedAllocator.NameCurrentThread($"shard executor {Index}");
        _nextCronTick = Environment.TickCount64 + _cron.PeriodMs;
        while (!_stopping)
        {
            while (_queue.TryDequeue(out var work))
            {
                work.Execute(this);
                    if (Environment.TickCount64 >= _nextCronTick)
                    RunCron();
            }
            if (Environment.TickCount64 >= _nextCronTick)
                RunCron();
            Sleep();
        }
    }

    private void RunCron()
    {
        _cron.Run(this);
        _nextCronTick = Environment.TickCount64 + _cron.PeriodMs;
    }

    private void Sleep()
    {
        Interlocked.Exchange(ref _sleeping, 1);
        if (_queue.IsEmpty && !_stopping)
        {
            int timeout = (int)Math.Max(1, _nextCronTick - Environment.TickCount64);
            _wake.Wait(timeout);
        }
        _wake.Reset();
        Volatile.Write(ref _sleeping, 0);
    }

    public void Dispose()
    {
        _stopping = true;
        _wake.Set();
        _thread?.Join();
        foreach (var db in Databases)
            db.Dispose();
    }
}
