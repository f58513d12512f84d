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
using Diagnostics.Server.Execution;
using Diagnostics.Server.PubSub;
using Diagnostics.Server.Protocol;
using Microsoft.AspNetCore.Connections;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Network;

/// <summary>
/// One network client: the loop that reads requests, parses them into batches, hands them to its
/// <see cref="ShardRouter"/> (which runs each through the <see cref="CommandExecutor"/> on whatever
/// thread holds its shards) and writes the replies in order. Its session state (database,
/// protocol, auth, transaction, subscriptions) is the <see cref="ClientSession"/> it is.
///
/// Reading: every complete command in the buffer is parsed; the reader is advanced to the end of
/// the last complete command and marked examined to the end of the buffer, so an incomplete
/// command waits for new bytes instead of spinning. Writing: replies accumulate in the pipe and
/// are flushed only when no more input is already buffered, so a pipeline of N commands costs one
/// send, not N.
/// </summary>
public sealed partial class ClientConnection : ClientSession
{
    private const int MaxCommandsPerBatch = 1024;
    // A client that keeps sending without pause still gets its replies at least this often.
    private const int MaxUnflushedBytes = 64 * 1024;

    private readonly DataServer _server;
    private readonly ClientTransport _transport;
    private readonly ILogger _log;
    private readonly RequestBatch _batch = new();
    private readonly ShardRouter _router;
    private volatile bool _closing;
    private readonly OutputBufferGuard _outputGuard;
    private int _outputLimitReached;
    // Reply bytes and blocks produced as of the last completed flush: all of them were sent by then.
    private long _flushedProduced;
    private long _flushedBlocks;

    public ClientConnection(DataServer server, ClientTransport transport, ILogger log)
        : base(server.Clients.NextId(), new RespWriter(transport.Pipe.Output), log, authenticated: server.Acl.DefaultNeedsNoPassword, server.KeyspaceEvents)
    {
        _server = server;
        // As Redis: every connection starts as the default user, authenticated when it needs no password.
        User = server.Acl.Default;
        _transport = transport;
        _log = log;
        _outputGuard = new OutputBufferGuard(this, server.Config);
        Reply.Guard = _outputGuard;
        Address = EndPointText.Format(transport.RemoteEndPoint);
        LocalAddress = EndPointText.Format(transport.LocalEndPoint);
        CreatedMs = LastInteractionMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        _router = new ShardRouter(this, server, _batch);
        PubSub = new ClientSubscriptions(server.PubSub, this);
        FileDescriptor = transport.FileDescriptor;
    }

    /// <summary>The socket's descriptor (CLIENT LIST fd=, and what /proc and the monitor see).</summary>
    public long FileDescriptor { get; }

    public override string Address { get; }
    public string LocalAddress { get; }
    public long CreatedMs { get; }
    public long LastInteractionMs { get; private set; }
    public long NetInputBytes { get; private set; }
    /// <summary>Reply bytes the kernel accepted (CLIENT LIST tot-net-out), as tot-net-in counts what was read; a transport that cannot tell counts completed flushes.</summary>
    public long NetOutputBytes => _transport.CountsSends ? _transport.SentBytes : Volatile.Read(ref _flushedBytes);
    private long _flushedBytes;
    /// <summary>Bytes received but not yet parsed (CLIENT LIST qbuf).</summary>
    public long QueryBufferBytes { get; private set; }
    public long ArgvBytes => _batch.ArenaBytes;
    public long ArenaCapacity => _batch.ArenaCapacity;
    /// <summary>Free room in the argument arena (CLIENT LIST qbuf-free).</summary>
    public long QueryBufferFreeBytes => Math.Max(0, ArenaCapacity - ArgvBytes);
    public bool Killed { get; private set; }

    /// <summary>Commands queued since MULTI, or -1 outside one (CLIENT LIST multi=).</summary>
    public int QueuedCommands => Transaction?.QueuedCommands ?? -1;

    /// <summary>Bytes the queued commands hold (CLIENT LIST multi-mem).</summary>
    public long QueuedBytes => Transaction?.QueuedBytes ?? 0;

    /// <summary>True once the connection is closing or the client asked to (QUIT): nothing more runs.</summary>
    internal bool Stopping => _closing || CloseAfterReply;

