using System.IO.Pipelines;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;

namespace Diagnostics.Server.Network;

/// <summary>A Kestrel connection (ConnectionHandler) as a <see cref="ClientTransport"/>.</summary>
public sealed class KestrelClientTransport(ConnectionContext connection) : ClientTransport
{
    private readonly System.Net.Sockets.Socket? _socket = connection.Features.Get<IConnectionSocketFeature>()?.Socket;

    public override IDuplexPipe Pipe => connection.Transport;
    public override EndPoint? RemoteEndPoint => connection.RemoteEndPoint;
    public override EndPoint? LocalEndPoint => connection.LocalEndPoint;
    public override long FileDescriptor => _socket?.Handle.ToInt64() ?? -1;
    // Kestrel's transport reads ahead into its own pipe; what it has already read shows up there.
    public override bool InputPending => false;
    // SentBytes stays 0: Kestrel's pipe shows no progress inside a flush, so the connection counts
    // a flush as sent when it completes. Kestrel then still holds at most its write buffer
    // (MaxWriteBufferSize, 64 KB by default) of it, which omem does not show.
    public override void Abort(string reason) => connection.Abort(new ConnectionAbortedException(reason));
}
