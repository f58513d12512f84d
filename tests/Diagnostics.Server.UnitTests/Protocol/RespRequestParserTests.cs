using System.Buffers;
using System.Text;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.UnitTests.Protocol;

/// <summary>
/// The request parser in process, fed as a connection feeds it: every complete command in the
/// buffer, the unconsumed tail kept for the next read. Commands split at every byte position, or
/// across pipe segments, must parse as they do in one piece; the limits answer with Redis's texts.
/// </summary>
public sealed class RespRequestParserTests
{
    private static readonly Encoding Ascii = Encoding.ASCII;

    // Multibulk with binary data (CRLF and NUL inside a bulk), an empty argument, inline commands
    // with quoting and bare LF, an empty inline line and an empty multibulk between them.
    private static readonly byte[] Stream = Concat(
        "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$6\r\nv\r\n\0ab\r\n",
        "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
        "PING\r\n",
        "\r\n",
        "SET \"a b\" 'c\\'d' \"\\x41\\n\"\n",
        "*0\r\n",
        "*1\r\n$12\r\nverylongname\r\n");

    private static readonly string[][] StreamCommands =
    [
        ["SET", "key", "v\r\n\0ab"],
        ["ECHO", ""],
        ["PING"],
        ["SET", "a b", "c'd", "A\n"],
        ["verylongname"],
    ];

    [Fact]
    public void AStreamInOneReadYieldsEveryCommandWithItsExactBytes()
    {
        var result = Feed([Stream]);
        Assert.Null(result.Error);
        Assert.Equal(StreamCommands, result.Commands);
        Assert.Equal(0, result.HeldBytes);
    }

    [Fact]
    public void SplitIntoTwoReadsAtEveryBytePositionItParsesTheSame()
    {
        for (int cut = 1; cut < Stream.Length; cut++)
        {
            var result = Feed([Stream[..cut], Stream[cut..]]);
            Assert.True(result.Error is null, $"cut at {cut}: {result.Error}");
            Assert.True(StreamCommands.Length == result.Commands.Count && StreamCommands.Zip(result.Commands).All(p => p.First.SequenceEqual(p.Second)),
                $"cut at {cut}: parsed {Describe(result.Commands)}");
            Assert.Equal(0, result.HeldBytes);
        }
    }

    [Fact]
    public void ByteByByteItParsesTheSameAndHoldsNoMoreThanArrived()
    {
        var reads = new byte[Stream.Length][];
        for (int i = 0; i < Stream.Length; i++)
            reads[i] = [Stream[i]];
        var result = Feed(reads);
        Assert.Null(result.Error);
        Assert.Equal(StreamCommands, result.Commands);
    }

    [Fact]
    public void ACommandSpreadOverPipeSegmentsParsesAsOneSpan()
    {
        // The pipe hands the parser a multi-segment sequence when a command straddles its buffers:
        // cut inside a length, between CR and LF, and inside a bulk.
        byte[] command = Ascii.GetBytes("*2\r\n$4\r\nECHO\r\n$11\r\nhello world\r\n");
        for (int first = 1; first < command.Length - 1; first++)
        {
            for (int second = first + 1; second < command.Length; second++)
            {
                var sequence = Segments(command[..first], command[first..second], command[second..]);
                var reader = new SequenceReader<byte>(sequence);
                using var batch = new RequestBatch();
                var status = RespRequestParser.TryParse(ref reader, batch, new ProtocolLimits(), authenticated: true, out string? error);
                Assert.True(status == ParseStatus.Parsed, $"segments at {first},{second}: {status} {error}");
                Assert.True(reader.End);
                Assert.Equal(["ECHO", "hello world"], Args(batch, 0));
            }
        }
    }

