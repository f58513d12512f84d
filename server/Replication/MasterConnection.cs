using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using Diagnostics.Server.Diagnostics.Threads;

namespace Diagnostics.Server.Replication;

/// <summary>
/// The link's socket to its master and the bytes read from it but not yet used: the handshake's
/// reply lines, the RDB, then the command stream. Blocking reads on the link's own thread; every
/// byte read is counted to that thread and to the master client. Bytes stay in the buffer from
/// the first one not yet applied (<see cref="Begin"/>) to <see cref="End"/>, so the exact bytes of
/// an applied span can be handed on before they are dropped.
/// </summary>
internal sealed class MasterConnection : IDisposable
{
    private const int InitialBufferBytes = 64 * 1024;
    private const int MinimumRead = 16 * 1024;

    private readonly Socket _socket;
    private readonly MasterClient _client;
    private byte[] _buffer = new byte[InitialBufferBytes];
    // tls-replication: the TLS stream over the socket. Its reads run one at a time in the
    // background, since a TLS stream may hold decrypted bytes the socket no longer shows (Poll
    // cannot tell) and a read that timed out would break it; Fill waits for the one in flight.
    private readonly SslStream? _tls;
    private readonly byte[]? _tlsChunk;
    private Task<int>? _tlsRead;

    private MasterConnection(Socket socket, MasterClient client, SslStream? tls)
    {
        _socket = socket;
        _client = client;
        _tls = tls;
        _tlsChunk = tls is null ? null : new byte[MinimumRead];
    }

