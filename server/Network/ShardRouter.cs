using System.Diagnostics;
using System.Runtime.CompilerServices;
using Diagnostics.Contracts;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.Transactions;

namespace Diagnostics.Server.Network;

/// <summary>
/// Where a connection's parsed commands run, and getting them there: consecutive commands for one
/// shard go to it as one hand-off (run here under its lock, by its holder, or by its executor);
/// commands that touch several shards park them all, in ascending order; commands without keys
/// run here. Whoever ends up holding the shards runs each command through the
/// <see cref="CommandExecutor"/>. One per connection, reused for every batch: routing allocates nothing.
/// </summary>
internal sealed class ShardRouter
{
    // How long a socket engine thread may wait for a busy shard before the connection moves to
    // the thread pool to wait there (see ThreadPoolHop).
    private const int SocketThreadShardWaitMs = 1;
    // Commands that can run long (whole-keyspace, administrative, the doctors' examinations)
    // leave the socket engine thread first; scripts decide for themselves (ScriptEngine.SocketThreadBudgetMs).
    private const CommandFlags MayRunLong = CommandFlags.AllShards | CommandFlags.Admin | CommandFlags.Diagnostic;

    private readonly ClientConnection _connection;
    private readonly DataServer _server;
    private readonly RequestBatch _batch;
    private readonly BatchWork _work;
    private readonly ParkWork[] _parks;
    private readonly bool[] _involvedShards;
    private CommandSpec?[] _specs = new CommandSpec?[64];
    // Which batch each _specs entry was found for: a command that ends one run is classified again
    // at the head of the next, and is looked up once. (64-bit: a count that wrapped could take a
    // stale entry for the current batch's.)
    private long[] _specBatch = new long[64];
    private long _batchNumber;
    // The last command name found, as sent, and its spec: a pipeline mostly repeats one command,
    // and comparing its bytes costs less than the table's case-insensitive hash (about 3% of a
    // pipelined GET's CPU). Commands with subcommands are not kept (their spec depends on args[1]).
    private readonly byte[] _lastName = new byte[16];
    private int _lastNameLength = -1;
    private CommandSpec? _lastSpec;
    private ValueTask _handOff;

    public ShardRouter(ClientConnection connection, DataServer server, RequestBatch batch)
    {
        _connection = connection;
        _server = server;
        _batch = batch;
        _work = new BatchWork(connection);
        int shards = server.Keyspace.ShardCount;
        _parks = new ParkWork[shards];
        for (int i = 0; i < shards; i++)
            _parks[i] = new ParkWork();
        _involvedShards = new bool[shards];
    }

    /// <summary>Completes when the shard's holder has run the run handed to it (inline mode).</summary>
    public ValueTask HandOff => _handOff;

    /// <summary>The command found for command <paramref name="index"/> of the current batch.</summary>
    public CommandSpec? SpecAt(int index) => _specs[index];

    /// <summary>A new batch was parsed: the commands found for the last one are forgotten.</summary>
    public void BeginBatch()
    {
        _batchNumber++;
        int count = _batch.CommandCount;
        if (_specs.Length < count)
        {
            int size = Math.Max(count, _specs.Length * 2);
            _specs = new CommandSpec?[size];
            _specBatch = new long[size];
        }
    }

    // Keyspace: every shard, through the keyspace gate in inline mode (scripts, FLUSHALL, KEYS...);
    // Coordinated: several shards, parked or locked by this connection; Busy: refused with BUSY
    // here, holding nothing, as a script was busy when the command was looked at.
    private enum Route { Immediate, Shard, Keyspace, Coordinated, Busy }

