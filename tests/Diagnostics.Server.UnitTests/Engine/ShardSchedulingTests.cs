using Diagnostics.Server.Engine;
using Diagnostics.Server.Transactions;

namespace Diagnostics.Server.UnitTests.Engine;

/// <summary>
/// The shard's scheduling in process, on real <see cref="Shard"/> objects and real threads:
/// inline mode's flat combining (<see cref="Shard.RunOrHandOff"/>), executor mode's queue, and
/// whole-keyspace holds (<see cref="Keyspace.RunExclusive"/>). A hang is the failure a lost
/// hand-off or wake-up shows as, so every wait has a generous guard; nothing waits on time to
/// synchronise.
/// </summary>
public sealed class ShardSchedulingTests
{
    private static readonly TimeSpan Guard = TimeSpan.FromSeconds(60);

    [Fact]
    public void AFreeShardRunsTheWorkOnTheCallersThreadAtOnce()
    {
        using var shard = NewInlineShard();
        var work = new RecordingWork(0);

        Assert.True(shard.RunOrHandOff(work));

        Assert.Equal([Environment.CurrentManagedThreadId], work.RanOn);
        Assert.Equal(0, work.Completions);
        Assert.False(shard.IsHeldByCurrentThread);
    }

    [Fact]
    public void ABusyHolderRunsHandedOffWorkInArrivalOrderThenWakesTheOwnersWithTheShardFree()
    {
        using var shard = NewInlineShard();
        var holder = new BlockingWork();
        var holding = StartThread(() => shard.RunOrHandOff(holder));
        holder.WaitUntilRunning();

        var order = new List<int>();
        var handedOff = new RecordingWork[5];
        for (int i = 0; i < handedOff.Length; i++)
        {
            handedOff[i] = new RecordingWork(i, order) { CheckShardFreeOnCompletion = shard };
            // The holder is inside its work: this caller must not wait for it, nor run its own work.
            Assert.False(shard.RunOrHandOff(handedOff[i]));
        }
        Assert.Empty(order);

        holder.Release();
        Assert.True(holding.Join(Guard), "the holder never let the shard go");

        Assert.Equal([0, 1, 2, 3, 4], order);
        foreach (var work in handedOff)
        {
            Assert.Equal([holding.ManagedThreadId], work.RanOn);
            Assert.Equal(1, work.Completions);
            Assert.Null(work.Failure);
            Assert.True(work.ContinuedHere, "the holder should let the owner continue on its own thread");
            Assert.Equal(holding.ManagedThreadId, work.CompletedOn);
            Assert.True(work.ShardWasFreeOnCompletion, "an owner was woken while the shard was still held");
        }
    }

    [Fact]
    public void WhatHandedOffWorkThrowsReachesItsOwnerAndTheWorkBehindItStillRuns()
    {
        using var shard = NewInlineShard();
        var holder = new BlockingWork();
        var holding = StartThread(() => shard.RunOrHandOff(holder));
        holder.WaitUntilRunning();

        var order = new List<int>();
        var failing = new RecordingWork(1, order) { Throw = new InvalidOperationException("handed-off work failed") };
        var behind = new RecordingWork(2, order);
        Assert.False(shard.RunOrHandOff(failing));
        Assert.False(shard.RunOrHandOff(behind));
        holder.Release();
        Assert.True(holding.Join(Guard));

        Assert.Equal([1, 2], order);
        Assert.Same(failing.Throw, failing.Failure);
        Assert.Equal(1, failing.Completions);
        Assert.Null(behind.Failure);
        Assert.Equal(1, behind.Completions);
    }

