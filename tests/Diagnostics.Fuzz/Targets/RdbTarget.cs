using Diagnostics.Fuzz.Harness;
using Diagnostics.Server.Persistence;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// The RDB reader, twice per input: from a seekable file-like stream (an AOF's RDB preamble) and
/// from a forward-only stream with short reads (where it must not read past the RDB). Both must
/// report the same keys, or both the same refusal (<see cref="RdbFormatException"/>, the reader's
/// only documented exception).
/// </summary>
public sealed class RdbTarget : IFuzzTarget
{
    public string Name => "rdb";

    public void Run(ReadOnlySpan<byte> input)
    {
        byte[] data = input.ToArray();
        var seekable = Read(new MemoryStream(data, writable: false));
        var forward = new ShortReadStream(data, 1 + data.Length % 13);
        var streamed = Read(forward);
        if (seekable != streamed)
            throw new InvalidOperationException($"seekable read {seekable} differs from the forward-only read {streamed}");
        if (streamed.Consumed >= 0 && forward.Consumed != streamed.Consumed)
            throw new InvalidOperationException($"forward-only read took {forward.Consumed} bytes for an RDB of {streamed.Consumed}");
    }

    /// <summary>Consumed is -1 when the reader refused the input.</summary>
    private readonly record struct Result(long Consumed, int Events, int Hash);

    private static Result Read(Stream stream)
    {
        var visitor = new HashingRdbVisitor();
        long consumed;
        try
        {
            consumed = RdbReader.Read(stream, visitor);
            if (stream.CanSeek && stream.Position != consumed)
                throw new InvalidOperationException($"stream left at {stream.Position}, not after the RDB's {consumed} bytes");
        }
        catch (RdbFormatException)
        {
            consumed = -1;
        }
        return new Result(consumed, visitor.Events, visitor.Hash);
    }
}
