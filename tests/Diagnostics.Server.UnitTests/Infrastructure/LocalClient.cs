using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Diagnostics.Server.Tests.Infrastructure;
using Xunit;
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

    /// <summary>
    /// Runs one command for this client holding every shard of the server, with the client's
    /// effects scope attached to each, then hands its writes to the AOF and the replication stream
    /// while still holding them (the order a connection's batch keeps). Returns the reply as RESP text.
    /// </summary>
    public string Run(DataServer server, params string[] command)
    {
        using var batch = new RequestBatch();
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(RespClient.Encode(command)));
        Assert.Equal(ParseStatus.Parsed, RespRequestParser.TryParse(ref reader, batch, server.Config.Limits, authenticated: true, out string? error));
        Assert.Null(error);
        var shards = server.Keyspace.Shards;
        foreach (var shard in shards)
        {
            shard.EnterInline();
            shard.Effects = Effects;
        }
        try
        {
            var executor = server.Executor;
            executor.Execute(this, batch[0], executor.Find(batch[0]));
            executor.CommitLoggedWrites(this);
        }
        finally
        {
            for (int s = shards.Length - 1; s >= 0; s--)
            {
                shards[s].Effects = null;
                shards[s].ExitInline();
            }
        }
        return TakeReplies();
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
