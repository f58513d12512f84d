using System.Buffers;
using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Runs the commands of an append-only file against a keyspace, the way they ran when they were
/// logged: parsed with the server's own RESP parser, dispatched through the command table to the
/// same handlers, on a client whose replies are muted and for whom nothing expires (a replay must
/// see the keys the original commands saw). MULTI ... EXEC blocks are applied whole or not at all.
/// Stops at the first malformed byte with the file name and offset; a command cut off by the end
/// of the file is reported as a truncated tail for the caller to accept or refuse.
/// </summary>
public sealed class CommandReplayer : IDisposable
{
    private const int InitialBufferBytes = 1024 * 1024;
    private static readonly ProtocolLimits s_limits = new() { ProtoMaxBulkLength = long.MaxValue, ClientQueryBufferLimit = long.MaxValue };

    private readonly DataServer _server;
    private readonly Keyspace _keyspace;
    private readonly ReplayClient _client;
    private readonly RequestBatch _batch = new();
    private byte[] _buffer = ArrayPool<byte>.Shared.Rent(InitialBufferBytes);

    public CommandReplayer(DataServer server, Keyspace keyspace)
    {
        _server = server;
        _keyspace = keyspace;
        _client = new ReplayClient(server);
    }

    /// <summary>Commands applied so far, across files.</summary>
    public long Commands { get; private set; }

    /// <summary>
    /// Replays <paramref name="file"/> from byte <paramref name="start"/> (past an RDB preamble, if
    /// any). <paramref name="progress"/> is called after each buffer with the file offset reached.
    /// </summary>
    public FileReplayResult Replay(DiskFile file, long start, DiskIoPurpose purpose, Action<long>? progress = null)
    {
        // The caller holds every shard (or owns a private copy): the replay's silent scope is
        // theirs while it runs, so replayed writes raise no events and propagate nothing.
        var shards = _keyspace.Shards;
        var previous = new CommandEffects?[shards.Length];
        for (int i = 0; i < shards.Length; i++)
        {
            previous[i] = shards[i].Effects;
            shards[i].Effects = _client.Effects;
        }
        try
        {
            return ReplayHeld(file, start, purpose, progress);
        }
        finally
        {
            for (int i = 0; i < shards.Length; i++)
                shards[i].Effects = previous[i];
        }
    }

    private FileReplayResult ReplayHeld(DiskFile file, long start, DiskIoPurpose purpose, Action<long>? progress)
    {
        long fileLength = file.Length;
        long bufferOffset = start; // file offset of _buffer[0]
        int begin = 0, end = 0;
        long validEnd = start;     // end of the last command applied (or skipped annotation)
        long commandStart = start;
        long multiStart = -1;      // offset of an open MULTI, whose commands wait in the batch
        long commandsBefore = Commands;
        bool endOfFile = false;
        _client.DatabaseIndex = 0; // each file starts in database 0 and SELECTs its own, as Redis writes and reads them

        while (true)
        {
            if (!endOfFile)
            {
                // Keep the unparsed tail, then fill the rest of the buffer from the file.
                if (begin > 0)
                {
                    Buffer.BlockCopy(_buffer, begin, _buffer, 0, end - begin);
                    bufferOffset += begin;
                    end -= begin;
                    begin = 0;
                }
                if (end == _buffer.Length)
                    GrowBuffer();
                int read = file.Read(_buffer.AsSpan(end), bufferOffset + end, purpose);
                if (read == 0)
                    endOfFile = true;
                end += read;
                progress?.Invoke(bufferOffset + end);
            }

            var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(_buffer, begin, end - begin));
            long nowMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            while (!reader.End)
            {
                if (_batch.OpenArgsRemaining == 0)
                {
                    commandStart = bufferOffset + begin + reader.Consumed;
                    reader.TryPeek(out byte first);
                    if (first == (byte)'#')
                    {
                        // An annotation line (Redis 7 timestamps): skipped.
                        if (!reader.TryAdvanceTo((byte)'\n'))
                            break;
                        if (multiStart < 0)
                            validEnd = bufferOffset + begin + reader.Consumed;
                        continue;
                    }
                    if (first != (byte)'*')
                        throw BadFormat(file, commandStart, $"expected '*', got '{Printable(first)}'");
                }
                var status = RespRequestParser.TryParse(ref reader, _batch, s_limits, authenticated: true, out string? error);
                if (status == ParseStatus.Incomplete)
                    break;
                if (status == ParseStatus.Error)
                    throw BadFormat(file, commandStart, error!);
                int index = _batch.CommandCount - 1;
                if (index < 0)
                    continue; // "*0": nothing
                ReadOnlySpan<byte> name = _batch[index][0];
                if (multiStart < 0 && NumberFormat.EqualsIgnoreCase(name, "multi"u8))
                {
                    multiStart = commandStart;
                }
                else if (multiStart >= 0 && NumberFormat.EqualsIgnoreCase(name, "exec"u8))
                {
                    // The MULTI is command 0 of the batch, the EXEC the last one.
                    for (int i = 1; i < index; i++)
                        Execute(file, i, nowMs, commandStart);
                    _batch.Clear();
                    multiStart = -1;
                    validEnd = bufferOffset + begin + reader.Consumed;
                }
                else if (multiStart < 0)
                {
                    Execute(file, index, nowMs, commandStart);
                    _batch.Clear();
                    validEnd = bufferOffset + begin + reader.Consumed;
                }
            }
            begin = (int)(begin + reader.Consumed);

            if (endOfFile)
                break;
        }

        bool truncated = validEnd < fileLength;
        // Drop a half-read command or unfinished transaction, so the next file starts clean.
        _batch.Discard();
        return new FileReplayResult(validEnd, fileLength, Commands - commandsBefore, truncated);
    }

    private void Execute(DiskFile file, int index, long nowMs, long offset)
    {
        ArgList args = _batch[index];
        var executor = _server.Executor;
        CommandSpec? spec = executor.Find(args);
        if (spec?.Handler is null)
            throw new AofFormatException($"Unknown command '{Errors.Truncate(Encoding.UTF8.GetString(args[0]))}' reading the append only file {file.Name} at offset {offset}");
        if (!spec.AcceptsArgCount(args.Count))
            throw new AofFormatException($"Wrong number of arguments for '{spec.FullName}' reading the append only file {file.Name} at offset {offset}");
        executor.Replay(_client, _keyspace, args, spec, nowMs);
        Commands++;
    }

    private void GrowBuffer()
    {
        var larger = ArrayPool<byte>.Shared.Rent(checked(_buffer.Length * 2));
        Buffer.BlockCopy(_buffer, 0, larger, 0, _buffer.Length);
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = larger;
    }

    private static AofFormatException BadFormat(DiskFile file, long offset, string reason)
        => new($"Bad file format reading the append only file {file.Name} at offset {offset}: {reason}");

    private static string Printable(byte b) => b is >= 32 and < 127 ? ((char)b).ToString() : $"\\x{b:x2}";

    public void Dispose()
    {
        _batch.Dispose();
        _client.Dispose();
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = [];
    }
}
