using System.Collections.Concurrent;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Engine;

/// <summary>
/// A partition of the keyspace: its own databases and, in executor mode, its own thread that runs
/// every piece of work touching them, in arrival order. The data needs no locks because only that
/// thread touches it; work arrives through a lock-free queue and the thread sleeps when idle.
/// In inline mode the same work runs on the caller's thread under the shard's lock instead; a
/// caller that finds the lock taken hands its work to the holder rather than waiting for it
/// (flat combining, see <see cref="RunOrHandOff"/>).
/// </summary>
public sealed class Shard : IThreadPoolWorkItem, IDisposable
{
    private readonly ConcurrentQueue<ShardWork> _queue = new();
    private readonly HandOffQueue _handOffs;
    private readonly ManualResetEventSlim _wake = new(false, spinCount: 0);
    private readonly Lock _inlineGate = new();
    // Made once: a hand-off turn lets the shard go through it.
    private readonly Action _exitInlineGate;
    private readonly Thread? _thread;
    private readonly ShardCron _cron;
    private volatile bool _stopping;
    private int _sleeping;
    private long _nextCronTick;
    // A snapshot's cut armed this shard: the next holder copies it before touching anything.
    private ShardCapture? _capture;

    public Shard(int index, int databases, ExecutionMode mode, ShardCron cron, Transactions.WatchRegistrations watchRegistrations)
    {
        Index = index;
        Mode = mode;
        _handOffs = new HandOffQueue(this);
        _exitInlineGate = _inlineGate.Exit;
        Databases = new Database[databases];
        for (int i = 0; i < databases; i++)
            Databases[i] = new Database(i, this, watchRegistrations);
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

    /// <summary>
    /// The effects scope of whoever holds this shard, while it runs a command (or a cron pass)
    /// here: attached after taking the shard, detached before letting it go; null while nothing
    /// is attached (loading, a rewrite's copy), when the data's deep effects are not reported.
    /// See <see cref="CommandEffects"/> for why the shard carries it.
    /// </summary>
    public CommandEffects? Effects { get; internal set; }

    /// <summary>The scope of this shard's own cron passes (expiry, eviction), reused pass after pass.</summary>
    internal CommandEffects? CronEffects { get; set; }
    /// <summary>Where the cron's deletions are encoded for the AOF, kept between passes.</summary>
    internal ICommandPropagation? CronLog { get; set; }
    /// <summary>This shard's eviction pool and counters (maxmemory), used by whoever holds the shard.</summary>
    public ShardEviction Eviction { get; } = new();

    /// <summary>CLIENT TRACKING: where expiries and evictions in this shard report deleted keys.</summary>
    internal Tracking.KeyTracking? Tracking { get; set; }

    /// <summary>The keys tracking clients read from this shard (null until one does); only the holder touches it.</summary>
    internal Tracking.TrackedKeys? TrackedKeys { get; set; }
    internal ShardCron Cron => _cron;
    /// <summary>
    /// DUMP's serializer, kept between calls so its buffer and LZF table (256 KB, which Redis keeps
    /// on its stack) are not allocated and cleared for every key; used only by whoever holds the shard.
    /// </summary>
    internal Persistence.RdbWriter? DumpWriter { get; set; }

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

    /// <summary>
    /// Inline mode: runs <paramref name="work"/> here and now when the shard is free (true).
    /// When another thread holds it past a short spin, hands the work over and returns false: the
    /// holder runs it before letting the shard go and then calls <see cref="ShardWork.HandOffCompleted"/>.
    /// So a hot shard is worked by one thread at a time without the others blocking or being
    /// woken for it: on a single hot key at pipeline 30, contended locks cost context switches in
    /// the thousands per second. The caller must hold no shard.
    /// </summary>
    public bool RunOrHandOff(ShardWork work)
    {
        if (!_inlineGate.TryEnter() && !ShortSpin.TryEnter(_inlineGate))
        {
            _handOffs.Enqueue(work);
            // The holder may have looked for handed-off work before this one arrived: if it has
            // let go since, the work is this thread's to run after all.
            TakeOverHandOffs();
            return false;
        }
        try
        {
            CaptureIfArmed();
            work.Execute(this);
        }
        finally
        {
            // Even when this work threw: what was handed over must run and its owners wake.
            RunHandOffsAndLetGo();
            TakeOverHandOffs();
        }
        return true;
    }

    /// <summary>Holding the shard: runs what was handed over, lets the shard go, wakes the owners.</summary>
    private void RunHandOffsAndLetGo() => _handOffs.RunTurnThenLetGo(_exitInlineGate);

    /// <summary>
    /// For a script past busy-reply-threshold that holds this shard (inline mode): runs the work
    /// handed over meanwhile, whose commands answer BUSY, and wakes the owners on pool threads, as
    /// Redis answers clients between a busy script's instructions. Never runs their continuations
    /// here: the script's thread goes straight back to the script.
    /// </summary>
    public void AnswerHandOffsWhileBusy()
    {
        if (_handOffs.IsEmpty || !_inlineGate.IsHeldByCurrentThread)
            return;
        _handOffs.RunTurnWakingElsewhere();
    }

    /// <summary>Takes the shard's lock for a coordinated multi-shard command (inline mode only).</summary>
    public void EnterInline()
    {
        _inlineGate.Enter();
        CaptureIfArmed();
    }

    public bool TryEnterInline(int waitMillis)
    {
        if (!_inlineGate.TryEnter(waitMillis))
            return false;
        CaptureIfArmed();
        return true;
    }

    /// <summary>
    /// At a snapshot's cut, with the shard held: the next holder copies it before it changes
    /// (<see cref="ShardCapture"/>). A capture still armed from an earlier cut is taken first.
    /// </summary>
    public void ArmCapture(ShardCapture capture)
    {
        CaptureIfArmed();
        _capture = capture;
    }

    /// <summary>
    /// Takes the shard for a moment from outside, so a capture still armed runs here (a snapshot's
    /// writer reaching a shard no command has taken since the cut).
    /// </summary>
    public void CaptureNow()
    {
        if (Mode == ExecutionMode.Inline)
        {
            EnterInline();
            ExitInline();
            return;
        }
        var hold = new HoldWork();
        Post(hold); // the executor runs the capture before it runs the hold
        hold.WaitUntilHeld();
        hold.Release();
    }

    /// <summary>The holder's first step: one field read when no snapshot is being taken.</summary>
    internal void CaptureIfArmed()
    {
        if (_capture is { } capture)
        {
            _capture = null;
            capture.Capture(this);
        }
    }

    /// <summary>True when the calling thread holds the shard's lock (inline mode).</summary>
    public bool IsHeldByCurrentThread => _inlineGate.IsHeldByCurrentThread;

    /// <summary>Lets the shard go; work handed over meanwhile goes to the thread pool, as the caller may hold other shards.</summary>
    public void ExitInline()
    {
        _inlineGate.Exit();
        if (!_handOffs.IsEmpty)
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
    }

    /// <summary>Inline mode has no thread of its own: the server's timer calls this.</summary>
    public void RunCronInline()
    {
        EnterInline();
        try
        {
            _cron.Run(this);
        }
        finally
        {
            ExitInline();
        }
    }

    /// <summary>One background eviction pass under the shard's lock (inline mode: the cron thread calls this).</summary>
    public EvictionResult RunEvictionInline()
    {
        EnterInline();
        try
        {
            return _cron.EvictInBackground(this);
        }
        finally
        {
            ExitInline();
        }
    }

    /// <summary>
    /// Runs handed-off work nobody is left to run: whoever last let the shard go may have looked
    /// before it arrived. A few turns here, then the thread pool takes over, so a busy shard cannot
    /// keep one thread from its own sockets.
    /// </summary>
    private void TakeOverHandOffs()
    {
        for (int turn = 0; turn < 4; turn++)
        {
            if (_handOffs.IsEmpty || !_inlineGate.TryEnter())
                return; // nothing left, or the holder will look again when it lets go
            CaptureIfArmed();
            RunHandOffsAndLetGo();
        }
        if (!_handOffs.IsEmpty)
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
    }

    void IThreadPoolWorkItem.Execute() => TakeOverHandOffs();

    private void Run()
    {
        TrackedAllocator.NameCurrentThread($"shard executor {Index}");
        _nextCronTick = Environment.TickCount64 + _cron.PeriodMs;
        while (!_stopping)
        {
            while (_queue.TryDequeue(out var work))
            {
                CaptureIfArmed();
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
        CaptureIfArmed();
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
        DumpWriter?.Dispose();
        TrackedKeys?.Dispose();
        (CronLog as IDisposable)?.Dispose();
    }
}
