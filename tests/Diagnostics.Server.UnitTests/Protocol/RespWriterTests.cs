using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The reply encoder in both protocol versions. The core commands exercise maps, verbatim text
/// and nulls over the wire; doubles, booleans, sets and pushes are checked here byte for byte,
/// since the commands that send them arrive with later data types.
/// </summary>
public sealed class RespWriterTests
{
    private static string Encode(int protocol, Action<RespWriter> write)
    {
        var pipe = new Pipe();
        var writer = new RespWriter(pipe.Writer) { Protocol = protocol };
        write(writer);
        writer.Commit();
        pipe.Writer.Complete();
        Assert.True(pipe.Reader.TryRead(out var result));
        return Encoding.UTF8.GetString(BuffersExtensions.ToArray(result.Buffer));
    }

    [Theory]
    [InlineData(2, "$-1\r\n*-1\r\n")]
    [InlineData(3, "_\r\n_\r\n")]
    public void NullsFollowTheProtocol(int protocol, string expected)
        => Assert.Equal(expected, Encode(protocol, w => { w.Null(); w.NullArray(); }));

    [Theory]
    [InlineData(2, "$3\r\n1.5\r\n$3\r\ninf\r\n$4\r\n-inf\r\n$2\r\n10\r\n")]
    [InlineData(3, ",1.5\r\n,inf\r\n,-inf\r\n,10\r\n")]
    public void DoublesAreBulkInResp2AndNativeInResp3(int protocol, string expected)
        => Assert.Equal(expected, Encode(protocol, w =>
        {
            w.Double(1.5);
            w.Double(double.PositiveInfinity);
            w.Double(double.NegativeInfinity);
            w.Double(10);
        }));

    [Theory]
    [InlineData(2, ":1\r\n:0\r\n")]
    [InlineData(3, "#t\r\n#f\r\n")]
    public void BooleansAreIntegersInResp2(int protocol, string expected)
        => Assert.Equal(expected, Encode(protocol, w => { w.Boolean(true); w.Boolean(false); }));

    [Theory]
    [InlineData(2, "*4\r\n$1\r\na\r\n:1\r\n*1\r\n$1\r\nm\r\n*2\r\n$7\r\nmessage\r\n$1\r\nx\r\n")]
    [InlineData(3, "%2\r\n$1\r\na\r\n:1\r\n~1\r\n$1\r\nm\r\n>2\r\n$7\r\nmessage\r\n$1\r\nx\r\n")]
    public void AggregatesUseResp3TypesOnlyAfterHello3(int protocol, string expected)
        => Assert.Equal(expected, Encode(protocol, w =>
        {
            w.MapHeader(2);
            w.Bulk("a"u8);
            w.Integer(1);
            w.SetHeader(1);
            w.Bulk("m"u8);
            w.PushHeader(2);
            w.Bulk("message"u8);
            w.Bulk("x"u8);
        }));

    [Theory]
    [InlineData(2, "$5\r\nhello\r\n")]
    [InlineData(3, "=9\r\ntxt:hello\r\n")]
    public void VerbatimTextIsTaggedInResp3(int protocol, string expected)
        => Assert.Equal(expected, Encode(protocol, w => w.Verbatim("hello")));

    [Fact]
    public void ErrorLinesCannotBreakTheStream()
        => Assert.Equal("-ERR bad  input\r\n", Encode(2, w => w.Error("ERR bad\r\ninput")));

    [Fact]
    public void MutedWriterSendsNothing()
        => Assert.Equal("+OK\r\n", Encode(2, w =>
        {
            w.Muted = true;
            w.Bulk("dropped"u8);
            w.Integer(5);
            w.Muted = false;
            w.Ok();
        }));

    [Fact]
    public void LargeBulkSpansManyBuffers()
    {
        string value = new('v', 100_000);
        Assert.Equal($"$100000\r\n{value}\r\n", Encode(2, w => w.Bulk(Encoding.ASCII.GetBytes(value))));
    }

    /// <summary>Refuses more output once the writer has produced <paramref name="limit"/> bytes.</summary>
    private sealed class RefusingGuard(long limit) : IReplyBufferGuard
    {
        public int Calls { get; private set; }

        public bool MayBuffer(RespWriter writer)
        {
            Calls++;
            return writer.Produced < limit;
        }
    }

    [Fact]
    public void GuardIsAskedPerBlockAndARefusalStopsBuffering()
    {
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 0));
        var guard = new RefusingGuard(64 * 1024);
        var writer = new RespWriter(pipe.Writer) { Guard = guard };
        byte[] value = new byte[1 << 20];
        writer.Bulk(value);
        writer.Integer(42);
        writer.Commit();

        // Asked once per 4 KB block, not per byte or reply; after the refusal nothing reaches the pipe.
        Assert.True(writer.Discarding);
        Assert.InRange(writer.Produced, 64 * 1024, 64 * 1024 + 4096);
        Assert.InRange(guard.Calls, 16, 20);
        Assert.InRange(writer.Blocks, 16, 17);
        pipe.Writer.Complete();
        Assert.True(pipe.Reader.TryRead(out var result));
        Assert.Equal(writer.Produced, result.Buffer.Length);
        Assert.Equal(writer.Produced, writer.TakeWrittenCount());
    }
}