    [Fact]
    public void AHolderWhoseOwnWorkThrowsStillRunsWhatWasHandedToItAndLetsTheShardGo()
    {
        using var shard = NewInlineShard();
        var holder = new BlockingWork { ThrowAfterRelease = new InvalidOperationException("holder's work failed") };
        Exception? holderSaw = null;
        var holding = StartThread(() =>
        {
            try
            {
                shard.RunOrHandOff(holder);
            }
            catch (Exception ex)
            {
                holderSaw = ex;
            }
        });
        holder.WaitUntilRunning();
        var handedOff = new RecordingWork(7);
        Assert.False(shard.RunOrHandOff(handedOff));
        holder.Release();
        Assert.True(holding.Join(Guard));

        Assert.Same(holder.ThrowAfterRelease, holderSaw);
        Assert.Equal([holding.ManagedThreadId], handedOff.RanOn);
        Assert.Equal(1, handedOff.Completions);
        var after = new RecordingWork(8);
        Assert.True(shard.RunOrHandOff(after), "the shard stayed held after its holder's work threw");
    }

    [Fact]
    public void WorkHandedToAMultiShardHolderRunsOnThePoolOnceItLetsGo()
    {
        using var shard = NewInlineShard();
        shard.EnterInline(); // as a command spanning shards (or RunExclusive) holds it
        var work = new RecordingWork(3);
        bool ranAtOnce = true;
        var handing = StartThread(() => ranAtOnce = shard.RunOrHandOff(work));
        Assert.True(handing.Join(Guard));
        Assert.False(ranAtOnce);
        Assert.Empty(work.RanOn);

        shard.ExitInline();

        Assert.True(work.Completed.Wait(Guard), "work handed over while the shard was held for several was never run");
        Assert.Single(work.RanOn);
        Assert.NotEqual(Environment.CurrentManagedThreadId, work.RanOn[0]);
        Assert.Equal(1, work.Completions);
    }

    /// <summary>
    /// Connections as they use the shards: each owner runs a chain of works, one at a time, and
    /// continues from wherever its previous work completed (the holder's thread or the pool).
    /// Every work must run exactly once, alone on its shard, in its owner's order, and every
    /// owner must finish: a hand-off nobody runs leaves its owner waiting forever.
    /// </summary>
    [Theory]
    [InlineData(1, 8, 4000)]
    [InlineData(3, 16, 2000)]
    public async Task UnderContentionEveryWorkRunsExactlyOnceAloneAndInOrderAndNoOwnerIsLeftWaiting(int shards, int owners, int worksPerOwner)
    {
        var shardArray = new Shard[shards];
        var logs = new ShardLog[shards];
        for (int i = 0; i < shards; i++)
        {
            shardArray[i] = new Shard(i, 1, ExecutionMode.Inline, new ShardCron(10), new WatchRegistrations());
            logs[i] = new ShardLog();
        }
        try
        {
            var chains = new OwnerChain[owners];
            var threads = new Worker[owners];
            for (int o = 0; o < owners; o++)
            {
                chains[o] = new OwnerChain(o, worksPerOwner, shardArray, logs);
                threads[o] = StartThread(chains[o].Continue);
            }
            var all = Task.WhenAll(Array.ConvertAll(chains, c => c.Done));
            await all.WaitAsync(Guard);
            foreach (var thread in threads)
                Assert.True(thread.Join(Guard));

            long ran = 0, handOffs = 0;
            foreach (var chain in chains)
            {
                Assert.Null(chain.Error);
                Assert.Equal(worksPerOwner, chain.Executed);
                handOffs += chain.HandOffs;
            }
            foreach (var log in logs)
            {
                Assert.Equal(0, log.Overlaps);
                ran += log.Ran;
            }
            Assert.Equal((long)owners * worksPerOwner, ran);
            // The point of the exercise: the holders did take work from the others.
            Assert.True(handOffs > 0, "no work was ever handed off: the test did not contend");
        }
        finally
        {
            foreach (var shard in shardArray)
                shard.Dispose();
        }
    }

