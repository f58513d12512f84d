using System.Collections.Concurrent;

namespace Diagnostics.Server.Engine;

/// <summary>
/// Work handed to whoever holds a shard, or the whole keyspace (<see cref="KeyspaceGate"/>),
/// instead of waiting for it (flat combining): the holder runs it a turn at a time before letting
/// go, then wakes the owners. Shared by both holders so they bound a turn and wake owners alike.
/// </summary>
internal sealed class HandOffQueue
{
    // A holder runs, and then wakes the owners of, at most this many handed-off works per turn, so
    // its own sockets wait at most that long; what is left goes to the thread pool.
    private const int MaxPerTurn = 256;
    // ... and stops once their owners hold this many reply bytes unsent: each sends only when woken,
    // so a turn of 50 LRANGE_600 pipelines would hold 235 MB of replies at once.
    private const long MaxOutputPerTurn = 4 * 1024 * 1024;
    // Handed-off works this thread ran and is waking the owners of (see Complete). Per-thread
    // scheduling state, not context handed to a callee: waking an owner runs its continuation on
    // this stack, which may let go of another shard and call Complete again; the thread's own
    // queue turns that recursion into the loop already running further up the same stack.
    [ThreadStatic] private static ShardWork? t_wakeHead;
    [ThreadStatic] private static ShardWork? t_wakeTail;
    [ThreadStatic] private static bool t_waking;
    private readonly ConcurrentQueue<ShardWork> _queue = new();
    // What the holder holds: one shard, or every shard.
    private readonly Shard? _shard;
    private readonly Shard[]? _shards;

    public HandOffQueue(Shard shard) => _shard = shard;

    public HandOffQueue(Shard[] shards) => _shards = shards;

    public bool IsEmpty => _queue.IsEmpty;

    public void Enqueue(ShardWork work) => _queue.Enqueue(work);

    /// <summary>Whether the work next in line may run long (it left the socket thread for that): a socket engine thread leaves it to the pool.</summary>
    public bool NextMayRunLong => _queue.TryPeek(out var next) && next.MayRunLong;

    /// <summary>
    /// Runs one turn of handed-off work for its owners while the caller holds what it was handed
    /// to; returns it in arrival order. On a socket engine thread the turn stops before work that
    /// may run long. Only the holder takes work out, so what it peeked at is what it takes.
    /// </summary>
    private ShardWork? RunTurn()
    {
        ShardWork? first = null, last = null;
        long output = 0;
        bool onSocketThread = !Thread.CurrentThread.IsThreadPoolThread;
        for (int n = 0; n < MaxPerTurn && output < MaxOutputPerTurn && !(onSocketThread && NextMayRunLong) && _queue.TryDequeue(out var work); n++)
        {
            try
            {
                if (_shard is not null)
                    work.Execute(_shard);
                else
                    work.ExecuteHoldingAll(_shards!);
            }
            catch (Exception ex)
            {
                work.HandOffFailure = ex; // its owner's to see, as if it had run the work itself
            }
            output += work.PendingOutputBytes;
            if (last is null)
                first = work;
            else
                last.NextRan = work;
            last = work;
        }
        return first;
    }

    /// <summary>
    /// Holding what the work was handed to: runs a turn of it, lets go (<paramref name="letGo"/>,
    /// even when a work threw), then wakes the owners on this thread (<see cref="Complete"/>).
    /// </summary>
    public void RunTurnThenLetGo(Action letGo)
    {
        ShardWork? ran;
        try
        {
            ran = RunTurn();
        }
        finally
        {
            letGo();
        }
        Complete(ran);
    }

    /// <summary>
    /// Wakes the owners of work this thread ran, after letting go, running their continuations
    /// right here: no thread hand-off, no pool thread woken. A continuation often takes a shard and
    /// runs others' work in turn; what it then completes joins this thread's queue instead of
    /// nesting, so the stack stays flat however long the chain.
    /// </summary>
    private static void Complete(ShardWork? ran)
    {
        if (ran is null)
            return;
        if (t_wakeTail is null)
            t_wakeHead = ran;
        else
            t_wakeTail.NextRan = ran;
        while (ran.NextRan is not null)
            ran = ran.NextRan;
        t_wakeTail = ran;
        if (t_waking)
            return; // inside a continuation: the loop further up this stack gets to it
        t_waking = true;
        int woken = 0;
        try
        {
            while (t_wakeHead is { } work && woken++ < MaxPerTurn)
            {
                // Unlink first: the owner may hand the same work over again at once.
                t_wakeHead = work.NextRan;
                if (t_wakeHead is null)
                    t_wakeTail = null;
                work.NextRan = null;
                Exception? failure = work.HandOffFailure;
                work.HandOffFailure = null;
                work.HandOffCompleted(failure, continueHere: true);
            }
        }
        finally
        {
            t_waking = false;
            // Past the turn's bound, so this thread gets back to its own sockets (or, which does
            // not happen as async methods keep their exceptions, after a continuation threw):
            // the owners still waiting wake on pool threads.
            while (t_wakeHead is { } work)
            {
                t_wakeHead = work.NextRan;
                work.NextRan = null;
                work.HandOffCompleted(work.HandOffFailure, continueHere: false);
            }
            t_wakeTail = null;
        }
    }

    /// <summary>
    /// Runs a turn and wakes the owners on pool threads, still holding: for a holder that must not
    /// run their continuations (a busy script's hook goes straight back to the script).
    /// </summary>
    public void RunTurnWakingElsewhere()
    {
        ShardWork? ran = RunTurn();
        while (ran is not null)
        {
            var next = ran.NextRan;
            ran.NextRan = null;
            var failure = ran.HandOffFailure;
            ran.HandOffFailure = null;
            ran.HandOffCompleted(failure, continueHere: false);
            ran = next;
        }
    }
}
