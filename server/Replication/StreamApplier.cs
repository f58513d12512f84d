using System.Buffers;
using System.Buffers.Text;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Replication;

/// <summary>
/// Applies the master's command stream: parses what the link read with the server's own RESP
/// parser and runs each command through the <see cref="Execution.CommandExecutor"/> for the
/// <see cref="MasterClient"/>, a parsed batch at a time with every shard held
/// (<see cref="KeyspaceHold"/>). Nothing is replied except REPLCONF ACK to REPLCONF GETACK.
/// The offset (Redis's reploff, kept in <see cref="ReplicationIds.MasterReplOffset"/>) counts the
/// bytes of complete commands applied, and of whole MULTI ... EXEC blocks only once their EXEC ran,
/// so a reconnection asks for the first byte of what did not run. Applied spans are handed to
/// <see cref="ReplicationRole.StreamApplied"/> with their offset before the offset moves.
/// Allocates nothing per command: the batch, the positions and the ACK buffer are reused.
/// </summary>
internal sealed class StreamApplier : IDisposable
{
    private const int MaxCommandsPerBatch = 1024;
    // The master is trusted as Redis trusts it: no request size limits on its stream.
    private static readonly ProtocolLimits s_limits = new() { ProtoMaxBulkLength = long.MaxValue, ClientQueryBufferLimit = long.MaxValue };

    private readonly DataServer _server;
    private readonly ReplicationRole _role;
    private readonly MasterClient _client;
    private readonly MasterLink _link;
    private readonly RequestBatch _batch = new();
    private readonly KeyspaceHold _hold;
    private readonly Action _applyHeld;
    private readonly byte[] _ack = new byte[64];
    // Where each parsed command ends, relative to the connection's Begin (the first unapplied byte).
    private int[] _ends = new int[MaxCommandsPerBatch];
    // Bytes after Begin the parser has consumed (a command being received included).
    private int _parsed;
    private MasterConnection? _connection;
    private long _pendingAck = -1;
    private int _applied;

    public StreamApplier(DataServer server, ReplicationRole role, MasterLink link, MasterClient client)
    {
        _server = server;
        _role = role;
        _link = link;
        _client = client;
        _hold = new KeyspaceHold(server.Keyspace);
        _applyHeld = ApplyHeld;
    }

    /// <summary>Commands applied since start (the apply rate's numerator).</summary>
    public long CommandsApplied { get; private set; }

    /// <summary>A new connection's stream starts at its buffer's Begin; anything half-parsed before is dropped.</summary>
    public void Begin(MasterConnection connection)
    {
        _connection = connection;
        _batch.Discard();
        _parsed = 0;
        _pendingAck = -1;
    }

    /// <summary>
    /// Applies every complete command the buffer holds, batch after batch; answers the GETACKs
    /// among them. False when the link was replaced or stopped meanwhile (nothing more applies).
    /// </summary>
    public bool ApplyAvailable()
    {
        var connection = _connection!;
        while (true)
        {
            int count = Parse(connection);
            if (count == 0)
                return true;
            _applied = 0;
            _hold.Run(_applyHeld);
            _batch.Clear();
            if (_applied < 0)
                return false;
            connection.Begin += _applied;
            _parsed -= _applied;
            if (_pendingAck >= 0)
            {
                SendAck(connection, _pendingAck);
                _pendingAck = -1;
            }
        }
    }

    /// <summary>Parses complete commands after what was parsed before; returns how many the batch now holds.</summary>
    private int Parse(MasterConnection connection)
    {
        int start = connection.Begin + _parsed;
        int length = connection.End - start;
        if (length <= 0)
            return _batch.CommandCount;
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(connection.Buffer, start, length));
        while (!reader.End && _batch.CommandCount < MaxCommandsPerBatch)
        {
            int before = _batch.CommandCount;
            var status = RespRequestParser.TryParse(ref reader, _batch, s_limits, authenticated: true, out string? error);
            if (status == ParseStatus.Error)
                throw new InvalidDataException("Protocol error from MASTER: " + error);
            if (status == ParseStatus.Incomplete)
                break;
            if (_batch.CommandCount > before)
                _ends[_batch.CommandCount - 1] = _parsed + (int)reader.Consumed;
        }
        _parsed += (int)reader.Consumed;
        return _batch.CommandCount;
    }

    /// <summary>The batch, with every shard held: the master client's scope attached to each.</summary>
    private void ApplyHeld()
    {
        // Stopped or replaced (REPLICAOF, which holds every shard too, ran first): nothing applies.
        if (!_link.IsCurrent)
        {
            _applied = -1;
            return;
        }
        var shards = _server.Keyspace.Shards;
        var previous = shards[0].Effects;
        var effects = _client.Effects;
        foreach (var shard in shards)
            shard.Effects = effects;
        var executor = _server.Executor;
        var ids = _role.Ids;
        int applied = 0;
        try
        {
            int count = _batch.CommandCount;
            for (int i = 0; i < count; i++)
            {
                ArgList args = _batch[i];
                if (IsGetAck(args))
                {
                    // Redis answers with the offset before the GETACK itself (reploff moves after the command).
                    _pendingAck = ids.MasterReplOffset + applied;
                }
                else
                {
                    _client.CurrentCommandIndex = i;
                    executor.Execute(_client, args, executor.Find(args));
                    // The master sends effects, never a command that waits; one that would is not kept waiting.
                    _client.PendingBlock = null;
                    _client.RunElsewhere = false;
                }
                if (!_client.InMulti)
                    applied = _ends[i];
            }
            CommandsApplied += count;
        }
        finally
        {
            // The writes reach the AOF (and the effects are released) while the shards are held.
            executor.CommitLoggedWrites(_client);
            foreach (var shard in shards)
                shard.Effects = previous;
            if (applied > 0)
            {
                var connection = _connection!;
                long from = ids.MasterReplOffset;
                _role.StreamApplied?.Invoke(connection.Buffer.AsSpan(connection.Begin, applied), from);
                ids.Advance(applied);
            }
            _applied = applied;
        }
    }

    private static bool IsGetAck(ArgList args)
        => args.Count >= 2 && NumberFormat.EqualsIgnoreCase(args[0], "replconf"u8) && NumberFormat.EqualsIgnoreCase(args[1], "getack"u8);

    /// <summary>REPLCONF ACK &lt;offset&gt;, written into a reused buffer.</summary>
    public void SendAck(MasterConnection connection, long offset)
    {
        Span<byte> digits = stackalloc byte[20];
        Utf8Formatter.TryFormat(offset, digits, out int n);
        ReadOnlySpan<byte> head = "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$"u8;
        head.CopyTo(_ack);
        int at = head.Length;
        Utf8Formatter.TryFormat(n, _ack.AsSpan(at), out int w);
        at += w;
        _ack[at++] = (byte)'\r';
        _ack[at++] = (byte)'\n';
        digits[..n].CopyTo(_ack.AsSpan(at));
        at += n;
        _ack[at++] = (byte)'\r';
        _ack[at++] = (byte)'\n';
        connection.Send(_ack.AsSpan(0, at));
    }

    /// <summary>The connection ended: a transaction the master had not finished is dropped (it will be sent again).</summary>
    public void Reset()
    {
        _batch.Discard();
        _parsed = 0;
        _connection = null;
        _client.ResetTransaction();
    }

    public void Dispose() => _batch.Dispose();
}
