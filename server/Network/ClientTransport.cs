using System.IO.Pipelines;
using System.Net;

namespace Diagnostics.Server.Network;

/// <summary>
/// What a <see cref="ClientConnection"/> needs from the layer below it: a duplex pipe, the two
/// endpoints, the socket descriptor, a way to drop the connection, and whether the kernel already
/// holds more input (so replies can wait for it). Kestrel connections and the lean socket
/// listener both provide one, so the RESP code does not depend on which transport runs.
/// </summary>
public abstract class ClientTransport
{
    public abstract IDuplexPipe Pipe { get; }
    public abstract EndPoint? RemoteEndPoint { get; }
    public abstract EndPoint? LocalEndPoint { get; }
    public abstract long FileDescriptor { get; }

    /// <summary>True when bytes are waiting in the kernel's receive buffer.</summary>
    public abstract bool InputPending { get; }

    /// <summary>Drops the connection; pending reads end.</summary>
    public abstract void Abort(string reason);
}
