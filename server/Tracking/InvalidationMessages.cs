using System.Text;

namespace Diagnostics.Server.Tracking;

/// <summary>
/// The bytes Redis sends for client-side caching: a RESP3 push (<c>&gt;2 invalidate keys</c>),
/// or, to a RESP2 client subscribed for a redirecting one, a message on __redis__:invalidate.
/// The keys are an array of one key, or a null meaning "everything" after a flush.
/// </summary>
internal static class InvalidationMessages
{
    private static readonly byte[] PushHeader = ">2\r\n$10\r\ninvalidate\r\n"u8.ToArray();
    private static readonly byte[] MessageHeader = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"u8.ToArray();

    public static byte[] Header(bool push) => push ? PushHeader : MessageHeader;

    /// <summary>The header followed by <c>*1 $len key</c>.</summary>
    public static byte[] ForKey(bool push, ReadOnlySpan<byte> key)
    {
        byte[] header = Header(push);
        Span<byte> length = stackalloc byte[20];
        key.Length.TryFormat(length, out int digits);
        var message = new byte[header.Length + 4 + 1 + digits + 2 + key.Length + 2];
        var span = message.AsSpan();
        header.CopyTo(span);
        int at = header.Length;
        "*1\r\n$"u8.CopyTo(span[at..]);
        at += 5;
        length[..digits].CopyTo(span[at..]);
        at += digits;
        "\r\n"u8.CopyTo(span[at..]);
        at += 2;
        key.CopyTo(span[at..]);
        at += key.Length;
        "\r\n"u8.CopyTo(span[at..]);
        return message;
    }

    /// <summary>The header followed by an array of <paramref name="keys"/> (a BCAST client told of several keys at once).</summary>
    public static byte[] ForKeys(bool push, List<byte[]> keys)
    {
        var text = new MemoryStream();
        text.Write(Header(push));
        text.Write(Encoding.ASCII.GetBytes($"*{keys.Count}\r\n"));
        foreach (var key in keys)
        {
            text.Write(Encoding.ASCII.GetBytes($"${key.Length}\r\n"));
            text.Write(key);
            text.Write("\r\n"u8);
        }
        return text.ToArray();
    }

    /// <summary>After a flush: the null of the tracking client's protocol (Redis uses its, not the target's).</summary>
    public static byte[] ForFlush(bool push, int trackerProtocol)
    {
        byte[] header = Header(push);
        ReadOnlySpan<byte> nil = trackerProtocol == 3 ? "_\r\n"u8 : "$-1\r\n"u8;
        var message = new byte[header.Length + nil.Length];
        header.CopyTo(message, 0);
        nil.CopyTo(message.AsSpan(header.Length));
        return message;
    }

    /// <summary>Told to a RESP3 tracking client whose redirect target has gone.</summary>
    public static byte[] RedirectBroken(long redirectId)
        => Encoding.ASCII.GetBytes($">2\r\n$21\r\ntracking-redir-broken\r\n:{redirectId}\r\n");
}