    /// <summary>
    /// The common case without an await (inline mode): from command <paramref name="i"/>, runs
    /// consecutive single-shard runs under their shard's lock until the batch ends or something
    /// needs waiting for. Returns the first command not run. <paramref name="handedOff"/>: the run
    /// [returned, <paramref name="runEnd"/>) went to the shard's holder; await <see cref="HandOff"/>.
    /// Otherwise <paramref name="runEnd"/> is -1, or the end of a run that left a blocked command
    /// to deal with (<see cref="ExecuteBatchAsync"/> does).
    /// </summary>
    public int RunShardRunsInline(int i, out int runEnd, out bool handedOff)
    {
        runEnd = -1;
        handedOff = false;
        int count = _batch.CommandCount;
        var keyspace = _server.Keyspace;
        // While CLIENT PAUSE is on, every command goes through ExecuteBatchAsync, which checks each.
        if (keyspace.Mode != ExecutionMode.Inline || _server.Pause.Mode != PauseMode.None)
            return i;
        while (i < count && !_connection.Stopping)
        {
            if (Classify(i, out int shardIndex) != Route.Shard || (_specs[i]!.Flags & MayRunLong) != 0)
                return i;
            int end = RunEnd(i, Route.Shard, shardIndex);
            _handOff = _work.Prepare(i, end);
            if (!keyspace.Shards[shardIndex].RunOrHandOff(_work))
            {
                runEnd = end;
                handedOff = true;
                return i;
            }
            if (_connection.PendingBlock is not null)
            {
                runEnd = end;
                return i;
            }
            i = end;
        }
        return i;
    }

    /// <summary>
    /// Where the run of commands with <paramref name="route"/> (for <paramref name="shardIndex"/>)
    /// that starts at <paramref name="i"/> ends: a command that may block ends it, as what follows
    /// waits until it is served.
    /// </summary>
    private int RunEnd(int i, Route route, int shardIndex)
    {
        int count = _batch.CommandCount;
        int end = i + 1;
        // Paused: one command per run, so each is checked against the pause before it runs.
        if (_server.Pause.Mode != PauseMode.None)
            return end;
        // Scripts start on the socket thread; another whole-keyspace command (KEYS) left it first,
        // so it does not join their run.
        var scripts = _specs[i]!.Flags & CommandFlags.RunsScript;
        while (end < count && (_specs[end - 1]!.Flags & CommandFlags.Blocking) == 0 && Classify(end, out int next, atHead: false) == route && next == shardIndex
            && (route != Route.Keyspace || (_specs[end]!.Flags & CommandFlags.RunsScript) == scripts))
            end++;
        return end;
    }

