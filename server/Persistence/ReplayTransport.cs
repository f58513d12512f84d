using System.IO.Pipelines;
using System.Net;
using Diagnostics.Server.Network;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// The transport of the client that replays the AOF: no socket, and its replies are muted, so the
/// pipe only exists because a client has one. Redis replays through a fake client the same way.
/// </summary>
internal sealed class ReplayTransport : ClientTransport
{
    public override IDuplexPipe Pipe { get; } = new DuplexPipe(new Pipe());
    public override EndPoint? RemoteEndPoint => null;
    public override EndPoint? LocalEndPoint => null;
    public override long FileDescriptor => -1;
    public override bool InputPending => false;
    public override void Abort(string reason) { }

    private sealed class DuplexPipe(Pipe pipe) : IDuplexPipe
    {
        public PipeReader Input => pipe.Reader;
        public PipeWriter Output => pipe.Writer;
    }
}
