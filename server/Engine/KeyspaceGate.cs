namespace Diagnostics.Server.Engine;

/// <summary>
/// Inline mode: where commands that hold the whole keyspace (scripts, FLUSHALL, KEYS...) run, one
/// thread at a time, with every shard's lock taken in ascending order. A thread that finds another
/// holding the keyspace hands its work over and goes back to its own sockets, as a shard's callers
/// do (<see cref="Shard.RunOrHandOff"/>): the holder runs it before letting the shards go. Without
/// this, fifty connections running EVALSHA each took sixteen locks per script in turn, and the
/// losers slept on them: a fifth of the server's CPU went to futex waits and context switches.
/// </summary>
public sealed class KeyspaceGate : IThreadPoolWorkItem
{
    // How long a socket engine thread waits for each shard another thread holds (a command or a
    // turn of hand-offs) before leaving the work to the thread pool: its other sockets wait too.
    private const int SocketThreadShardWaitMs = 1;
    private readonly Lock _gate = new();
    private readonly Shard[] _shards;
    private readonly HandOffQueue _handOffs;
    // Made once: a hand-off turn lets the keyspace go through it.
    private readonly Action _letGo;

    public KeyspaceGate(Shard[] shards)
    {
        _shards = shards;
        _handOffs = new HandOffQueue(shards);
        _letGo = LetGo;
    }

    /// <summary>
    /// Runs <paramref name="work"/> here with every shard held when no other thread holds the
    /// keyspace (true); otherwise hands it to that thread and returns false: the holder runs it and
    /// then calls <see cref="ShardWork.HandOffCompleted"/>. Also when a socket engine thread
    /// cannot get every shard soon: the thread pool runs it then. The caller must hold no shard.
    /// </summary>
    public bool RunOrHandOff(ShardWork work)
    {
        if (!_gate.TryEnter() && !ShortSpin.TryEnter(_gate))
        {
            _handOffs.Enqueue(work);
            // The holder may have looked for handed-off work before this one arrived: if it has
            // let go since, the work is this thread's to run after all.
            TakeOverHandOffs();
            return false;
        }
        if (!TryEnterShards())
        {
            _handOffs.Enqueue(work);
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
            return false;
        }
        RunHolding(work);
        return true;
    }

    /// <summary>
    /// Runs <paramref name="work"/> here with every shard held, waiting for them as long as it
    /// takes: for a pool thread with work that must not run on a socket engine thread (a script
    /// that gave itself back), which another holder might be.
    /// </summary>
    public void Run(ShardWork work)
    {
        _gate.Enter();
        EnterShards();
        RunHolding(work);
    }

    private void RunHolding(ShardWork work)
    {
        try
        {
            work.ExecuteHoldingAll(_shards);
        }
        finally
        {
            // Even when this work threw: what was handed over must run and its owners wake.
            RunHandOffsAndLetGo();
            TakeOverHandOffs();
        }
    }

    /// <summary>
    /// For a script past busy-reply-threshold that holds the keyspace: runs what was handed over
    /// meanwhile, whose commands answer BUSY, and wakes the owners on pool threads.
    /// </summary>
    public void AnswerHandOffsWhileBusy()
    {
        if (!_handOffs.IsEmpty && _gate.IsHeldByCurrentThread)
            _handOffs.RunTurnWakingElsewhere();
    }

    private void EnterShards()
    {
        foreach (var shard in _shards)
            shard.EnterInline();
    }

    /// <summary>Holding the gate, takes every shard: a pool thread waits for them; a socket engine thread only briefly, else lets the gate go too (false).</summary>
    private bool TryEnterShards()
    {
        if (Thread.CurrentThread.IsThreadPoolThread)
        {
            EnterShards();
            return true;
        }
        for (int s = 0; s < _shards.Length; s++)
        {
            if (_shards[s].TryEnterInline(SocketThreadShardWaitMs))
                continue;
            while (s > 0)
                _shards[--s].ExitInline();
            _gate.Exit();
            return false;
        }
        return true;
    }

    /// <summary>Holding the keyspace: runs what was handed over, lets the shards and the gate go, wakes the owners.</summary>
    private void RunHandOffsAndLetGo() => _handOffs.RunTurnThenLetGo(_letGo);

    private void LetGo()
    {
        for (int s = _shards.Length - 1; s >= 0; s--)
            _shards[s].ExitInline();
        _gate.Exit();
    }

    /// <summary>Runs handed-off work nobody is left to run, a few turns, then leaves the rest to the thread pool.</summary>
    private void TakeOverHandOffs()
    {
        for (int turn = 0; turn < 4; turn++)
        {
            if (!Thread.CurrentThread.IsThreadPoolThread && _handOffs.NextMayRunLong)
                break; // a long command waits for a pool thread, not on this socket thread
            if (_handOffs.IsEmpty || !_gate.TryEnter())
                return; // nothing left, or the holder will look again when it lets go
            if (!TryEnterShards())
                break;
            RunHandOffsAndLetGo();
        }
        if (!_handOffs.IsEmpty)
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
    }

    void IThreadPoolWorkItem.Execute() => TakeOverHandOffs();
}