    /// <summary>
    /// Runs the parsed commands from <paramref name="i"/> in order, after dealing with the end of
    /// the run [i, <paramref name="runEnd"/>) when that is not -1. Consecutive commands for the same
    /// shard go to it as one hand-off; commands that touch several shards park them all; commands
    /// without keys run here.
    /// </summary>
    // Pooled: in executor mode this awaits a hand-off per batch, which would otherwise box a
    // fresh state machine every time.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public async ValueTask ExecuteBatchAsync(int i, int runEnd)
    {
        int count = _batch.CommandCount;
        var keyspace = _server.Keyspace;
        while (true)
        {
            if (runEnd >= 0)
            {
                // The run [i, runEnd) has ended: a blocking command ends a run, and is waited on
                // here (or run again, when its wait says so).
                i = await _connection.WaitIfBlockedAsync() == BlockOutcome.Retry ? runEnd - 1 : runEnd;
                runEnd = -1;
            }
            // After QUIT (or CLIENT KILL of itself) nothing more runs, as in Redis.
            if (i >= count || _connection.Stopping)
                return;
            Route route = Classify(i, out int shardIndex);
            // CLIENT PAUSE: a held command waits here, holding no thread and no shard, then runs
            // in order with what follows it; checked again after the wait (a new pause may hold it).
            if (_server.Pause.Mode != PauseMode.None && HeldByPause(i))
            {
                await _connection.WaitForPauseEndAsync(_specs[i]!);
                continue;
            }
            if (_specs[i] is { } spec && (((spec.Flags & MayRunLong) != 0 && (spec.Flags & CommandFlags.RunsScript) == 0)
                || (ReferenceEquals(spec, _server.Commands.Exec) && _connection.Transaction is { } queued && queued.QueuedAny(MayRunLong))))
                await ThreadPoolHop.FromSocketThread(); // a MULTI with DEBUG SLEEP or FLUSHALL leaves as that command would alone
            if (route == Route.Busy)
            {
                _connection.ExecuteCommand(i, refusal: _server.Scripts.BusyError);
                i++;
                continue;
            }
            if (route == Route.Immediate)
            {
                _connection.ExecuteCommand(i);
                _connection.CommitLoggedWrites();
                // PSYNC's snapshot, WAIT's reply: sent before the next command runs.
                await _connection.RunPendingReplicationAsync();
                if (await _connection.WaitIfBlockedAsync() != BlockOutcome.Retry)
                    i++;
                continue;
            }
            if (route == Route.Coordinated)
            {
                await ExecuteCoordinatedAsync(i);
                if (await _connection.WaitIfBlockedAsync() != BlockOutcome.Retry)
                    i++;
                continue;
            }

            runEnd = RunEnd(i, route, shardIndex);
            // Whole-keyspace commands other than scripts left the socket thread to run long.
            var done = _work.Prepare(i, runEnd, mayRunLong: route == Route.Keyspace && (_specs[i]!.Flags & CommandFlags.RunsScript) == 0);
            if (route == Route.Keyspace)
            {
                // Consecutive scripts of a pipeline share one hold of the keyspace.
                if (!keyspace.Gate.RunOrHandOff(_work))
                    await done; // run by the keyspace's holder, for us
                if (_work.GivenBackAt >= 0)
                {
                    // A script that may run long was read on a socket engine thread: it and the
                    // rest of the run go again from a pool thread, which waits for the keyspace.
                    await ThreadPoolHop.FromSocketThread();
                    _ = _work.Prepare(_work.GivenBackAt, runEnd); // run here: nothing to await
                    MarkWaitingForShards();
                    keyspace.Gate.Run(_work);
                    ThreadCounters.Current.InFlight.End();
                }
                continue;
            }
            Shard shard = keyspace.Shards[shardIndex];
            if (shard.Mode == ExecutionMode.Executor)
            {
                shard.Post(_work);
                await done;
            }
            else if (!shard.RunOrHandOff(_work))
            {
                await done; // run by the shard's holder, for us
            }
        }
    }

    /// <summary>
    /// Looks the command up and decides where it runs. Commands that fail before running (unknown,
    /// wrong arity, not authenticated) run "immediately": their handler is null and the error is
    /// written in order with the other replies.
    /// </summary>
    private Route Classify(int index, out int shardIndex, bool atHead = true)
    {
        shardIndex = -1;
        ArgList args = _batch[index];
        CommandSpec? spec = Find(index, args);
        if (spec is null || spec.Handler is null || !spec.AcceptsArgCount(args.Count)
            || (!_connection.Authenticated && (spec.Flags & CommandFlags.NoAuth) == 0))
            return Route.Immediate;
        if ((spec.Flags & CommandFlags.Connection) != 0)
            return Route.Immediate;
        // A script is running past busy-reply-threshold with every shard held: BUSY, here, instead
        // of queueing behind it. Decided once: were the executor to look again, a script ending in
        // between would let the command run holding no shard. An allow-busy command with keys
        // (WATCH) goes to its shard, where the script's hook runs it.
        if (_server.Scripts.IsBusy && (spec.Flags & CommandFlags.AllowBusy) == 0)
            return Route.Busy;
        if (_connection.Transaction is { } transaction)
        {
            // Queued commands touch no data; EXEC holds what its queue and watched keys need,
            // worked out only when it is next, once everything before it has been queued.
            if (transaction.InMulti && (spec.Flags & CommandFlags.TransactionControl) == 0)
                return Route.Immediate;
            if (ReferenceEquals(spec, _server.Commands.Exec))
                return atHead ? ClassifyExec(transaction, out shardIndex) : Route.Immediate;
        }
        var keyspace = _server.Keyspace;
        if (spec.HoldsAllShards(args))
        {
            // Inline, even with one shard: a script's run ends early when it gives itself back, which
            // only the keyspace's runs expect.
            if (keyspace.Mode == ExecutionMode.Inline)
                return Route.Keyspace;
            if (keyspace.ShardCount == 1)
            {
                shardIndex = 0;
                return Route.Shard;
            }
            Array.Fill(_involvedShards, true);
            return Route.Coordinated;
        }
        if (!spec.HasKeys)
            return Route.Immediate;

        var keys = KeyPositions.Of(spec, args);
        if (!keys.Valid)
            return Route.Immediate; // a bad numkeys: the handler replies the error and touches no key
        bool single = true;
        foreach (int k in keys)
        {
            int shard = keyspace.ShardIndexOf(Keyspace.Hash(args[k]));
            if (shardIndex < 0)
                shardIndex = shard;
            else if (shard != shardIndex)
            {
                single = false;
                break;
            }
        }
        if (shardIndex < 0)
            return Route.Immediate;
        if (single)
            return Route.Shard;
        Array.Clear(_involvedShards);
        foreach (int k in KeyPositions.Of(spec, args))
            _involvedShards[keyspace.ShardIndexOf(Keyspace.Hash(args[k]))] = true;
        return Route.Coordinated;
    }

