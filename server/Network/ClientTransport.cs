using System.IO.Pipelines;
using System.Net;
using Diagnostics.Server.Tls;

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

    /// <summary>
    /// Reply bytes (and pipe blocks) the layer below has sent so far, when it can tell while a flush
    /// is still under way; 0 when it cannot, and the connection counts a flush as sent once it completes.
    /// </summary>
    public virtual long SentBytes => 0;
    public virtual long SentBlocks => 0;

    /// <summary>True when <see cref="SentBytes"/> is exact and the server's and threads' output totals are counted as the kernel takes the bytes.</summary>
    public virtual bool CountsSends => false;

    /// <summary>
    /// True when the peer has closed the connection though nothing is reading it (a client that
    /// hung up while blocked); false when it is open or the transport cannot tell.
    /// </summary>
    public virtual bool PeerClosed => false;

    /// <summary>The TLS session the connection runs in, or null for plain TCP.</summary>
    public virtual TlsSession? Tls => null;

    /// <summary>Drops the connection; pending reads and writes end.</summary>
    public abstract void Abort(string reason);
}
