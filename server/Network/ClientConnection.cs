using System.Buffers;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.IO.Pipelines;
using System.Net;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.SlowCommands;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Engine;
using Diagnostics.Server.PubSub;
using Diagnostics.Server.Protocol;
using Microsoft.AspNetCore.Connections;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Network;

/// <summary>
/// One client: its session state (database, protocol, name, auth) and the loop that reads
/// requests, routes them to shards and writes the replies in order.
///
/// Reading: every complete command in the buffer is parsed; the reader is advanced to the end of
/// the last complete command and marked examined to the end of the buffer, so an incomplete
/// command waits for new bytes instead of spinning. Writing: replies accumulate in the pipe and
/// are flushed only when no more input is already buffered, so a pipeline of N commands costs one
/// send, not N.
/// </summary>
public sealed partial class ClientConnection : IDisposable
{
    private const int MaxCommandsPerBatch = 1024;
    // How long a socket engine thread may wait for a busy shard before the connection moves to
    // the thread pool to wait there (see LeaveSocketThreadAsync).
    private const int SocketThreadShardWaitMs = 1;
    // Commands that can run long (whole-keyspace, administrative) leave the socket engine thread first.
    private const CommandFlags MayRunLong = CommandFlags.AllShards | CommandFlags.Admin;
    // A client that keeps sending without pause still gets its replies at least this often.
    private const int MaxUnflushedBytes = 64 * 1024;

    private readonly DataServer _server;
    private readonly ClientTransport _transport;
    private readonly ILogger _log;
    private readonly RequestBatch _batch = new();
    private readonly BatchWork _work;
    // Completes when the shard's holder has run _work for this connection (inline mode).
    private ValueTask _handOff;
    private readonly ParkWork[] _parks;
    private readonly bool[] _involvedShards;
    private readonly Eviction _eviction;
    private CommandSpec?[] _specs = new CommandSpec?[64];
    private volatile bool _closing;
    private readonly OutputBufferGuard _outputGuard;
    private int _outputLimitReached;
    // Reply bytes and blocks produced as of the last completed flush: all of them were sent by then.
    private long _flushedProduced;
    private long _flushedBlocks;
    // This connection's writes of the current batch, encoded for the AOF, and the AOF offset just
    // past its last writes: its replies wait until the AOF has them as safe as appendfsync promises.
    private Persistence.AofRecordBuffer? _loggedWrites;
    private long _aofWaitOffset;

    public ClientConnection(DataServer server, ClientTransport transport, ILogger log)
    {
        _server = server;
        _transport = transport;
        _log = log;
        Id = server.Clients.NextId();
        Reply = new RespWriter(transport.Pipe.Output);
        _outputGuard = new OutputBufferGuard(this, server.Config);
        Reply.Guard = _outputGuard;
        Address = FormatEndPoint(transport.RemoteEndPoint);
        LocalAddress = FormatEndPoint(transport.LocalEndPoint);
        CreatedMs = LastInteractionMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        Authenticated = server.Config.RequirePass is null;
        _work = new BatchWork(this);
        int shards = server.Keyspace.ShardCount;
        _parks = new ParkWork[shards];
        for (int i = 0; i < shards; i++)
            _parks[i] = new ParkWork();
        _involvedShards = new bool[shards];
        _eviction = server.Keyspace.Eviction;
        FileDescriptor = transport.FileDescriptor;
    }

    /// <summary>The socket's descriptor (CLIENT LIST fd=, and what /proc and the monitor see).</summary>
    public long FileDescriptor { get; }

    public long Id { get; }
    public string Address { get; }
    public string LocalAddress { get; }
    public long CreatedMs { get; }
    public long LastInteractionMs { get; private set; }
    public RespWriter Reply { get; }
    public int DatabaseIndex { get; set; }
    public bool Authenticated { get; set; }
    public string? Name { get; set; }
    public string? LibName { get; set; }
    public string? LibVersion { get; set; }
    public ReplyMode ReplyMode { get; set; }
    /// <summary>CLIENT REPLY SKIP: the next command's reply is dropped.</summary>
    public bool SkipNextReply { get; set; }
    public bool NoEvict { get; set; }
    public bool NoTouch { get; set; }
    /// <summary>The command running or last run (CLIENT LIST cmd=).</summary>
    public CommandSpec? LastCommand { get; private set; }
    public long NetInputBytes { get; private set; }
    public long NetOutputBytes { get; private set; }
    public long CommandsProcessed { get; private set; }
    /// <summary>Bytes received but not yet parsed (CLIENT LIST qbuf).</summary>
    public long QueryBufferBytes { get; private set; }
    public long ArgvBytes => _batch.ArenaBytes;
    public long ArenaCapacity => _batch.ArenaCapacity;
    /// <summary>Free room in the argument arena (CLIENT LIST qbuf-free).</summary>
    public long QueryBufferFreeBytes => Math.Max(0, ArenaCapacity - ArgvBytes);
    public bool CloseAfterReply { get; set; }
    public bool Killed { get; private set; }