    /// <summary>
    /// Connects within <paramref name="timeoutMs"/>, over TLS when <paramref name="tls"/> is given;
    /// throws <see cref="SocketException"/>, <see cref="TimeoutException"/> or, when the TLS
    /// handshake fails, <see cref="IOException"/> with the reason.
    /// </summary>
    public static MasterConnection Connect(string host, int port, int timeoutMs, MasterClient client, SslClientAuthenticationOptions? tls = null)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        SslStream? ssl = null;
        try
        {
            using var cancel = new CancellationTokenSource(timeoutMs);
            try
            {
                socket.ConnectAsync(host, port, cancel.Token).AsTask().GetAwaiter().GetResult();
                if (tls is not null)
                {
                    ssl = new SslStream(new NetworkStream(socket, ownsSocket: false), leaveInnerStreamOpen: false);
                    ssl.AuthenticateAsClientAsync(tls, cancel.Token).GetAwaiter().GetResult();
                }
            }
            catch (OperationCanceledException)
            {
                throw new TimeoutException("Timeout connecting to the MASTER...");
            }
            catch (System.Security.Authentication.AuthenticationException ex)
            {
                throw new IOException($"TLS handshake with the MASTER failed: {ex.InnerException?.Message ?? ex.Message}", ex);
            }
            client.LocalAddress = socket.LocalEndPoint is IPEndPoint local ? $"{local.Address.MapToIPv4()}:{local.Port}" : "";
            client.FileDescriptor = (long)socket.Handle;
            return new MasterConnection(socket, client, ssl);
        }
        catch
        {
            ssl?.Dispose();
            socket.Dispose();
            throw;
        }
    }

    public byte[] Buffer => _buffer;
    /// <summary>The first byte not yet used.</summary>
    public int Begin { get; set; }
    /// <summary>One past the last byte read.</summary>
    public int End { get; private set; }
    public int Available => End - Begin;
    /// <summary>Bytes read on this connection.</summary>
    public long BytesRead { get; private set; }

    /// <summary>
    /// Waits up to <paramref name="timeoutMs"/> for bytes and appends what came (false: none came
    /// in time). Keeps everything from <see cref="Begin"/> (moved to the front: keep positions relative to it); the buffer grows when that fills it.
    /// Throws <see cref="EndOfStreamException"/> when the master closed the connection.
    /// </summary>
    public bool Fill(int timeoutMs)
    {
        int read;
        if (_tls is not null)
        {
            if (!TlsRead(timeoutMs, out read))
                return false;
        }
        else
        {
            if (!_socket.Poll(TimeSpan.FromMilliseconds(Math.Max(0, timeoutMs)), SelectMode.SelectRead))
                return false;
            MakeRoom(MinimumRead);
            read = _socket.Receive(_buffer, End, _buffer.Length - End, SocketFlags.None);
        }
        if (read == 0)
            throw new EndOfStreamException("Connection lost");
        End += read;
        BytesRead += read;
        ThreadCounters.Current.NetInputBytes += read;
        _client.NetInputBytes += read;
        _client.LastInteractionMs = Engine.WallClock.CoarseUnixMs();
        _client.QueryBufferBytes = End - Begin;
        return true;
    }

    /// <summary>The background TLS read, waited for up to the timeout; what it read is appended (its byte count in <paramref name="read"/>).</summary>
    private bool TlsRead(int timeoutMs, out int read)
    {
        _tlsRead ??= _tls!.ReadAsync(_tlsChunk!).AsTask();
        read = 0;
        if (!((IAsyncResult)_tlsRead).AsyncWaitHandle.WaitOne(Math.Max(0, timeoutMs)))
            return false;
        var done = _tlsRead;
        _tlsRead = null;
        try
        {
            read = done.GetAwaiter().GetResult();
        }
        catch (System.Security.Authentication.AuthenticationException ex)
        {
            throw new IOException(ex.Message, ex);
        }
        MakeRoom(read);
        _tlsChunk.AsSpan(0, read).CopyTo(_buffer.AsSpan(End));
        return true;
    }

    /// <summary>At least <paramref name="room"/> free bytes after <see cref="End"/>: the used front is dropped first, then the buffer grows.</summary>
    private void MakeRoom(int room)
    {
        if (_buffer.Length - End >= room)
            return;
        if (Begin > 0)
        {
            System.Buffer.BlockCopy(_buffer, Begin, _buffer, 0, End - Begin);
            End -= Begin;
            Begin = 0;
        }
        if (_buffer.Length - End < room)
            Array.Resize(ref _buffer, Math.Max(_buffer.Length * 2, End + room));
    }

    /// <summary>One reply line without its CR LF; blank lines (the master's keepalives while it prepares an RDB) are skipped.</summary>
    public string ReadLine(int timeoutMs)
    {
        long deadline = Environment.TickCount64 + timeoutMs;
        while (true)
        {
            int newline = Array.IndexOf(_buffer, (byte)'\n', Begin, End - Begin);
            if (newline >= 0)
            {
                int length = newline - Begin;
                if (length > 0 && _buffer[newline - 1] == (byte)'\r')
                    length--;
                string line = Encoding.UTF8.GetString(_buffer, Begin, length);
                Begin = newline + 1;
                if (line.Length > 0)
                    return line;
                continue;
            }
            if (End - Begin > 64 * 1024)
                throw new InvalidDataException("Protocol error: the master sent a reply line longer than 64 KB");
            long left = deadline - Environment.TickCount64;
            if (left <= 0 || !Fill((int)left))
                throw new TimeoutException("Timeout receiving a reply from the MASTER");
        }
    }

    /// <summary>Sends <paramref name="bytes"/> whole (small: the handshake and ACKs).</summary>
    public void Send(ReadOnlySpan<byte> bytes)
    {
        if (_tls is not null)
        {
            _tls.Write(bytes);
            ThreadCounters.Current.NetOutputBytes += bytes.Length;
            _client.NetOutputBytes += bytes.Length;
            return;
        }
        while (!bytes.IsEmpty)
        {
            int sent = _socket.Send(bytes, SocketFlags.None);
            bytes = bytes[sent..];
            ThreadCounters.Current.NetOutputBytes += sent;
            _client.NetOutputBytes += sent;
        }
    }

    /// <summary>Sends one command as a RESP array (the handshake; not on the stream's path).</summary>
    public void SendCommand(params string[] args)
    {
        var text = new StringBuilder();
        text.Append('*').Append(args.Length).Append("\r\n");
        foreach (var arg in args)
            text.Append('$').Append(Encoding.UTF8.GetByteCount(arg)).Append("\r\n").Append(arg).Append("\r\n");
        Send(Encoding.UTF8.GetBytes(text.ToString()));
    }

    /// <summary>Closes the socket from any thread: a read waiting on it ends with an error.</summary>
    public void Abort()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
        }
        catch (ObjectDisposedException)
        {
        }
    }

    public void Dispose()
    {
        _client.FileDescriptor = -1;
        _client.LocalAddress = "";
        _client.QueryBufferBytes = 0;
        _tls?.Dispose();
        _socket.Dispose();
    }
}