    [Fact]
    public void AnOpenCommandKeepsItsCompleteArgumentsAndConsumesThem()
    {
        // A command with many arguments arriving slowly is read once: each complete argument is
        // taken into the batch and consumed, not re-read on every network read.
        using var batch = new RequestBatch();
        var limits = new ProtocolLimits();
        byte[] first = Ascii.GetBytes("*3\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r");
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(first));
        Assert.Equal(ParseStatus.Incomplete, RespRequestParser.TryParse(ref reader, batch, limits, true, out _));
        Assert.Equal(1, batch.OpenArgsRemaining);
        Assert.Equal(first.Length - "$1\r".Length, reader.Consumed);

        byte[] rest = Ascii.GetBytes("$1\r\nb\r\n");
        reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(rest));
        Assert.Equal(ParseStatus.Parsed, RespRequestParser.TryParse(ref reader, batch, limits, true, out _));
        Assert.True(reader.End);
        Assert.Equal(["DEL", "a", "b"], Args(batch, 0));
    }

    [Theory]
    // Redis's texts (networking.c processMultibulkBuffer / processInlineBuffer).
    [InlineData("*3\r\n$3\r\nSET\r\nx", "Protocol error: expected '$', got 'x'")]
    [InlineData("*1\r\n$3\r\nfooXY", "Protocol error: expected CRLF after bulk data")]
    [InlineData("*abc\r\n", "Protocol error: invalid multibulk length")]
    [InlineData("*2147483648\r\n", "Protocol error: invalid multibulk length")]
    [InlineData("*1\r\n$abc\r\n", "Protocol error: invalid bulk length")]
    [InlineData("*1\r\n$-1\r\n", "Protocol error: invalid bulk length")]
    [InlineData("SET \"unbalanced\r\n", "Protocol error: unbalanced quotes in request")]
    [InlineData("SET 'a'b\r\n", "Protocol error: unbalanced quotes in request")]
    public void ABrokenStreamGetsRedissError(string input, string expected)
    {
        var result = Feed([Ascii.GetBytes(input)]);
        Assert.Equal(expected, result.Error);
        // Split anywhere, the same error, once its bytes are there.
        for (int cut = 1; cut < input.Length; cut++)
            Assert.Equal(expected, Feed([Ascii.GetBytes(input[..cut]), Ascii.GetBytes(input[cut..])]).Error);
    }

    [Fact]
    public void ABulkUpToProtoMaxBulkLenIsAcceptedAndOneByteMoreIsRefused()
    {
        var limits = new ProtocolLimits { ProtoMaxBulkLength = 32 };
        string atLimit = new('a', 32), overLimit = new('a', 33);
        var accepted = Feed([Ascii.GetBytes($"*2\r\n$4\r\nECHO\r\n$32\r\n{atLimit}\r\n")], limits);
        Assert.Null(accepted.Error);
        Assert.Equal(["ECHO", atLimit], Assert.Single(accepted.Commands));
        // Refused from the header alone: the body is never waited for.
        Assert.Equal("Protocol error: invalid bulk length", Feed([Ascii.GetBytes("*2\r\n$4\r\nECHO\r\n$33\r\n")], limits).Error);
        Assert.Equal("Protocol error: invalid bulk length", Feed([Ascii.GetBytes($"*2\r\n$4\r\nECHO\r\n$33\r\n{overLimit}\r\n")], limits).Error);
    }

    [Fact]
    public void BeforeAuthOnlySmallRequestsAreRead()
    {
        string tenArgs = "*10\r\n" + string.Concat(Enumerable.Repeat("$1\r\na\r\n", 10));
        Assert.Null(Feed([Ascii.GetBytes(tenArgs)], authenticated: false).Error);
        Assert.Equal("Protocol error: unauthenticated multibulk length", Feed([Ascii.GetBytes("*11\r\n")], authenticated: false).Error);
        Assert.Null(Feed([Ascii.GetBytes("*11\r\n")], authenticated: true).Error);

        string bigBulk = new('b', 16 * 1024);
        Assert.Null(Feed([Ascii.GetBytes($"*2\r\n$4\r\nAUTH\r\n${bigBulk.Length}\r\n{bigBulk}\r\n")], authenticated: false).Error);
        Assert.Equal("Protocol error: unauthenticated bulk length",
            Feed([Ascii.GetBytes($"*2\r\n$4\r\nAUTH\r\n${bigBulk.Length + 1}\r\n")], authenticated: false).Error);
    }

    [Fact]
    public void LinesWithoutAnEndPastTheInlineLimitAreRefusedAndShorterOnesAwaited()
    {
        // An inline request: 64 KB without a newline is all Redis buffers.
        byte[] shortLine = Ascii.GetBytes("SET " + new string('x', 1000));
        var waiting = Feed([shortLine]);
        Assert.Null(waiting.Error);
        Assert.Empty(waiting.Commands);
        Assert.Equal(shortLine.Length, waiting.HeldBytes);
        Assert.Equal("Protocol error: too big inline request",
            Feed([Ascii.GetBytes("SET " + new string('x', ProtocolLimits.InlineMaxBytes))]).Error);

        // The count lines of a multibulk request have the same bound.
        string digits = new('1', ProtocolLimits.InlineMaxBytes);
        Assert.Equal("Protocol error: too big mbulk count string", Feed([Ascii.GetBytes("*" + digits)]).Error);
        Assert.Equal("Protocol error: too big bulk count string", Feed([Ascii.GetBytes("*1\r\n$" + digits)]).Error);
    }

    [Fact]
    public void AnInlineLineAtTheLimitParsesAndPastItIsRefused()
    {
        // Up to the LF, the line may be 64 KB (its CR included); one byte more is refused even
        // with its end in the buffer.
        string name = new('k', ProtocolLimits.InlineMaxBytes - "GET \r".Length);
        var atLimit = Feed([Ascii.GetBytes($"GET {name}\r\n")]);
        Assert.Null(atLimit.Error);
        Assert.Equal(["GET", name], Assert.Single(atLimit.Commands));
        Assert.Equal("Protocol error: too big inline request", Feed([Ascii.GetBytes($"GET {name}k\r\n")]).Error);
    }

    private sealed record FeedResult(List<string[]> Commands, string? Error, long HeldBytes);

    /// <summary>
    /// Parses the reads as ClientConnection does: after each read every complete command is taken
    /// from the buffer and the rest kept, in front of the next read.
    /// </summary>
    private static FeedResult Feed(byte[][] reads, ProtocolLimits? limits = null, bool authenticated = true)
    {
        limits ??= new ProtocolLimits();
        var commands = new List<string[]>();
        using var batch = new RequestBatch();
        byte[] pending = [];
        foreach (var read in reads)
        {
            pending = [.. pending, .. read];
            var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(pending));
            ParseStatus status = ParseStatus.Parsed;
            string? error = null;
            while (!reader.End)
            {
                long before = reader.Consumed;
                status = RespRequestParser.TryParse(ref reader, batch, limits, authenticated, out error);
                if (status != ParseStatus.Parsed)
                    break;
                Assert.True(reader.Consumed > before, "parsed without consuming a byte: the connection would spin");
            }
            for (int i = 0; i < batch.CommandCount; i++)
                commands.Add(Args(batch, i));
            batch.Clear();
            if (status == ParseStatus.Error)
            {
                Assert.NotNull(error);
                return new FeedResult(commands, error, 0);
            }
            pending = pending[(int)reader.Consumed..];
        }
        return new FeedResult(commands, null, pending.Length + batch.ArenaBytes);
    }

    private static string[] Args(RequestBatch batch, int command)
    {
        var args = batch[command];
        var result = new string[args.Count];
        for (int i = 0; i < args.Count; i++)
            result[i] = Encoding.Latin1.GetString(args[i]);
        return result;
    }

    private static string Describe(List<string[]> commands)
        => string.Join(" | ", commands.Select(c => string.Join(' ', c)));

    private static byte[] Concat(params string[] parts) => Encoding.Latin1.GetBytes(string.Concat(parts));

    private static ReadOnlySequence<byte> Segments(params byte[][] parts)
    {
        var first = new Segment(parts[0], 0);
        var last = first;
        foreach (var part in parts.Skip(1))
            last = last.Append(part);
        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
