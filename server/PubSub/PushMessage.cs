using System.Buffers.Text;

namespace Diagnostics.Server.PubSub;

/// <summary>
/// Published messages in RESP form: [message, channel, payload] or [pmessage, pattern, channel,
/// payload], an array in RESP2 and a push in RESP3. Encoded once per publish and protocol, and
/// the same bytes shared by every subscriber.
/// </summary>
public static class PushMessage
{
    public static byte[] Encode(int protocol, ReadOnlySpan<byte> kind, ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> channel, ReadOnlySpan<byte> payload)
    {
        bool withPattern = !pattern.IsEmpty || kind.SequenceEqual("pmessage"u8);
        int parts = withPattern ? 4 : 3;
        int size = 16 + Bulk(kind) + Bulk(channel) + Bulk(payload) + (withPattern ? Bulk(pattern) : 0);
        var bytes = new byte[size];
        int at = 0;
        bytes[at++] = protocol == 3 ? (byte)'>' : (byte)'*';
        at += Number(parts, bytes.AsSpan(at));
        at = WriteBulk(kind, bytes, at);
        if (withPattern)
            at = WriteBulk(pattern, bytes, at);
        at = WriteBulk(channel, bytes, at);
        at = WriteBulk(payload, bytes, at);
        return at == bytes.Length ? bytes : bytes[..at];
    }

    private static int Bulk(ReadOnlySpan<byte> value) => 1 + 11 + 2 + value.Length + 2;

    private static int WriteBulk(ReadOnlySpan<byte> value, byte[] bytes, int at)
    {
        bytes[at++] = (byte)'$';
        at += Number(value.Length, bytes.AsSpan(at));
        value.CopyTo(bytes.AsSpan(at));
        at += value.Length;
        bytes[at++] = (byte)'\r';
        bytes[at++] = (byte)'\n';
        return at;
    }

    private static int Number(int value, Span<byte> target)
    {
        Utf8Formatter.TryFormat(value, target, out int written);
        target[written] = (byte)'\r';
        target[written + 1] = (byte)'\n';
        return written + 2;
    }
}
