using Diagnostics.Server.Engine;

namespace Diagnostics.Server.PubSub;

/// <summary>
/// One client's channels and patterns (Redis's c->pubsub_channels and c->pubsub_patterns), kept
/// in step with the server's registry, which pushes published messages to <paramref name="subscriber"/>.
/// The pub/sub commands work on this; the connection only delivers what is pushed to it.
/// </summary>
public sealed class ClientSubscriptions(PubSubRegistry registry, ISubscriber subscriber)
{
    private HashSet<byte[]>? _channels;
    private HashSet<byte[]>? _patterns;

    public int Channels => _channels?.Count ?? 0;
    public int Patterns => _patterns?.Count ?? 0;
    public int Count => Channels + Patterns;

    /// <summary>Subscribes to a channel or pattern; false when already subscribed.</summary>
    public bool Add(byte[] name, bool pattern)
    {
        var own = pattern ? _patterns ??= new HashSet<byte[]>(ByteArrayComparer.Instance) : _channels ??= new HashSet<byte[]>(ByteArrayComparer.Instance);
        if (!own.Add(name))
            return false;
        if (pattern)
            registry.PatternSubscribe(name, subscriber);
        else
            registry.Subscribe(name, subscriber);
        return true;
    }

    /// <summary>
    /// Unsubscribes; false when not subscribed. Once this returns the registry pushes nothing more
    /// for <paramref name="name"/> (publishers push under the registry's lock, which this takes).
    /// </summary>
    public bool Remove(byte[] name, bool pattern)
    {
        var own = pattern ? _patterns : _channels;
        if (own is null || !own.Remove(name))
            return false;
        if (pattern)
            registry.PatternUnsubscribe(name, subscriber);
        else
            registry.Unsubscribe(name, subscriber);
        return true;
    }

    /// <summary>The channels (or patterns) subscribed to, copied: UNSUBSCRIBE without arguments removes them as it goes.</summary>
    public byte[][] Names(bool pattern) => (pattern ? _patterns : _channels)?.ToArray() ?? [];

    /// <summary>Leaves every channel and pattern (RESET, disconnect).</summary>
    public void Clear()
    {
        if (_channels is not null)
        {
            foreach (byte[] name in _channels)
                registry.Unsubscribe(name, subscriber);
            _channels.Clear();
        }
        if (_patterns is not null)
        {
            foreach (byte[] name in _patterns)
                registry.PatternUnsubscribe(name, subscriber);
            _patterns.Clear();
        }
    }
}
