using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Diagnostics.Server.Tls;

namespace Diagnostics.Server.Network;

/// <summary>
/// A socket (plain, or TLS over it) read and written through Pipelines' stream adapters, with no pump task in between:
/// PipeReader.Create reads the socket when the parser asks for more, and PipeWriter.Create sends
/// on flush, completing synchronously whenever the kernel takes the bytes at once. Compared with
/// Kestrel's transport this removes two thread hops per request (its receive and send loops).
/// </summary>
public sealed class SocketClientTransport : ClientTransport, IDuplexPipe, IDisposable
{
    private const int ReceiveBufferBytes = 16 * 1024;
    /// <summary>The smallest read the pipe issues; a read returning less emptied the socket.</summary>
    public const int MinimumReadBytes = 4096;
    private readonly Socket _socket;
    private readonly Stream _stream;
    private readonly SendCountingStream _output;

    public SocketClientTransport(Socket socket, int keepAliveSeconds, Diagnostics.Info.ServerStats stats)
        : this(Prepared(socket, keepAliveSeconds), new NetworkStream(socket, ownsSocket: true), stats, tls: null)
    {
    }

    /// <summary>
    /// A connection whose bytes go through <paramref name="stream"/>: the socket's own stream, or a
    /// TLS stream over it once its handshake is done (<see cref="TlsHandshake"/>).
    /// </summary>
    internal SocketClientTransport(Socket socket, Stream stream, Diagnostics.Info.ServerStats stats, TlsSession? tls)
    {
        _socket = socket;
        _stream = stream;
        Tls = tls;
        Input = PipeReader.Create(_stream, new StreamPipeReaderOptions(bufferSize: ReceiveBufferBytes, minimumReadSize: MinimumReadBytes, leaveOpen: true));
        _output = new SendCountingStream(_stream, stats);
        // The pipe sends each block with its own send(): 16 KB blocks (Redis's reply chunk size
        // too) keep a long reply to a few syscalls, where 4 KB ones made it dozens. Under TLS each
        // block is one record, TLS's largest.
        Output = PipeWriter.Create(_output, new StreamPipeWriterOptions(ReplyBufferPool.Connections, ReplyBufferPool.BlockSize, leaveOpen: true));
        RemoteEndPoint = socket.RemoteEndPoint;
        LocalEndPoint = socket.LocalEndPoint;
        FileDescriptor = socket.Handle.ToInt64();
    }

    /// <summary>The socket options every client socket gets, before any byte (or TLS handshake) passes.</summary>
    internal static Socket Prepared(Socket socket, int keepAliveSeconds)
    {
        socket.NoDelay = true;
        if (keepAliveSeconds > 0)
        {
            // Like Redis's tcp-keepalive: probe after the idle time, then every third of it.
            socket.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.KeepAlive, true);
            socket.SetSocketOption(SocketOptionLevel.Tcp, SocketOptionName.TcpKeepAliveTime, keepAliveSeconds);
            socket.SetSocketOption(SocketOptionLevel.Tcp, SocketOptionName.TcpKeepAliveInterval, Math.Max(1, keepAliveSeconds / 3));
        }
        return socket;
    }

    public PipeReader Input { get; }
    public PipeWriter Output { get; }
    public override IDuplexPipe Pipe => this;
    public override EndPoint? RemoteEndPoint { get; }
    public override EndPoint? LocalEndPoint { get; }
    public override long FileDescriptor { get; }
    public override long SentBytes => _output.SentBytes;
    public override long SentBlocks => _output.SentBlocks;
    public override bool CountsSends => true;
    public override TlsSession? Tls { get; }

    public override bool InputPending
    {
        get
        {
            try
            {
                return _socket.Available > 0;
            }
            catch (ObjectDisposedException)
            {
                return false;
            }
        }
    }

    /// <summary>Readable with nothing to read: the peer sent FIN (or the socket failed).</summary>
    public override bool PeerClosed
    {
        get
        {
            try
            {
                return _socket.Poll(0, SelectMode.SelectRead) && _socket.Available == 0;
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
            {
                return true;
            }
        }
    }

    public override void Abort(string reason)
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // Already closed by the peer: nothing left to abort.
        }
    }

    public void Dispose()
    {
        Input.Complete();
        Output.Complete();
        _stream.Dispose();
        Tls?.Ended();
    }
}
