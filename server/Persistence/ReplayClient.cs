using System.IO.Pipelines;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Protocol;
using Microsoft.Extensions.Logging.Abstractions;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// The client the AOF is replayed for (Redis's fake client): no socket, replies muted and going
/// nowhere, authenticated, database 0 until the file SELECTs another. Its effects scope has no
/// keyspace events and propagates nothing: replayed writes are not news, and are already logged.
/// </summary>
internal sealed class ReplayClient : ClientSession
{
    // It takes a client id, as Redis's AOF client does: the ids clients see stay as they were.
    public ReplayClient(DataServer server)
        : base(server.Clients.NextId(), new RespWriter(PipeWriter.Create(Stream.Null)) { Muted = true }, NullLogger.Instance, authenticated: true, events: null)
    {
    }
}
