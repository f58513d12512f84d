using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A client that sends requests and does not read the replies (a slow or stuck consumer): its
/// receive window is kept small, so the server's sends block after a few hundred KB and the rest
/// of the replies stay with the server. It names itself with CLIENT SETNAME (the one reply it
/// reads), so tests find it in CLIENT LIST and in the server's log.
/// </summary>
public sealed class NonReadingClient : IDisposable
{
    /// <summary>The size of the reply to GET of a 1 MB value: "$1048576\r\n", the value, "\r\n".</summary>
    public const int MegabyteReplyBytes = 10 + (1 << 20) + 2;

    private readonly Socket _socket;

    public NonReadingClient(int port, string name, int receiveBufferBytes = 4096)
    {
        Name = name;
        _socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
        {
            // Before connecting, so the advertised window stays small.
            ReceiveBufferSize = receiveBufferBytes,
            NoDelay = true,
        };
        _socket.Connect(IPAddress.Loopback, port);
        Send(RespClient.Encode("CLIENT", "SETNAME", name));
        var ok = new byte[5];
        ReadExactly(ok, 10_000);
        Assert.Equal("+OK\r\n", Encoding.ASCII.GetString(ok));
    }

    public string Name { get; }

    public void Send(byte[] bytes)
    {
        int sent = 0;
        while (sent < bytes.Length)
            sent += _socket.Send(bytes, sent, bytes.Length - sent, SocketFlags.None);
    }

    /// <summary>Sends <paramref name="count"/> GETs of <paramref name="key"/> in one write: one pipelined batch.</summary>
    public void SendGets(string key, int count)
    {
        byte[] one = RespClient.Encode("GET", key);
        var all = new byte[one.Length * count];
        for (int i = 0; i < count; i++)
            one.CopyTo(all, i * one.Length);
        Send(all);
    }

    /// <summary>Reads exactly <paramref name="buffer"/>.Length bytes; fails if they do not come in time.</summary>
    public void ReadExactly(byte[] buffer, int timeoutMs)
    {
        _socket.ReceiveTimeout = timeoutMs;
        int read = 0;
        while (read < buffer.Length)
        {
            int n = _socket.Receive(buffer, read, buffer.Length - read, SocketFlags.None);
            if (n == 0)
                throw new EndOfStreamException($"the server closed the connection after {read} of {buffer.Length} bytes");
            read += n;
        }
    }

    /// <summary>Reads and drops <paramref name="bytes"/> bytes, a receive at a time with a pause after each: a slow reader.</summary>
    public void ReadSlowly(long bytes, int chunkBytes, int pauseMs)
    {
        var chunk = new byte[chunkBytes];
        long left = bytes;
        _socket.ReceiveTimeout = 30_000;
        while (left > 0)
        {
            int n = _socket.Receive(chunk, 0, (int)Math.Min(chunk.Length, left), SocketFlags.None);
            if (n == 0)
                throw new EndOfStreamException($"the server closed the connection with {left} of {bytes} bytes still to come");
            left -= n;
            Thread.Sleep(pauseMs);
        }
    }

    /// <summary>
    /// Reads everything the server sent until it closed the connection; returns how many bytes
    /// that was. Fails when the connection is still open after <paramref name="timeoutMs"/>.
    /// </summary>
    public long DrainUntilClosed(int timeoutMs)
    {
        var buffer = new byte[256 * 1024];
        long total = 0;
        var deadline = DateTime.UtcNow.AddMilliseconds(timeoutMs);
        while (true)
        {
            int left = (int)(deadline - DateTime.UtcNow).TotalMilliseconds;
            if (left <= 0)
                Assert.Fail($"client {Name}: the server did not close the connection within {timeoutMs} ms ({total} bytes read)");
            _socket.ReceiveTimeout = left;
            int n;
            try
            {
                n = _socket.Receive(buffer);
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
            {
                return total;
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.TimedOut)
            {
                continue;
            }
            if (n == 0)
                return total;
            total += n;
        }
    }

    public void Dispose() => _socket.Dispose();
}
