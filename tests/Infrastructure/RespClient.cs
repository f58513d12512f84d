using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A deliberately small RESP client over a real TCP socket. It sends exactly the bytes a test
/// asks for (well-formed commands, or raw and broken ones) and decodes every RESP2/RESP3 reply
/// type, so tests see the server's wire behaviour, not a library's interpretation of it.
/// </summary>
public sealed class RespClient : IDisposable
{
    private readonly TcpClient _tcp;
    private readonly Stream _stream;
    private readonly BufferedStream _input;

    public RespClient(int port, string host = "127.0.0.1")
        : this(Connected(port, host), tls: null)
    {
    }

    private RespClient(TcpClient tcp, System.Net.Security.SslClientAuthenticationOptions? tls)
    {
        _tcp = tcp;
        Stream stream = tcp.GetStream();
        if (tls is not null)
        {
            var ssl = new System.Net.Security.SslStream(stream, leaveInnerStreamOpen: false);
            try
            {
                ssl.AuthenticateAsClient(tls);
            }
            catch
            {
                ssl.Dispose();
                tcp.Dispose();
                throw;
            }
            Tls = ssl;
            stream = ssl;
        }
        _stream = stream;
        _stream.ReadTimeout = 30_000;
        _input = new BufferedStream(_stream, 64 * 1024);
    }

    /// <summary>A client that speaks RESP inside TLS, once its handshake succeeded (which throws if it fails).</summary>
    public static RespClient ConnectTls(int port, System.Net.Security.SslClientAuthenticationOptions options, string host = "127.0.0.1")
        => new(Connected(port, host), options);

    /// <summary>The TLS session for a client made with <see cref="ConnectTls"/>: the server's certificate, the protocol.</summary>
    public System.Net.Security.SslStream? Tls { get; }

    private static TcpClient Connected(int port, string host)
    {
        var tcp = new TcpClient();
        tcp.Connect(IPAddress.Parse(host), port);
        tcp.NoDelay = true;
        return tcp;
    }

    /// <summary>Sends one command as a multibulk request and reads its reply.</summary>
    public RespValue Call(params string[] args)
    {
        Send(args);
        return Read();
    }

    /// <summary>Sends a command whose arguments are raw bytes.</summary>
    public RespValue Call(params byte[][] args)
    {
        SendRaw(Encode(args));
        return Read();
    }

    public void Send(params string[] args) => SendRaw(Encode(args));

    public static byte[] Encode(params string[] args)
    {
        var bytes = new byte[args.Length][];
        for (int i = 0; i < args.Length; i++)
            bytes[i] = Encoding.UTF8.GetBytes(args[i]);
        return Encode(bytes);
    }

    /// <summary>Several commands back to back, as one pipelined write.</summary>
    public static byte[] EncodeAll(params string[][] commands)
    {
        using var buffer = new MemoryStream();
        foreach (var command in commands)
            buffer.Write(Encode(command));
        return buffer.ToArray();
    }

    public static byte[] Encode(params byte[][] args)
    {
        using var buffer = new MemoryStream();
        Write(buffer, $"*{args.Length}\r\n");
        foreach (var arg in args)
        {
            Write(buffer, $"${arg.Length}\r\n");
            buffer.Write(arg);
            Write(buffer, "\r\n");
        }
        return buffer.ToArray();
    }

    public void SendRaw(byte[] bytes)
    {
        _stream.Write(bytes);
        _stream.Flush();
    }

    public void SendRaw(string text) => SendRaw(Encoding.UTF8.GetBytes(text));

    /// <summary>Reads one reply; throws IOException when the server closed the connection.</summary>
    /// <summary>Sends a command whose reply is a bulk string and returns its bytes as sent (RespValue keeps text only).</summary>
    public byte[] CallForBytes(params string[] args)
    {
        Send(args);
        int kind = _input.ReadByte();
        string line = ReadLine();
        if (kind != '$')
            throw new InvalidDataException($"expected a bulk string, got '{(char)kind}{line}'");
        var data = new byte[int.Parse(line, CultureInfo.InvariantCulture)];
        _input.ReadExactly(data);
        ReadLine();
        return data;
    }

    public RespValue Read()
    {
        int kind = _input.ReadByte();
        if (kind < 0)
            throw new EndOfStreamException("connection closed by server");
        string line = ReadLine();
        switch ((char)kind)
        {
            case '+':
            case '-':
                return new RespValue((char)kind, line);
            case ':':
                return new RespValue(':', line, long.Parse(line, CultureInfo.InvariantCulture));
            case '(':
                return new RespValue('(', line);
            case ',':
                return new RespValue(',', line, 0, ParseDouble(line));
            case '#':
                return new RespValue('#', line, line == "t" ? 1 : 0);
            case '_':
                return new RespValue('_');
            case '$':
            case '=':
            case '!':
            {
                int length = int.Parse(line, CultureInfo.InvariantCulture);
                if (length < 0)
                    return new RespValue('$');
                var data = new byte[length];
                _input.ReadExactly(data);
                ReadLine();
                return new RespValue((char)kind, Encoding.UTF8.GetString(data));
            }
            case '*':
            case '~':
            case '>':
            case '%':
            {
                int count = int.Parse(line, CultureInfo.InvariantCulture);
                if (count < 0)
                    return new RespValue('*');
                int items = kind == '%' ? count * 2 : count;
                var list = new List<RespValue>(items);
                for (int i = 0; i < items; i++)
                    list.Add(Read());
                return new RespValue((char)kind, null, count, 0, list);
            }
            default:
                throw new InvalidDataException($"unexpected reply type '{(char)kind}' followed by '{line}'");
        }
    }

    /// <summary>
    /// True when the server has closed the connection (end of stream or reset within the timeout);
    /// false when the connection is still open when the timeout passes, or when a byte arrives.
    /// </summary>
    public bool IsClosedByServer(int timeoutMs = 5000)
    {
        _stream.ReadTimeout = timeoutMs;
        try
        {
            return _input.ReadByte() < 0;
        }
        catch (IOException e) when (e.InnerException is SocketException { SocketErrorCode: SocketError.TimedOut or SocketError.WouldBlock })
        {
            return false; // nothing arrived and nothing closed: the connection is open
        }
        catch (IOException)
        {
            return true;
        }
        finally
        {
            _stream.ReadTimeout = 30_000;
        }
    }

    /// <summary>
    /// True when nothing arrives within <paramref name="ms"/>: a reply the server holds back (a
    /// paused or blocked command). Only meaningful when every earlier reply was read, as bytes
    /// read ahead into the buffer would not count.
    /// </summary>
    public bool SilentFor(int ms)
    {
        Thread.Sleep(ms);
        return _tcp.Available == 0;
    }

    private string ReadLine()
    {
        var line = new StringBuilder();
        while (true)
        {
            int b = _input.ReadByte();
            if (b < 0)
                throw new EndOfStreamException("connection closed by server mid-reply");
            if (b == '\r')
            {
                int lf = _input.ReadByte();
                if (lf != '\n')
                    throw new InvalidDataException("reply line not terminated by CRLF");
                return line.ToString();
            }
            line.Append((char)b);
        }
    }

    private static double ParseDouble(string text) => text switch
    {
        "inf" => double.PositiveInfinity,
        "-inf" => double.NegativeInfinity,
        _ => double.Parse(text, CultureInfo.InvariantCulture),
    };

    private static void Write(Stream stream, string text) => stream.Write(Encoding.ASCII.GetBytes(text));

    public void Dispose()
    {
        _input.Dispose();
        _tcp.Dispose();
    }
}
