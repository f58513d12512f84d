using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>One RESP2 reply: a simple string, error, integer, bulk (null when absent) or array.</summary>
public sealed record RespReply(char Kind, string? Text, long Integer = 0, IReadOnlyList<RespReply>? Items = null)
{
    public bool IsError => Kind == '-';
}

/// <summary>
/// A minimal RESP2 client for the harness's probes (PING, INFO, CONFIG GET). One connection is
/// kept open for the whole run so the probes themselves add no connection churn to the
/// allocation figures of our server.
/// </summary>
public sealed class RespConnection : IDisposable
{
    private readonly TcpClient _tcp;
    private readonly NetworkStream _stream;
    private readonly BufferedStream _input;

    public RespConnection(int port)
    {
        _tcp = new TcpClient { NoDelay = true };
        _tcp.Connect(IPAddress.Loopback, port);
        _stream = _tcp.GetStream();
        _stream.ReadTimeout = 60_000;
        _input = new BufferedStream(_stream, 64 * 1024);
    }

    public RespReply Call(params string[] args)
    {
        var request = new StringBuilder();
        request.Append('*').Append(args.Length).Append("\r\n");
        foreach (string arg in args)
            request.Append('$').Append(Encoding.UTF8.GetByteCount(arg)).Append("\r\n").Append(arg).Append("\r\n");
        _stream.Write(Encoding.UTF8.GetBytes(request.ToString()));
        return Read();
    }

    private RespReply Read()
    {
        int kind = _input.ReadByte();
        if (kind < 0)
            throw new IOException("connection closed by server");
        string line = ReadLine();
        switch ((char)kind)
        {
            case '+':
            case '-':
                return new RespReply((char)kind, line);
            case ':':
                return new RespReply(':', line, long.Parse(line, CultureInfo.InvariantCulture));
            case '$':
            {
                int length = int.Parse(line, CultureInfo.InvariantCulture);
                if (length < 0)
                    return new RespReply('$', null);
                var data = new byte[length];
                _input.ReadExactly(data);
                ReadLine();
                return new RespReply('$', Encoding.UTF8.GetString(data));
            }
            case '*':
            {
                int count = int.Parse(line, CultureInfo.InvariantCulture);
                if (count < 0)
                    return new RespReply('*', null);
                var items = new List<RespReply>(count);
                for (int i = 0; i < count; i++)
                    items.Add(Read());
                return new RespReply('*', null, count, items);
            }
            default:
                throw new IOException($"unexpected RESP type byte '{(char)kind}' followed by '{line}'");
        }
    }

    private string ReadLine()
    {
        var bytes = new List<byte>(64);
        while (true)
        {
            int b = _input.ReadByte();
            if (b < 0)
                throw new IOException("connection closed by server");
            if (b == '\r')
            {
                _input.ReadByte();
                return Encoding.UTF8.GetString(bytes.ToArray());
            }
            bytes.Add((byte)b);
        }
    }

    public void Dispose()
    {
        _input.Dispose();
        _tcp.Dispose();
    }
}