    /// <summary>
    /// Reply bytes produced but not yet accepted by the kernel (CLIENT LIST omem): the current
    /// batch's replies, or those of a flush the client is too slow to take.
    /// </summary>
    public long OutputBufferBytes => Math.Max(0, Reply.Produced - Math.Max(Volatile.Read(ref _flushedProduced), _transport.SentBytes));

    /// <summary>
    /// Everything produced or published for the client and not yet accepted by the kernel (CLIENT
    /// LIST omem, and what the output buffer limits apply to): unsent replies and queued push
    /// messages (pub/sub, MONITOR lines, invalidations).
    /// </summary>
    public long UnsentBytes => OutputBufferBytes + PendingPushBytes;

    /// <summary>Seconds the client has had unsent output and taken none of it (0 when it has none or is reading).</summary>
    public long OutputStalledSeconds => _outputGuard.StalledSeconds(Environment.TickCount64);

    /// <summary>Output blocks (4 KB or more each) holding unsent replies, the one being filled included (CLIENT LIST oll).</summary>
    public long OutputBlocks => Math.Max(0, Reply.Blocks - Math.Max(Volatile.Read(ref _flushedBlocks), _transport.SentBlocks));

    /// <summary>True once the client went over its output buffer limits and is being closed.</summary>
    public bool OutputLimitReached => Volatile.Read(ref _outputLimitReached) != 0;

    /// <summary>The clients cron's once-a-second check, for a flush stuck on a client that does not read.</summary>
    internal void CheckOutputBuffer(long nowMs) => _outputGuard.Exceeded(nowMs);

    /// <summary>The clients cron's look at whether the client takes its output (<see cref="OutputStalledSeconds"/>).</summary>
    internal void TrackOutputProgress(long nowMs) => _outputGuard.TrackProgress(nowMs);