    /// <summary>
    /// Whether the pause holds command <paramref name="index"/>: as Redis's processCommand, only a
    /// command that passed its checks (known, arity, authenticated, allowed while subscribed)
    /// waits; one refused is answered at once.
    /// </summary>
    private bool HeldByPause(int index)
    {
        ArgList args = _batch[index];
        CommandSpec? spec = _specs[index];
        if (spec is null || spec.Handler is null || !spec.AcceptsArgCount(args.Count)
            || (!_connection.Authenticated && (spec.Flags & CommandFlags.NoAuth) == 0)
            || _connection.RefusedWhileSubscribed(spec))
            return false;
        return ClientPause.Holds(_server.Pause.Mode, _connection, spec, _server.Commands.Exec);
    }

    /// <summary>The command <paramref name="args"/> names, found once per batch entry.</summary>
    private CommandSpec? Find(int index, ArgList args)
    {
        if (_specBatch[index] == _batchNumber)
            return _specs[index];
        ReadOnlySpan<byte> name = args[0];
        CommandSpec? spec;
        if (_lastSpec is not null && name.SequenceEqual(_lastName.AsSpan(0, _lastNameLength)))
        {
            spec = _lastSpec;
        }
        else
        {
            spec = _server.Executor.Find(args);
            if (spec is { Subcommands: null, Parent: null } && name.Length <= _lastName.Length)
            {
                name.CopyTo(_lastName);
                _lastNameLength = name.Length;
                _lastSpec = spec;
            }
        }
        _specs[index] = spec;
        _specBatch[index] = _batchNumber;
        return spec;
    }

    /// <summary>
    /// Where EXEC runs: every shard a queued command's keys or a watched key live in (all of them
    /// for a queued whole-keyspace command). Immediate when none is needed.
    /// </summary>
    private Route ClassifyExec(Transaction transaction, out int shardIndex)
    {
        shardIndex = -1;
        if (!transaction.InMulti || transaction.Failed)
            return Route.Immediate;
        var keyspace = _server.Keyspace;
        Array.Clear(_involvedShards);
        foreach (var (_, key, _) in transaction.Watched)
            _involvedShards[keyspace.ShardIndexOf(Keyspace.Hash(key))] = true;
        for (int i = 0; i < transaction.Specs.Count; i++)
        {
            var spec = transaction.Specs[i]!;
            if (spec.HoldsAllShards(transaction.Queue[i]))
            {
                Array.Fill(_involvedShards, true);
                break;
            }
            if (!spec.HasKeys || (spec.Flags & CommandFlags.Connection) != 0)
                continue;
            ArgList args = transaction.Queue[i];
            var keys = KeyPositions.Of(spec, args);
            if (!keys.Valid)
                continue;
            foreach (int k in keys)
                _involvedShards[keyspace.ShardIndexOf(Keyspace.Hash(args[k]))] = true;
        }
        int involved = 0;
        foreach (bool held in _involvedShards)
            if (held)
                involved++;
        if (involved == 0)
            return Route.Immediate;
        if (involved == 1)
        {
            shardIndex = Array.IndexOf(_involvedShards, true);
            return Route.Shard;
        }
        return involved == _involvedShards.Length && keyspace.Mode == ExecutionMode.Inline ? Route.Keyspace : Route.Coordinated;
    }

