using System.Buffers;
using Diagnostics.Fuzz.Harness;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// The RESP request parser fed as a connection feeds it (ClientConnection.Parse): the same batch
/// limits, one command at a time before AUTH, the batch cleared after each run, the unconsumed
/// tail kept for the next read. The input's first byte picks the mode: bit 0 authenticated,
/// bit 1 a tiny proto-max-bulk-len, the rest how the bytes are cut into reads. The same bytes are
/// then parsed as one read: both must yield the same commands and the same error, so a command
/// that parses differently when split across reads (or pipe segments) is a crash too.
/// </summary>
public sealed class RespTarget : IFuzzTarget
{
    private const int MaxCommandsPerBatch = 1024;   // ClientConnection's
    private const int TinyBulkLimit = 32;
    private const int MaxPendingSegments = 8;

    public string Name => "resp";

    public void Run(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty)
            return;
        byte mode = input[0];
        byte[] data = input[1..].ToArray();
        bool authenticated = (mode & 1) != 0;
        var limits = new ProtocolLimits();
        if ((mode & 2) != 0)
            limits.ProtoMaxBulkLength = TinyBulkLimit;

        Outcome split = Feed(data, limits, authenticated, new ReadSizes(mode >> 2));
        Outcome whole = Feed(data, limits, authenticated, ReadSizes.Whole);
        // Past the inline limit, "too big" depends on how much was buffered when it was noticed.
        if (data.Length < ProtocolLimits.InlineMaxBytes && split != whole)
            throw new InvalidOperationException($"split reads parsed differently: {split} against one read: {whole}");
    }

    private readonly record struct Outcome(int Commands, int Hash, string? Error, bool OpenAtEnd);

    private static Outcome Feed(byte[] data, ProtocolLimits limits, bool authenticated, ReadSizes sizes)
    {
        using var batch = new RequestBatch();
        var pending = new List<ReadOnlyMemory<byte>>();
        var hash = new HashCode();
        int commands = 0;
        int received = 0;
        while (received < data.Length)
        {
            int size = Math.Min(sizes.Next(), data.Length - received);
            pending.Add(data.AsMemory(received, size));
            received += size;

            var buffer = SequenceChunk.Join(pending);
            string? error = ParseAvailable(ref buffer, batch, limits, authenticated, ref hash, ref commands);
            if (error is not null)
                return new Outcome(commands, hash.ToHashCode(), error, false);
            pending.Clear();
            foreach (var memory in buffer)
                if (!memory.IsEmpty)
                    pending.Add(memory);
            // A pipe packs small reads into ~4 KB segments: without this, a long line trickling in a
            // byte at a time made the harness (not the parser) allocate quadratically many segments.
            if (pending.Count > MaxPendingSegments)
            {
                byte[] merged = SequenceChunk.Join(pending).ToArray();
                pending.Clear();
                pending.Add(merged);
            }
            // The open command's kept arguments plus the unparsed tail can never exceed what arrived.
            long held = batch.ArenaBytes;
            foreach (var memory in pending)
                held += memory.Length;
            if (held > received)
                throw new InvalidOperationException($"the parser holds {held} bytes after receiving {received}");
        }
        bool open = batch.OpenArgsRemaining > 0 || pending.Count > 0;
        return new Outcome(commands, hash.ToHashCode(), null, open);
    }

    /// <summary>Parses every complete command buffered, as the connection's read loop does; returns the protocol error, if any.</summary>
    private static string? ParseAvailable(ref ReadOnlySequence<byte> buffer, RequestBatch batch, ProtocolLimits limits,
        bool authenticated, ref HashCode hash, ref int commands)
    {
        while (!buffer.IsEmpty)
        {
            var reader = new SequenceReader<byte>(buffer);
            ParseStatus status = ParseStatus.Parsed;
            string? error = null;
            while (!reader.End && (batch.OpenArgsRemaining > 0 || (batch.CommandCount < MaxCommandsPerBatch && batch.ArenaBytes < RequestBatch.TargetArenaBytes)))
            {
                if (!authenticated && batch.CommandCount > 0)
                    break;
                long before = reader.Consumed;
                int countBefore = batch.CommandCount;
                status = RespRequestParser.TryParse(ref reader, batch, limits, authenticated, out error);
                if (status == ParseStatus.Error && error is null)
                    throw new InvalidOperationException("a parse error without a message");
                if (status != ParseStatus.Parsed)
                    break;
                if (reader.Consumed == before)
                    throw new InvalidOperationException("Parsed without consuming a byte: the connection would spin");
                if (batch.CommandCount > countBefore + 1)
                    throw new InvalidOperationException("one TryParse added more than one command");
            }
            buffer = buffer.Slice(reader.Position);
            for (int i = 0; i < batch.CommandCount; i++)
            {
                ArgList args = batch[i];
                if (args.Count == 0)
                    throw new InvalidOperationException("a parsed command without a name");
                hash.Add(args.Count);
                for (int a = 0; a < args.Count; a++)
                {
                    hash.Add(args[a].Length);
                    hash.AddBytes(args[a]);
                }
                commands++;
            }
            batch.Clear();
            if (status == ParseStatus.Error)
                return error;
            if (status == ParseStatus.Incomplete)
                break;
        }
        return null;
    }

    /// <summary>Read sizes from a small seed: from single bytes to whole kilobytes, varied within one input.</summary>
    private struct ReadSizes(int seed)
    {
        public static ReadSizes Whole => new(-1);
        private uint _state = (uint)seed * 2654435761u + 1;

        public int Next()
        {
            if (seed < 0)
                return int.MaxValue;
            _state = _state * 1103515245u + 12345u;
            int bits = (int)(_state >> 16);
            return (seed & 3) switch
            {
                0 => 1,
                1 => 1 + bits % 7,
                2 => 1 + bits % 64,
                _ => 1 + bits % 4096,
            };
        }
    }
}