    /// <summary>
    /// Which client-output-buffer-limit applies (and what CLIENT LIST/KILL TYPE match): normal until
    /// the client subscribes, when the pub/sub commands make it <see cref="ClientClass.PubSub"/>.
    /// </summary>
    public ClientClass Class { get; set; } = ClientClass.Normal;

    /// <summary>
    /// Reply bytes produced but not yet accepted by the kernel (CLIENT LIST omem): the current
    /// batch's replies, or those of a flush the client is too slow to take.
    /// </summary>
    public long OutputBufferBytes => Math.Max(0, Reply.Produced - Math.Max(Volatile.Read(ref _flushedProduced), _transport.SentBytes));

    /// <summary>Output blocks (4 KB or more each) holding unsent replies, the one being filled included (CLIENT LIST oll).</summary>
    public long OutputBlocks => Math.Max(0, Reply.Blocks - Math.Max(Volatile.Read(ref _flushedBlocks), _transport.SentBlocks));

    /// <summary>True once the client went over its output buffer limits and is being closed.</summary>
    public bool OutputLimitReached => Volatile.Read(ref _outputLimitReached) != 0;

    /// <summary>The clients cron's once-a-second check, for a flush stuck on a client that does not read.</summary>
    internal void CheckOutputBuffer(long nowMs) => _outputGuard.Exceeded(nowMs);

    /// <summary>Largest unsent output since the previous call (INFO client_recent_max_output_buffer).</summary>
    internal long TakeOutputPeak() => _outputGuard.TakePeak();

    /// <summary>
    /// Over the output buffer limits: counted, logged with Redis's words, and dropped at once
    /// without sending what is buffered (Redis's asynchronous close of such clients). Callable from
    /// any thread (the reply writer on a shard executor, the cron); only the first call acts.
    /// </summary>
    internal void CloseForOutputLimit()
    {
        if (Interlocked.Exchange(ref _outputLimitReached, 1) != 0)
            return;
        _closing = true;
        _server.Stats.OutputBufferLimitDisconnect();
        // The cron will not see this client again: its peak goes in now.
        _server.Clients.RecentMaxOutputBuffer.Record(OutputBufferBytes, Environment.TickCount64 / 1000);
        _log.LogWarning("Client {Client} scheduled to be closed ASAP for overcoming of output buffer limits.",
            ClientDescription.Describe(this, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()));
        _transport.Abort("output buffer limits reached");
    }

    /// <summary>CLIENT KILL: stop reading, drop the connection; the loop releases its memory.</summary>
    public void Kill()
    {
        Killed = true;
        _closing = true;
        Blocked?.Interrupt(BlockOutcome.Interrupted);
        _transport.Abort("killed by CLIENT KILL");
    }