    /// <summary>
    /// The narrow race of flat combining: a caller's spin ends just as the holder lets go, and it
    /// queues its work after the holder last looked. With steady traffic the next holder would
    /// pick it up anyway; so each round here is one holder and one caller, then silence (the
    /// next round starts once the caller's work ran), where a stranded work waits forever. The
    /// holder keeps the shard until the caller is calling, then for a while that walks toward the
    /// caller's spin's length (longer when the caller got the shard, shorter when it handed off),
    /// so its let-go keeps falling around the spin's end, where the race is.
    /// </summary>
    [Fact]
    public void AWorkQueuedAsTheHolderLetsGoIsRunWithoutFurtherTraffic()
    {
        using var shard = NewInlineShard();
        const int Rounds = 40000;
        var deadline = DateTime.UtcNow + Guard;
        int holding = 0, calling = 0, callerDone = 0, handedOffLast = 0;
        string? holderError = null, callerError = null;
        int handOffs = 0;

        var holder = StartThread(() =>
        {
            var random = new Random(1);
            int hold = 200;
            var work = new CallbackWork(round =>
            {
                Volatile.Write(ref holding, round);
                if (!SpinUntil(() => Volatile.Read(ref calling) == round, deadline))
                    return;
                Thread.SpinWait(hold + random.Next(0, 16));
            });
            for (int round = 1; round <= Rounds; round++)
            {
                if (!SpinUntil(() => Volatile.Read(ref callerDone) == round - 1, deadline))
                {
                    holderError = $"round {round}: the caller's work of the last round never ran";
                    return;
                }
                if (round > 1)
                    hold = Math.Max(0, hold + (Volatile.Read(ref handedOffLast) == 1 ? -4 : 4));
                work.Round = round;
                if (!shard.RunOrHandOff(work))
                {
                    holderError = $"round {round}: the shard was not free for the holder";
                    return;
                }
            }
        });
        var caller = StartThread(() =>
        {
            var work = new TimedWork();
            for (int round = 1; round <= Rounds; round++)
            {
                if (!SpinUntil(() => Volatile.Read(ref holding) == round, deadline))
                    return; // the holder says why
                work.Prepare(0);
                Volatile.Write(ref calling, round);
                bool ranHere = shard.RunOrHandOff(work);
                Volatile.Write(ref handedOffLast, ranHere ? 0 : 1);
                if (!ranHere)
                {
                    handOffs++;
                    if (!work.Completed.Wait(TimeSpan.FromSeconds(10)))
                    {
                        callerError = $"round {round}: a handed-off work was never run";
                        return;
                    }
                }
                Volatile.Write(ref callerDone, round);
            }
        });
        Assert.True(caller.Join(Guard + Guard));
        Assert.True(holder.Join(Guard + Guard));
        Assert.Null(callerError);
        Assert.Null(holderError);
        Assert.True(handOffs > 0, "no work was ever handed off: the test did not contend");
    }