    /// <summary>
    /// A pool thread about to block on shards says so in its in-flight slot: the doctor's answer
    /// to "what are the pool threads waiting for" when the pool starves.
    /// </summary>
    private void MarkWaitingForShards()
        => ThreadCounters.Current.InFlight.Begin(InFlightWork.WaitingForShards, _connection.Id, _connection.DatabaseIndex, Stopwatch.GetTimestamp());

    /// <summary>Parks every involved shard (ascending order), runs the command here, releases them.</summary>
    private async ValueTask ExecuteCoordinatedAsync(int index)
    {
        var shards = _server.Keyspace.Shards;
        if (_server.Keyspace.Mode == ExecutionMode.Inline)
        {
            var waits = _server.Keyspace.Waits;
            // With the waits at their limit the socket thread does not wait its millisecond either:
            // a refusal costs microseconds, however fast the refused clients retry.
            if (!TryEnterInvolvedShards(shards, waits.AtLimit ? 0 : SocketThreadShardWaitMs))
            {
                // Waiting takes a pool thread: past the limit, refused at once instead.
                if (!waits.TryBeginWait())
                {
                    _connection.TooBusyRefusals++;
                    _connection.ExecuteCommand(index, refusal: waits.Error());
                    return;
                }
                try
                {
                    await ThreadPoolHop.FromSocketThread();
                    MarkWaitingForShards();
                    for (int s = 0; s < shards.Length; s++)
                        if (_involvedShards[s])
                            shards[s].EnterInline();
                    ThreadCounters.Current.InFlight.End();
                }
                finally
                {
                    waits.EndWait();
                }
            }
            RunCoordinated(shards, index);
            for (int s = shards.Length - 1; s >= 0; s--)
                if (_involvedShards[s])
                    shards[s].ExitInline();
            return;
        }

        for (int s = 0; s < shards.Length; s++)
            if (_involvedShards[s])
                await _parks[s].Park(shards[s]);
        try
        {
            RunCoordinated(shards, index);
        }
        finally
        {
            for (int s = 0; s < shards.Length; s++)
                if (_involvedShards[s])
                    _parks[s].Release();
        }
    }

    /// <summary>Runs the command with every involved shard held and the connection's effects scope attached to each.</summary>
    private void RunCoordinated(Shard[] shards, int index)
    {
        var effects = _connection.Effects;
        for (int s = 0; s < shards.Length; s++)
            if (_involvedShards[s])
                shards[s].Effects = effects;
        try
        {
            _connection.ExecuteCommand(index);
            _connection.CommitLoggedWrites();
        }
        finally
        {
            for (int s = 0; s < shards.Length; s++)
                if (_involvedShards[s])
                    shards[s].Effects = null;
        }
    }

    /// <summary>Takes every involved shard (ascending order) if each comes within <paramref name="waitMillis"/>; else holds none.</summary>
    private bool TryEnterInvolvedShards(Shard[] shards, int waitMillis)
    {
        for (int s = 0; s < shards.Length; s++)
        {
            if (!_involvedShards[s] || shards[s].TryEnterInline(waitMillis))
                continue;
            for (int held = s - 1; held >= 0; held--)
                if (_involvedShards[held])
                    shards[held].ExitInline();
            return false;
        }
        return true;
    }
}