    public async Task RunAsync()
    {
        PipeReader input = _transport.Pipe.Input;
        PipeWriter output = _transport.Pipe.Output;
        long unconsumed = 0;
        try
        {
            ReadResult result = await input.ReadAsync();
            while (true)
            {
                ReadOnlySequence<byte> buffer = result.Buffer;
                long fresh = buffer.Length - unconsumed;
                if (fresh > 0)
                {
                    NetInputBytes += fresh;
                    _server.Stats.NetInput(fresh);
                    ThreadCounters.Current.NetInputBytes += fresh;
                    LastInteractionMs = WallClock.CoarseUnixMs();
                }

                string? protocolError = null;
                bool incomplete = false;
                while (!buffer.IsEmpty && !_closing && !CloseAfterReply)
                {
                    var status = Parse(ref buffer, out protocolError);
                    if (_batch.CommandCount > 0)
                    {
                        // Inline runs, and waits for runs handed to a shard's holder, happen in this
                        // frame, whose state machine lives as long as the connection: awaiting in a
                        // fresh one per hand-off allocated a box for most of them.
                        int next = RunShardRunsInline(0, out int runEnd, out bool handedOff);
                        while (handedOff)
                        {
                            await _handOff;
                            if (PendingBlock is not null)
                                break;
                            next = RunShardRunsInline(runEnd, out runEnd, out handedOff);
                        }
                        if (runEnd >= 0 || next < _batch.CommandCount)
                            await ExecuteBatchAsync(next, runEnd);
                    }
                    _batch.Clear();
                    if (status != ParseStatus.Parsed)
                    {
                        incomplete = status == ParseStatus.Incomplete;
                        break;
                    }
                }

                unconsumed = buffer.Length;
                // An open multibulk command's complete arguments were consumed into the arena:
                // they are still query buffer, as far as limits and CLIENT LIST go.
                QueryBufferBytes = unconsumed + _batch.PendingBytes;
                incomplete |= _batch.OpenArgsRemaining > 0;
                input.AdvanceTo(buffer.Start, buffer.End);
                // A command still arriving is where a client's memory grows: maxmemory-clients looks now.
                if (incomplete && fresh > 0)
                    _server.ClientEviction.InputGrew(this);

                if (protocolError is not null)
                {
                    _server.Stats.ProtocolError();
                    _log.LogInformation("Closing client id={Id} addr={Address}: {Error}", Id, Address, protocolError);
                    Reply.Muted = false;
                    Reply.Error("ERR " + protocolError); // as Redis's addReplyError words it
                    await FlushAsync(output);
                    return;
                }
                if (incomplete && QueryBufferBytes > _server.Config.Limits.ClientQueryBufferLimit)
                {
                    _server.Stats.QueryBufferDisconnect();
                    _log.LogWarning("Closing client id={Id} addr={Address} that reached max query buffer length ({Bytes} bytes)", Id, Address, QueryBufferBytes);
                    await FlushAsync(output); // the commands before the oversized one ran: send their replies
                    return;
                }
                // A cancelled read is a publisher waking this subscriber: flush its messages and read on.
                if (_closing || CloseAfterReply || result.IsCompleted || (result.IsCanceled && _closing))
                {
                    await FlushAsync(output);
                    return;
                }

                // More input already buffered: keep going and let the replies batch up.
                if (input.TryRead(out result))
                {
                    if (result.Buffer.Length > unconsumed || result.IsCompleted || result.IsCanceled)
                        continue;
                    input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
                }
                // Bytes still in the kernel's buffer are the next commands of this pipeline:
                // read them before flushing, so their replies leave in the same send.
                // A read that returned less than a full buffer drained the kernel's queue, so only
                // after a full one is it worth asking the kernel (one more syscall) what is left.
                bool morePending = fresh >= SocketClientTransport.MinimumReadBytes && _transport.InputPending;
                if (!morePending || Reply.PendingBytes > MaxUnflushedBytes)
                    await FlushAsync(output);
                if (Volatile.Read(ref _queryBufferTrim) != 0)
                    TrimQueryBuffer();
                result = await input.ReadAsync();
            }
        }
        catch (ConnectionResetException)
        {
        }
        catch (ConnectionAbortedException)
        {
        }
        catch (IOException)
        {
        }
        catch (ObjectDisposedException) when (_closing)
        {
        }
    }

    private async ValueTask FlushAsync(PipeWriter output)
    {
        if (OutputLimitReached)
            return; // the client is being dropped: what is buffered is not sent
        DrainPushes();
        var aof = _server.Aof;
        if (aof.Enabled)
        {
            // Nothing this client is told may depend on bytes a crash could still lose (under
            // "always" a crash of the machine, otherwise of the process): its own writes, or
            // others' writes its reads saw. One write or fdatasync covers everyone waiting.
            // While the disk fails, only its own writes hold it back, so reads go on.
            while (aof.Enabled)
            {
                var advanced = aof.DurabilityAdvanced;
                long target = aof.WriteError is null ? Math.Max(_aofWaitOffset, aof.AppendedOffset) : _aofWaitOffset;
                if (aof.AcknowledgedOffset >= target)
                    break;
                // Write the group ourselves unless someone else is writing it (or must: always).
                if (aof.TryWriteNow())
                    continue;
                await advanced;
            }
        }
        Reply.Commit();
        long written = Reply.TakeWrittenCount();
        if (written > 0)
        {
            NetOutputBytes += written;
            _server.Stats.NetOutput(written);
            ThreadCounters.Current.NetOutputBytes += written;
            // Sending counts as activity, as in Redis: a client reading a long reply is not idle.
            LastInteractionMs = WallClock.CoarseUnixMs();
            _outputGuard.BeforeFlush();
        }
        await output.FlushAsync();
        Volatile.Write(ref _flushedProduced, Reply.Produced);
        Volatile.Write(ref _flushedBlocks, Reply.Blocks);
        _outputGuard.AfterFlush();
    }

