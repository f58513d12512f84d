using System.IO.Pipelines;
using System.Text;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Protocol;
using Microsoft.Extensions.Logging.Abstractions;

namespace Diagnostics.Server.UnitTests.Infrastructure;

/// <summary>A client with no socket: its replies are written to memory and read back as RESP text.</summary>
internal sealed class LocalClient : ClientSession
{
    private readonly MemoryStream _replies;
    private readonly PipeWriter _output;

    private LocalClient(DataServer server, MemoryStream replies, PipeWriter output)
        : base(server.Clients.NextId(), new RespWriter(output), NullLogger.Instance, authenticated: true, server.KeyspaceEvents)
    {
        _replies = replies;
        _output = output;
    }

    public static LocalClient For(DataServer server)
    {
        var replies = new MemoryStream();
        return new LocalClient(server, replies, PipeWriter.Create(replies, new StreamPipeWriterOptions(leaveOpen: true)));
    }

    public string TakeReplies()
    {
        Reply.Commit();
        _output.FlushAsync().AsTask().GetAwaiter().GetResult();
        string text = Encoding.UTF8.GetString(_replies.ToArray());
        _replies.SetLength(0);
        return text;
    }

    public override void Dispose()
    {
        base.Dispose();
        _output.Complete();
        _replies.Dispose();
    }
}