    private static bool SpinUntil(Func<bool> condition, DateTime deadline)
    {
        var spin = new SpinWait();
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
                return false;
            spin.SpinOnce(sleep1Threshold: -1);
        }
        return true;
    }

    [Fact]
    public void AnExecutorRunsPostedWorkOnItsOwnThreadOncePerPostInEachPostersOrder()
    {
        // hz 1: a lost wake-up would leave work waiting for the cron's second-long sleep to end.
        using var shard = new Shard(0, 1, ExecutionMode.Executor, new ShardCron(1), new WatchRegistrations());
        const int Posters = 4, Posts = 3000;
        var log = new ShardLog();
        var posters = new Worker[Posters];
        var errors = new string?[Posters];
        var threadIds = new HashSet<int>[Posters];
        var started = System.Diagnostics.Stopwatch.StartNew();
        for (int p = 0; p < Posters; p++)
        {
            int poster = p;
            threadIds[p] = [];
            posters[p] = StartThread(() =>
            {
                // Half the posts one at a time (a connection awaiting its batch), half pipelined.
                var work = new PostedWork(poster, log);
                for (int i = 0; i < Posts / 2; i++)
                {
                    work.Expect(i);
                    shard.Post(work);
                    if (!work.Done.Wait(Guard))
                    {
                        errors[poster] = $"post {i} never ran";
                        return;
                    }
                    work.Done.Reset();
                    threadIds[poster].Add(work.LastThread);
                }
                var pipelined = new PostedWork[Posts / 2];
                for (int i = 0; i < pipelined.Length; i++)
                {
                    pipelined[i] = new PostedWork(poster, log);
                    pipelined[i].Expect(Posts / 2 + i);
                    shard.Post(pipelined[i]);
                }
                foreach (var posted in pipelined)
                {
                    if (!posted.Done.Wait(Guard))
                    {
                        errors[poster] = "a pipelined post never ran";
                        return;
                    }
                    threadIds[poster].Add(posted.LastThread);
                }
            });
        }
        foreach (var thread in posters)
            Assert.True(thread.Join(Guard));

        Assert.All(errors, error => Assert.Null(error));
        Assert.Equal(0, log.Overlaps);
        Assert.Equal((long)Posters * Posts, log.Ran);
        Assert.Equal(Posters, log.LastSequence.Count);
        Assert.All(log.LastSequence.Values, last => Assert.Equal(Posts - 1, last));
        Assert.Equal(0, log.OutOfOrder);
        var executor = Assert.Single(threadIds.SelectMany(ids => ids).Distinct());
        Assert.DoesNotContain(executor, posters.Select(t => t.ManagedThreadId));
        // 12,000 posts each needing a wake-up: a lost one costs a second (hz 1), so only a few fit.
        Assert.True(started.Elapsed < TimeSpan.FromSeconds(30), $"took {started.Elapsed}: wake-ups were lost");
    }

    /// <summary>
    /// Whole-keyspace holds (AOF load, DEBUG RELOAD) take every shard in ascending order, as
    /// commands spanning shards do: with several of them and a stream of single-shard work on every
    /// shard, all finish, and while one holds nothing else runs on any shard.
    /// </summary>
    [Theory]
    [InlineData(ExecutionMode.Inline)]
    [InlineData(ExecutionMode.Executor)]
    public async Task WholeKeyspaceHoldsAndSpanningHoldsNeitherDeadlockNorOverlapOtherWork(ExecutionMode mode)
    {
        using var keyspace = new Keyspace(3, 1, mode, hz: 10, runCron: false);
        var shards = keyspace.Shards;
        var logs = new ShardLog[shards.Length];
        for (int i = 0; i < logs.Length; i++)
            logs[i] = new ShardLog();
        const int Holds = 100;
        int holdViolations = 0;

        var holders = new Worker[3];
        for (int h = 0; h < holders.Length; h++)
        {
            holders[h] = StartThread(() =>
            {
                for (int i = 0; i < Holds; i++)
                {
                    keyspace.RunExclusive(() =>
                    {
                        foreach (var log in logs)
                            if (log.Busy)
                                Interlocked.Increment(ref holdViolations);
                    });
                }
            });
        }

        Task work;
        if (mode == ExecutionMode.Inline)
        {
            var chains = new OwnerChain[6];
            for (int o = 0; o < chains.Length; o++)
            {
                chains[o] = new OwnerChain(o, 1500, shards, logs);
                var chain = chains[o];
                ThreadPool.UnsafeQueueUserWorkItem(_ => chain.Continue(), null);
            }
            // Two commands spanning shards 0 and 2, taken in ascending order as the connection does.
            var spanning = Task.Run(() =>
            {
                for (int i = 0; i < 300; i++)
                {
                    shards[0].EnterInline();
                    shards[2].EnterInline();
                    try
                    {
                        if (logs[0].Busy || logs[2].Busy)
                            Interlocked.Increment(ref holdViolations);
                    }
                    finally
                    {
                        shards[2].ExitInline();
                        shards[0].ExitInline();
                    }
                }
            });
            work = Task.WhenAll([.. chains.Select(c => c.Done), spanning]);
        }
        else
        {
            work = Task.Run(() =>
            {
                var posted = new List<PostedWork>();
                for (int i = 0; i < 3000; i++)
                {
                    var shard = shards[i % shards.Length];
                    var item = new PostedWork(0, logs[shard.Index]);
                    item.Expect(i / shards.Length);
                    shard.Post(item);
                    posted.Add(item);
                }
                foreach (var item in posted)
                    if (!item.Done.Wait(Guard))
                        throw new TimeoutException("posted work never ran");
            });
        }

        await work.WaitAsync(Guard);
        foreach (var holder in holders)
            Assert.True(holder.Join(Guard), "a whole-keyspace hold never finished");
        Assert.Equal(0, holdViolations);
        Assert.All(logs, log => Assert.Equal(0, log.Overlaps));
    }

    private static Shard NewInlineShard() => new(0, 1, ExecutionMode.Inline, new ShardCron(10), new WatchRegistrations());

    /// <summary>A thread of the test's own; what it throws is kept for <see cref="Worker.Join"/> to report.</summary>
    private static Worker StartThread(Action body) => new(body);

    private sealed class Worker
    {
        private readonly Thread _thread;
        private Exception? _error;

        public Worker(Action body)
        {
            _thread = new Thread(() =>
            {
                try
                {
                    body();
                }
                catch (Exception ex)
                {
                    _error = ex;
                }
            }) { IsBackground = true };
            _thread.Start();
        }

        public int ManagedThreadId => _thread.ManagedThreadId;

        /// <summary>True once the thread ended; throws what it threw.</summary>
        public bool Join(TimeSpan timeout)
        {
            if (!_thread.Join(timeout))
                return false;
            if (_error is not null)
                throw new Xunit.Sdk.XunitException($"a test thread failed: {_error}");
            return true;
        }
    }

    /// <summary>What ran on one shard; counts any two works found running on it at once.</summary>
    private sealed class ShardLog
    {
        private int _inside;
        public int Overlaps;
        public long Ran;         // written only inside Enter/Exit: a lost update is an overlap too
        public int OutOfOrder;   // likewise
        public readonly Dictionary<int, int> LastSequence = [];

        public bool Busy => Volatile.Read(ref _inside) != 0;

        public void Enter()
        {
            if (Interlocked.Exchange(ref _inside, 1) != 0)
                Interlocked.Increment(ref Overlaps);
        }

        public void Record(int owner, int sequence)
        {
            Ran++;
            if (LastSequence.TryGetValue(owner, out int last) && last != sequence - 1)
                OutOfOrder++;
            LastSequence[owner] = sequence;
        }

        public void Exit() => Volatile.Write(ref _inside, 0);
    }

    /// <summary>One piece of work that records where and in what order it ran and how its owner was told.</summary>
    private sealed class RecordingWork(int id, List<int>? order = null) : ShardWork
    {
        public readonly List<int> RanOn = [];
        public Exception? Throw { get; init; }
        public Shard? CheckShardFreeOnCompletion { get; init; }
        public int Completions;
        public Exception? Failure;
        public bool ContinuedHere;
        public int CompletedOn;
        public bool ShardWasFreeOnCompletion;
        public readonly ManualResetEventSlim Completed = new();

        public override void Execute(Shard shard)
        {
            RanOn.Add(Environment.CurrentManagedThreadId);
            order?.Add(id);
            if (Throw is not null)
                throw Throw;
        }

        public override void HandOffCompleted(Exception? failure, bool continueHere)
        {
            Failure = failure;
            ContinuedHere = continueHere;
            CompletedOn = Environment.CurrentManagedThreadId;
            // The lock is reentrant: held by this thread, TryEnter would succeed, so ask that first.
            if (CheckShardFreeOnCompletion is { } shard && !shard.IsHeldByCurrentThread && shard.TryEnterInline(0))
            {
                ShardWasFreeOnCompletion = true;
                shard.ExitInline();
            }
            Interlocked.Increment(ref Completions);
            Completed.Set();
        }
    }

    /// <summary>Holds the shard until released, as a long command does.</summary>
    private sealed class BlockingWork : ShardWork
    {
        private readonly ManualResetEventSlim _running = new();
        private readonly ManualResetEventSlim _release = new();
        public Exception? ThrowAfterRelease { get; init; }

        public void WaitUntilRunning() => Assert.True(_running.Wait(Guard), "the holder never started");
        public void Release() => _release.Set();

        public override void Execute(Shard shard)
        {
            _running.Set();
            if (!_release.Wait(Guard))
                throw new TimeoutException("never released");
            if (ThrowAfterRelease is not null)
                throw ThrowAfterRelease;
        }
    }

    /// <summary>
    /// A connection's life on the shards, without the socket: one work at a time, each on the next
    /// shard in turn; when a work was handed off the chain continues from HandOffCompleted, on
    /// whichever thread that runs, as the connection's async method does.
    /// </summary>
    private sealed class OwnerChain(int owner, int works, Shard[] shards, ShardLog[] logs) : ShardWork
    {
        private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _next;          // the sequence number of the work being run or handed off
        private int _lastExecuted = -1;
        public int Executed;
        public int HandOffs;
        public string? Error;

        public Task Done => _done.Task;

        public void Continue()
        {
            while (_next < works)
            {
                var shard = shards[(owner + _next) % shards.Length];
                if (!shard.RunOrHandOff(this))
                {
                    Interlocked.Increment(ref HandOffs);
                    return; // HandOffCompleted picks the chain up
                }
                _next++;
            }
            Finish();
        }

        public override void Execute(Shard shard)
        {
            var log = logs[shard.Index];
            log.Enter();
            try
            {
                if (_lastExecuted != _next - 1)
                    Error ??= $"owner {owner} ran work {_next} after {_lastExecuted}";
                _lastExecuted = _next;
                Executed++;
                log.Record(owner, _next);
                // Now and then hold the shard a little longer, so others find it busy past their spin.
                Thread.SpinWait(_next % 32 == 0 ? 2000 : 20);
            }
            finally
            {
                log.Exit();
            }
        }

        public override void HandOffCompleted(Exception? failure, bool continueHere)
        {
            if (failure is not null)
            {
                _done.TrySetException(failure);
                return;
            }
            _next++;
            if (continueHere)
                Continue();
            else
                ThreadPool.UnsafeQueueUserWorkItem(chain => chain.Continue(), this, preferLocal: false);
        }

        private void Finish()
        {
            if (Executed != works)
                Error ??= $"owner {owner} executed {Executed} of {works}";
            _done.TrySetResult();
        }
    }

    /// <summary>Runs a callback with the round it was given, holding the shard meanwhile.</summary>
    private sealed class CallbackWork(Action<int> body) : ShardWork
    {
        public int Round;

        public override void Execute(Shard shard) => body(Round);
    }

    /// <summary>Holds the shard for a given spin, then tells its owner (when handed off) that it ran.</summary>
    private sealed class TimedWork : ShardWork
    {
        private int _spin;
        public readonly ManualResetEventSlim Completed = new();

        public void Prepare(int spin)
        {
            _spin = spin;
            Completed.Reset();
        }

        public override void Execute(Shard shard) => Thread.SpinWait(_spin);

        public override void HandOffCompleted(Exception? failure, bool continueHere) => Completed.Set();
    }

    /// <summary>Executor-mode work: a poster's numbered post, signalled when it ran.</summary>
    private sealed class PostedWork(int poster, ShardLog log) : ShardWork
    {
        private int _sequence;
        public readonly ManualResetEventSlim Done = new();
        public int LastThread;

        public void Expect(int sequence) => _sequence = sequence;

        public override void Execute(Shard shard)
        {
            log.Enter();
            try
            {
                log.Record(poster, _sequence);
                LastThread = Environment.CurrentManagedThreadId;
            }
            finally
            {
                log.Exit();
            }
            Done.Set();
        }
    }
}