    /// <summary>Parses complete commands from the front of <paramref name="buffer"/>, slicing off what it consumed.</summary>
    private ParseStatus Parse(ref ReadOnlySequence<byte> buffer, out string? error)
    {
        var reader = new SequenceReader<byte>(buffer);
        error = null;
        ParseStatus status = ParseStatus.Parsed;
        while (!reader.End && (_batch.OpenArgsRemaining > 0 || (_batch.CommandCount < MaxCommandsPerBatch && _batch.ArenaBytes < RequestBatch.TargetArenaBytes)))
        {
            // Before AUTH, one command at a time: an AUTH must run before the next command is
            // parsed, so that command gets the authenticated limits, as in Redis.
            if (!Authenticated && _batch.CommandCount > 0)
                break;
            status = RespRequestParser.TryParse(ref reader, _batch, _server.Config.Limits, Authenticated, out error);
            if (status != ParseStatus.Parsed)
                break;
            // RESET logs the client out when a password is set: what follows it must be parsed
            // with the unauthenticated limits, so it ends the batch.
            if (_server.Config.RequirePass is not null && EndsWithReset())
                break;
        }
        buffer = buffer.Slice(reader.Position);
        return status;
    }

    private bool EndsWithReset()
    {
        int count = _batch.CommandCount;
        return count > 0 && NumberFormat.EqualsIgnoreCase(_batch[count - 1][0], "reset"u8);
    }

    private enum Route { Immediate, Shard, Coordinated }

    /// <summary>
    /// The common case without an await (inline mode): from command <paramref name="i"/>, runs
    /// consecutive single-shard runs under their shard's lock until the batch ends or something
    /// needs waiting for. Returns the first command not run. <paramref name="handedOff"/>: the run
    /// [returned, <paramref name="runEnd"/>) went to the shard's holder; await <see cref="_handOff"/>.
    /// Otherwise <paramref name="runEnd"/> is -1, or the end of a run that left a blocked command
    /// to deal with (<see cref="ExecuteBatchAsync"/> does).
    /// </summary>
    private int RunShardRunsInline(int i, out int runEnd, out bool handedOff)
    {
        runEnd = -1;
        handedOff = false;
        int count = _batch.CommandCount;
        if (_specs.Length < count)
            _specs = new CommandSpec?[Math.Max(count, _specs.Length * 2)];
        var keyspace = _server.Keyspace;
        if (keyspace.Mode != ExecutionMode.Inline)
            return i;
        while (i < count && !_closing && !CloseAfterReply)
        {
            if (Classify(i, out int shardIndex) != Route.Shard || (_specs[i]!.Flags & MayRunLong) != 0)
                return i;
            int end = RunEnd(i, shardIndex);
            _handOff = _work.Prepare(i, end);
            if (!keyspace.Shards[shardIndex].RunOrHandOff(_work))
            {
                runEnd = end;
                handedOff = true;
                return i;
            }
            if (PendingBlock is not null)
            {
                runEnd = end;
                return i;
            }
            i = end;
        }
        return i;
    }