    /// <summary>Commands refused with TOOBUSY (max-waiting-commands); written by the connection's own router only.</summary>
    public long TooBusyRefusals { get; internal set; }

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
        _server.Clients.RecentMaxOutputBuffer.Record(UnsentBytes, Environment.TickCount64 / 1000);
        RecordClosed("output buffer limit", _server.Config.OutputBufferLimits[Class].ToString());
        _log.LogWarning("Client {Client} scheduled to be closed ASAP for overcoming of output buffer limits.",
            ClientDescription.Describe(this, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()));
        _transport.Abort("output buffer limits reached");
    }

    /// <summary>Remembers this client as closed for a limit (the doctor names it; the log said it once).</summary>
    internal void RecordClosed(string reason, string limit) => _server.Clients.Closed.Record(new Contracts.ClosedClient
    {
        UnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(),
        Reason = reason,
        Id = Id,
        Address = Address,
        Name = Name ?? "",
        Class = Class.ToString().ToLowerInvariant(),
        OutputMemoryBytes = UnsentBytes,
        QueryBufferBytes = QueryBufferBytes,
        TotalMemoryBytes = MemoryUsage,
        LastCommand = LastCommand?.FullName ?? "NULL",
        Limit = limit,
    });

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
                        _router.BeginBatch();
                        int next = _router.RunShardRunsInline(0, out int runEnd, out bool handedOff);
                        while (handedOff)
                        {
                            await _router.HandOff;
                            if (PendingBlock is not null)
                                break;
                            next = _router.RunShardRunsInline(runEnd, out runEnd, out handedOff);
                        }
                        if (runEnd >= 0 || next < _batch.CommandCount)
                            await _router.ExecuteBatchAsync(next, runEnd);
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
                    RecordClosed("query buffer limit", _server.Config.Limits.ClientQueryBufferLimit.ToString(System.Globalization.CultureInfo.InvariantCulture));
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
        DrainReplicaStream();
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
                long target = aof.WriteError is null ? Math.Max(AofWaitOffset, aof.AppendedOffset) : AofWaitOffset;
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
            // Sending counts as activity, as in Redis: a client reading a long reply is not idle.
            LastInteractionMs = WallClock.CoarseUnixMs();
            _outputGuard.BeforeFlush();
        }
        await output.FlushAsync();
        if (written > 0 && !_transport.CountsSends)
        {
            Volatile.Write(ref _flushedBytes, _flushedBytes + written);
            _server.Stats.NetOutput(written);
            ThreadCounters.Current.NetOutputBytes += written;
        }
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
            if (!_server.Acl.DefaultNeedsNoPassword && EndsWithReset())
                break;
        }
        buffer = buffer.Slice(reader.Position);
        return status;
    }

    public override string Describe() => ClientDescription.Describe(this, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());

    private bool EndsWithReset()
    {
        int count = _batch.CommandCount;
        return count > 0 && NumberFormat.EqualsIgnoreCase(_batch[count - 1][0], "reset"u8);
    }

    /// <summary>The wait this connection is in (CLIENT LIST flag b, CLIENT UNBLOCK), or null.</summary>
    public BlockedClient? Blocked { get; private set; }

    private void TimeoutReply(BlockedClient block)
    {
        if (block.TimeoutIsNullBulk)
            Reply.Null();
        else
            Reply.NullArray();
    }

    internal ArgList BatchArgs(int index) => _batch[index];
    internal CommandSpec? SpecAt(int index) => _router.SpecAt(index);
    internal DataServer Server => _server;

    /// <summary>How often a blocked client checks that its connection is still there.</summary>
    private const int BlockedCheckMs = 1000;

    /// <summary>
    /// Waits out a command that blocked: until another client's write serves it, its timeout
    /// passes (a null reply), CLIENT UNBLOCK, or the client goes away. Nothing is read meanwhile;
    /// the connection is checked once a second so a client that hung up does not wait for ever.
    /// </summary>
    internal async ValueTask<BlockOutcome> WaitIfBlockedAsync()
    {
        if (PendingBlock is not { } block)
            return BlockOutcome.Served;
        PendingBlock = null;
        Blocked = block;
        try
        {
            await ThreadPoolHop.FromSocketThread();
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
                    case BlockOutcome.Retry:
                        Reprocessing = true; // run again: MONITOR showed it already
                        break;
                    case BlockOutcome.UnblockedAsTimeout:
                        TimeoutReply(block);
                        break;
                    case BlockOutcome.UnblockedWithError:
                        Reply.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
                        break;
                    case BlockOutcome.UnblockedByRoleChange:
                        // What it waited for may now only come from a master elsewhere: it should ask there.
                        Reply.Error("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)");
                        CloseAfterReply = true;
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

    /// <summary>True while a command of this connection waits for CLIENT PAUSE to end (CLIENT LIST flag b, blocked_clients).</summary>
    public bool Paused { get; private set; }

    /// <summary>
    /// Waits for the current pause to end, without a thread: the caller checks the command again
    /// afterwards. Looks once a second whether the client hung up, as a blocked client does.
    /// </summary>
    internal async ValueTask WaitForPauseEndAsync(CommandSpec held)
    {
        // CLIENT LIST shows the command waiting, as Redis does.
        LastCommand = held;
        Paused = true;
        try
        {
            var ended = _server.Pause.Ended;
            while (!ended.IsCompleted && !_closing)
            {
                if (_transport.PeerClosed)
                {
                    _closing = true;
                    return;
                }
                using var cancel = new CancellationTokenSource();
                await Task.WhenAny(ended, Task.Delay(BlockedCheckMs, cancel.Token));
                cancel.Cancel();
            }
        }
        finally
        {
            Paused = false;
        }
    }

    /// <summary>
    /// Runs command <paramref name="index"/> of the current batch on the calling thread, which holds
    /// the shards it needs; <paramref name="refusal"/>: the router refuses it with this error instead
    /// (see CommandExecutor.Execute).
    /// </summary>
    internal void ExecuteCommand(int index, string? refusal = null)
    {
        CurrentCommandIndex = index;
        _server.Executor.Execute(this, _batch[index], _router.SpecAt(index), refusal);
    }

    /// <summary>Hands this connection's logged writes to the AOF, while the shards they touched are still held.</summary>
    internal void CommitLoggedWrites() => _server.Executor.CommitLoggedWrites(this);


    public override void Dispose()
    {
        _closing = true;
        _server.ClientEviction.Closed(this);
        _batch.Dispose();
        base.Dispose();
        UnsubscribeAll(deliverQueued: false);
        _server.Monitors.Remove(this);
        _server.Tracking.Disable(this);
    }
}