    /// <summary>Where the run of commands for <paramref name="shardIndex"/> that starts at <paramref name="i"/> ends: a command that may block ends it, as what follows waits until it is served.</summary>
    private int RunEnd(int i, int shardIndex)
    {
        int count = _batch.CommandCount;
        int end = i + 1;
        while (end < count && (_specs[end - 1]!.Flags & CommandFlags.Blocking) == 0 && Classify(end, out int next, atHead: false) == Route.Shard && next == shardIndex)
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
    private async ValueTask ExecuteBatchAsync(int i, int runEnd)
    {
        int count = _batch.CommandCount;
        var keyspace = _server.Keyspace;
        while (true)
        {
            if (runEnd >= 0)
            {
                // The run [i, runEnd) has ended: a blocking command ends a run, and is waited on
                // here (or run again, when its wait says so).
                i = await WaitIfBlockedAsync() == BlockOutcome.Retry ? runEnd - 1 : runEnd;
                runEnd = -1;
            }
            // After QUIT (or CLIENT KILL of itself) nothing more runs, as in Redis.
            if (i >= count || _closing || CloseAfterReply)
                return;
            Route route = Classify(i, out int shardIndex);
            if (_specs[i] is { } spec && ((spec.Flags & MayRunLong) != 0 || (ReferenceEquals(spec, _server.Commands.Exec) && QueuedMayRunLong())))
                await LeaveSocketThreadAsync();
            if (route == Route.Immediate)
            {
                ExecuteCommand(i);
                CommitLoggedWrites();
                if (await WaitIfBlockedAsync() != BlockOutcome.Retry)
                    i++;
                continue;
            }
            if (route == Route.Coordinated)
            {
                await ExecuteCoordinatedAsync(i);
                if (await WaitIfBlockedAsync() != BlockOutcome.Retry)
                    i++;
                continue;
            }

            runEnd = RunEnd(i, shardIndex);
            Shard shard = keyspace.Shards[shardIndex];
            var done = _work.Prepare(i, runEnd);
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

    /// <summary>Set by a blocking command that found nothing: the connection waits on it before running anything else.</summary>
    internal BlockedClient? PendingBlock { get; set; }

    /// <summary>The wait this connection is in (CLIENT LIST flag b, CLIENT UNBLOCK), or null.</summary>
    public BlockedClient? Blocked { get; private set; }

    private void TimeoutReply(BlockedClient block)
    {
        if (block.TimeoutIsNullBulk)
            Reply.Null();
        else
            Reply.NullArray();
    }

    /// <summary>True while EXEC runs a transaction: blocking commands answer at once instead of waiting.</summary>
    public bool InTransaction { get; internal set; }

    /// <summary>Which command of the current batch is running (a blocked client is served by it).</summary>
    internal int CurrentCommandIndex { get; private set; }

    internal ArgList BatchArgs(int index) => _batch[index];
    internal CommandSpec? SpecAt(int index) => _specs[index];
    internal DataServer Server => _server;

    /// <summary>How often a blocked client checks that its connection is still there.</summary>
    private const int BlockedCheckMs = 1000;

    /// <summary>
    /// Waits out a command that blocked: until another client's write serves it, its timeout
    /// passes (a null reply), CLIENT UNBLOCK, or the client goes away. Nothing is read meanwhile;
    /// the connection is checked once a second so a client that hung up does not wait for ever.
    /// </summary>
    private async ValueTask<BlockOutcome> WaitIfBlockedAsync()
    {
        if (PendingBlock is not { } block)
            return BlockOutcome.Served;
        PendingBlock = null;
        Blocked = block;
        try
        {
            await LeaveSocketThreadAsync();
            while (true)
            {
                long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
                long wait = block.DeadlineUnixMs == 0 ? BlockedCheckMs : Math.Min(BlockedCheckMs, block.DeadlineUnixMs - now);
                bool gone = _closing || _transport.PeerClosed;
                if ((wait <= 0 || gone) && block.TryAbandon())
                {
                    if (gone)
                    {
                        _closing = true;
                        return BlockOutcome.Interrupted;
                    }
                    TimeoutReply(block);
                    return BlockOutcome.Served;
                }
                if (wait > 0 && !block.Done.Task.IsCompleted)
                {
                    using var cancel = new CancellationTokenSource();
                    await Task.WhenAny(block.Done.Task, Task.Delay((int)wait, cancel.Token));
                    cancel.Cancel();
                }
                if (!block.Done.Task.IsCompleted)
                    continue;
                var outcome = await block.Done.Task;
                switch (outcome)
                {
                    case BlockOutcome.UnblockedAsTimeout:
                        TimeoutReply(block);
                        break;
                    case BlockOutcome.UnblockedWithError:
                        Reply.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
                        break;
                    case BlockOutcome.Interrupted:
                        _closing = true;
                        break;
                }
                return outcome;
            }
        }
        finally
        {
            Blocked = null;
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
        CommandSpec? spec = _server.Commands.Find(args[0]);
        if (spec is not null && spec.Subcommands is not null && args.Count >= 2)
            spec = spec.FindSubcommand(args[1]) ?? spec;
        _specs[index] = spec;
        if (spec is null || spec.Handler is null || !spec.AcceptsArgCount(args.Count)
            || (!Authenticated && (spec.Flags & CommandFlags.NoAuth) == 0))
            return Route.Immediate;
        if ((spec.Flags & CommandFlags.Connection) != 0)
            return Route.Immediate;
        if (_transaction is { } transaction)
        {
            // Queued commands touch no data; EXEC holds what its queue and watched keys need,
            // worked out only when it is next, once everything before it has been queued.
            if (transaction.InMulti && (spec.Flags & CommandFlags.TransactionControl) == 0)
                return Route.Immediate;
            if (ReferenceEquals(spec, _server.Commands.Exec))
                return atHead ? ClassifyExec(transaction, out shardIndex) : Route.Immediate;
        }
        var keyspace = _server.Keyspace;
        if ((spec.Flags & CommandFlags.AllShards) != 0)
        {
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

    /// <summary>Parks every involved shard (ascending order), runs the command here, releases them.</summary>
    private async ValueTask ExecuteCoordinatedAsync(int index)
    {
        var shards = _server.Keyspace.Shards;
        if (_server.Keyspace.Mode == ExecutionMode.Inline)
        {
            if (!TryEnterInvolvedShards(shards))
            {
                await LeaveSocketThreadAsync();
                for (int s = 0; s < shards.Length; s++)
                    if (_involvedShards[s])
                        shards[s].EnterInline();
            }
            try
            {
                ExecuteCommand(index);
                CommitLoggedWrites();
            }
            finally
            {
                for (int s = shards.Length - 1; s >= 0; s--)
                    if (_involvedShards[s])
                        shards[s].ExitInline();
            }
            return;
        }

        for (int s = 0; s < shards.Length; s++)
            if (_involvedShards[s])
                await _parks[s].Park(shards[s]);
        try
        {
            ExecuteCommand(index);
            CommitLoggedWrites();
        }
        finally
        {
            for (int s = 0; s < shards.Length; s++)
                if (_involvedShards[s])
                    _parks[s].Release();
        }
    }

    /// <summary>Takes every involved shard (ascending order) if each comes within the socket thread's wait; else holds none.</summary>
    private bool TryEnterInvolvedShards(Shard[] shards)
    {
        for (int s = 0; s < shards.Length; s++)
        {
            if (!_involvedShards[s] || shards[s].TryEnterInline(SocketThreadShardWaitMs))
                continue;
            for (int held = s - 1; held >= 0; held--)
                if (_involvedShards[held])
                    shards[held].ExitInline();
            return false;
        }
        return true;
    }

    /// <summary>
    /// Moves the rest of this batch to a thread pool thread when it runs on a socket engine thread.
    /// With inline socket completions (Program.cs) commands run on the engine's own threads, which
    /// also serve every other socket in the process, the HTTP API's included: a long command or a
    /// wait for a shard a long command holds would leave those sockets unserved, so the operator
    /// could not even ask what the server is doing. Pool threads are the runtime's to multiply.
    /// </summary>
    private static async ValueTask LeaveSocketThreadAsync()
    {
        if (!Thread.CurrentThread.IsThreadPoolThread)
            await Task.Yield();
    }

    /// <summary>Runs command <paramref name="index"/> of the current batch on the calling thread.</summary>
    internal void ExecuteCommand(int index)
    {
        CurrentCommandIndex = index;
        ExecuteCommand(_batch[index], _specs[index]);
    }

    /// <summary>
    /// Refuses a command before it runs, as Redis's rejectCommand: inside MULTI the refusal fails
    /// the transaction; a refused EXEC discards it and says why ("EXECABORT ... because of: " and
    /// the error without its generic ERR code, as Redis prints it).
    /// </summary>
    private void Reject(ThreadCounters counters, CommandSpec spec, string error)
    {
        counters.Rejected[spec.Id]++;
        if (ReferenceEquals(spec, _server.Commands.Exec) && _transaction is { InMulti: true } transaction)
        {
            transaction.EndMulti();
            transaction.Unwatch();
            Reply.Error("EXECABORT Transaction discarded because of: " + (error.StartsWith("ERR ", StringComparison.Ordinal) ? error[4..] : error));
            return;
        }
        Reply.Error(error);
        FailTransaction();
    }

    /// <summary>Runs one command on the calling thread, which holds the shards it needs.</summary>
    private void ExecuteCommand(ArgList args, CommandSpec? spec)
    {
        // CLIENT REPLY SKIP set SkipNextReply while it ran: this is the command whose reply it drops.
        bool skip = SkipNextReply;
        SkipNextReply = false;
        Reply.Muted = ReplyMode == ReplyMode.Off || skip;

        var counters = ThreadCounters.Current;
        if (spec is null)
        {
            counters.UnknownCommands++;
            Reply.Error(UnknownCommandMessage(args));
            FailTransaction();
            return;
        }
        if (!Authenticated && (spec.Flags & CommandFlags.NoAuth) == 0)
        {
            Reject(counters, spec, Errors.NoAuth);
            return;
        }
        if (spec.Handler is null)
        {
            // A container command (CLIENT, CONFIG...) whose subcommand was not found.
            Reject(counters, spec, args.Count < 2
                ? Errors.WrongArity(spec.FullName)
                : Errors.UnknownSubcommand(System.Text.Encoding.UTF8.GetString(args[1]), spec.Name));
            return;
        }
        if (!spec.AcceptsArgCount(args.Count))
        {
            Reject(counters, spec, Errors.WrongArity(spec.FullName));
            return;
        }
        // Redis's processCommand, over maxmemory inside MULTI: queueing takes memory too, so while
        // nothing can be evicted no command is queued; EXEC, DISCARD, QUIT and RESET still pass.
        if (_transaction is { InMulti: true } && _eviction.MaxMemory != 0 && !MaxMemoryGate.PassesInMulti(spec)
            && _eviction.NeedsEviction() && MaxMemoryGate.RefusesWithoutShards(_server.Keyspace, denyOom: true))
        {
            Reject(counters, spec, Errors.OutOfMemory);
            return;
        }
        // Redis's MISCONF (processCommand, before queueing and the subscribed check): the disk
        // cannot take writes, so none is accepted, nor an EXEC that queued one, and PING fails too
        // so health checks notice; reads go on.
        if (_server.Aof.WriteError is { } diskError
            && (spec.IsWrite || ReferenceEquals(spec, _server.Commands.Ping) || (ReferenceEquals(spec, _server.Commands.Exec) && QueuedAny(CommandFlags.Write))))
        {
            Reject(counters, spec, "MISCONF Errors writing to the AOF file: " + diskError);
            return;
        }
        if (RefusedWhileSubscribed(spec))
        {
            Reject(counters, spec, $"ERR Can't execute '{spec.FullName}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context");
            return;
        }
        // Between MULTI and EXEC commands are checked, then queued (copied out of the batch).
        if (_transaction is { InMulti: true } transaction && (spec.Flags & CommandFlags.TransactionControl) == 0)
        {
            if ((spec.Flags & CommandFlags.NoMulti) != 0)
            {
                Reject(counters, spec, "ERR Command not allowed inside a transaction");
                return;
            }
            transaction.Enqueue(args, spec);
            Reply.Queued();
            return;
        }

        var aof = _server.Aof;
        // Reads log too while the AOF is on: a key they find expired is deleted, and logged as DEL.
        Persistence.AofRecordBuffer? logged = null;
        if (aof.Enabled)
        {
            logged = _loggedWrites ??= new Persistence.AofRecordBuffer();
            Engine.ExpiryLog.Current = logged;
        }
        // maxmemory (one field read when unset, three when under): evict in this command's shards,
        // or refuse it. EXEC is refused whole when it queued a denyoom command; the commands it
        // runs are not checked one by one (Redis's call() does not), so it never half-runs.
        if (_eviction.MaxMemory != 0 && !InTransaction && _eviction.NeedsEviction()
            && (ReferenceEquals(spec, _server.Commands.Exec)
                ? _transaction is { InMulti: true } && MaxMemoryGate.RefusesWithoutShards(_server.Keyspace, denyOom: QueuedAny(CommandFlags.DenyOom))
                : MaxMemoryGate.Refuses(_server.Keyspace, spec, args)))
        {
            Engine.ExpiryLog.Current = null;
            Reject(counters, spec, Errors.OutOfMemory);
            return;
        }

        LastCommand = spec;
        long started = Stopwatch.GetTimestamp();
        int database = DatabaseIndex;
        var context = new CommandContext(_server, this, _server.Keyspace, args, spec, WallClock.UnixMs(started),
            records: spec.IsWrite ? logged : null);
        counters.InFlight.Begin(spec.FullName, Id, database, started);
        try
        {
            spec.Handler(ref context);
        }
        catch (Memory.BlockTooLargeException ex)
        {
            // The request, not the server, is at fault: an error reply, nothing to log.
            context.Error("ERR " + ex.Message);
        }
        catch (Exception ex) when (ex is not OutOfMemoryException)
        {
            _log.LogError(ex, "Command {Command} failed for client id={Id}", spec.FullName, Id);
            counters.InternalErrors++;
            context.Error($"ERR internal error while executing '{spec.FullName}': {ex.Message}");
        }
        counters.InFlight.End();
        if (logged is not null)
        {
            Engine.ExpiryLog.Current = null;
            if (spec.IsWrite && !context.Failed && context.Logging == AofLogging.Verbatim)
            {
                logged.BeginCommand(database, args.Count);
                for (int i = 0; i < args.Count; i++)
                    logged.Argument(args[i]);
                logged.EndCommand();
            }
        }
        if (spec.IsWrite && !context.Failed && context.Logging != AofLogging.Nothing)
        {
            if (WatchedKeys.AnyWatched)
                TouchWatchedKeys(spec, args);
            if (spec.Event is not null && KeyspaceNotifier.Enabled(spec.EventType))
                NotifyWrittenKeys(spec, args, database);
        }
        // Only writes defer events (the "del" after an emptying pop); reads pay nothing here.
        if (spec.IsWrite)
            KeyspaceNotifier.FlushDeferred();
        // Clients blocked on keys this command created are served now, before anything else
        // runs on the shard (after the whole transaction inside EXEC); their pops are logged
        // after this command, into the same buffer.
        if (ReadyKeys.AnyReady && !InTransaction)
        {
            Engine.ExpiryLog.Current = logged;
            ReadyKeys.ServeAll(context.ExpireClockMs);
            Engine.ExpiryLog.Current = null;
        }
        long elapsed = Stopwatch.GetTimestamp() - started;
        counters.Calls[spec.Id]++;
        counters.Ticks[spec.Id] += elapsed;
        counters.Latency.Record(spec.Id, elapsed);
        _server.LatencyMonitor.RecordCommand(spec, elapsed);
        if (_server.SlowLog.IsSlow(elapsed) && (spec.Flags & CommandFlags.SkipSlowlog) == 0)
            _server.SlowLog.Add(spec, args, _server.Config, elapsed * 1_000_000 / Stopwatch.Frequency, Address, Name ?? "");
        if (context.Failed)
            counters.Failed[spec.Id]++;
        CommandsProcessed++;
    }

    /// <summary>
    /// Hands the writes logged since the last call to the AOF. Called while the shards they touched
    /// are still held, so two clients' writes to one key reach the file in the order they ran.
    /// </summary>
    internal void CommitLoggedWrites()
    {
        if (_loggedWrites is { IsEmpty: false } logged)
        {
            _aofWaitOffset = _server.Aof.Append(logged);
            logged.Clear();
        }
        // Clients served by these writes may now reply: their pops are in the AOF's hands.
        ReadyKeys.ReleaseServed();
    }

    private static string UnknownCommandMessage(ArgList args)
    {
        var text = new System.Text.StringBuilder("ERR unknown command '");
        text.Append(Errors.Truncate(System.Text.Encoding.UTF8.GetString(args[0]))).Append("', with args beginning with: ");
        // Redis quotes arguments while the list is under 128 characters, each cut to what is left of them.
        int listStart = text.Length;
        for (int i = 1; i < args.Count && text.Length - listStart < 128; i++)
        {
            ReadOnlySpan<byte> arg = args[i];
            int room = 128 - (text.Length - listStart);
            text.Append('\'').Append(System.Text.Encoding.UTF8.GetString(arg.Length > room ? arg[..room] : arg)).Append("' ");
        }
        return text.ToString();
    }

    private static string FormatEndPoint(EndPoint? endPoint) => endPoint switch
    {
        IPEndPoint { Address.IsIPv4MappedToIPv6: true } ip => $"{ip.Address.MapToIPv4()}:{ip.Port}",
        IPEndPoint { AddressFamily: System.Net.Sockets.AddressFamily.InterNetworkV6 } ip => $"[{ip.Address}]:{ip.Port}",
        IPEndPoint ip => $"{ip.Address}:{ip.Port}",
        null => "",
        _ => endPoint.ToString() ?? "",
    };

    public void Dispose()
    {
        _closing = true;
        _server.ClientEviction.Closed(this);
        _batch.Dispose();
        _loggedWrites?.Dispose();
        _transaction?.Dispose();
        UnsubscribeAll(deliverQueued: false);
    }
}
