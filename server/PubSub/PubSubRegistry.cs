using Diagnostics.Server.Engine;

namespace Diagnostics.Server.PubSub;

/// <summary>
/// Channels and patterns and who subscribed to them, server-wide. Publishing takes one lock
/// (pub/sub is no part of the keyspace, whose data path stays lock-free) and only queues the
/// encoded message with each subscriber; their own threads write it out.
/// </summary>
public sealed class PubSubRegistry
{
    private readonly Lock _gate = new();
    private readonly Dictionary<byte[], HashSet<ISubscriber>> _channels = new(ByteArrayComparer.Instance);
    private readonly Dictionary<byte[], HashSet<ISubscriber>> _patterns = new(ByteArrayComparer.Instance);
    private readonly Dictionary<byte[], HashSet<ISubscriber>>.AlternateLookup<ReadOnlySpan<byte>> _channelLookup;
    private long _messages;

    public PubSubRegistry() => _channelLookup = _channels.GetAlternateLookup<ReadOnlySpan<byte>>();

    /// <summary>Channels with at least one subscriber (INFO pubsub_channels).</summary>
    public int ChannelCount
    {
        get
        {
            lock (_gate)
                return _channels.Count;
        }
    }

    /// <summary>Distinct patterns subscribed to (INFO pubsub_patterns, PUBSUB NUMPAT).</summary>
    public int PatternCount
    {
        get
        {
            lock (_gate)
                return _patterns.Count;
        }
    }

    /// <summary>Messages published since start (the studio's pub/sub rate).</summary>
    public long Messages => Volatile.Read(ref _messages);

    public void Subscribe(byte[] channel, ISubscriber subscriber) => Add(_channels, channel, subscriber);
    public void Unsubscribe(byte[] channel, ISubscriber subscriber) => Remove(_channels, channel, subscriber);
    public void PatternSubscribe(byte[] pattern, ISubscriber subscriber) => Add(_patterns, pattern, subscriber);
    public void PatternUnsubscribe(byte[] pattern, ISubscriber subscriber) => Remove(_patterns, pattern, subscriber);

    private void Add(Dictionary<byte[], HashSet<ISubscriber>> table, byte[] name, ISubscriber subscriber)
    {
        lock (_gate)
        {
            if (!table.TryGetValue(name, out var subscribers))
                table.Add(name, subscribers = []);
            subscribers.Add(subscriber);
        }
    }

    private void Remove(Dictionary<byte[], HashSet<ISubscriber>> table, byte[] name, ISubscriber subscriber)
    {
        lock (_gate)
        {
            if (table.TryGetValue(name, out var subscribers) && subscribers.Remove(subscriber) && subscribers.Count == 0)
                table.Remove(name);
        }
    }

    /// <summary>Delivers to the channel's subscribers and every matching pattern's; returns how many received it.</summary>
    public int Publish(ReadOnlySpan<byte> channel, ReadOnlySpan<byte> payload)
    {
        int receivers = 0;
        lock (_gate)
        {
            if (_channels.Count == 0 && _patterns.Count == 0)
                return 0;
            Interlocked.Increment(ref _messages);
            if (_channelLookup.TryGetValue(channel, out var subscribers))
            {
                byte[]? resp2 = null, resp3 = null;
                foreach (var subscriber in subscribers)
                {
                    subscriber.Push(subscriber.Protocol == 3
                        ? resp3 ??= PushMessage.Encode(3, "message"u8, default, channel, payload)
                        : resp2 ??= PushMessage.Encode(2, "message"u8, default, channel, payload));
                    receivers++;
                }
            }
            foreach (var (pattern, patternSubscribers) in _patterns)
            {
                if (!GlobPattern.IsMatch(pattern, channel))
                    continue;
                byte[]? resp2 = null, resp3 = null;
                foreach (var subscriber in patternSubscribers)
                {
                    subscriber.Push(subscriber.Protocol == 3
                        ? resp3 ??= PushMessage.Encode(3, "pmessage"u8, pattern, channel, payload)
                        : resp2 ??= PushMessage.Encode(2, "pmessage"u8, pattern, channel, payload));
                    receivers++;
                }
            }
        }
        return receivers;
    }

    /// <summary>Active channels matching <paramref name="pattern"/> (all when null), for PUBSUB CHANNELS.</summary>
    public List<byte[]> Channels(ReadOnlySpan<byte> pattern, bool all)
    {
        var result = new List<byte[]>();
        lock (_gate)
        {
            foreach (var channel in _channels.Keys)
                if (all || GlobPattern.IsMatch(pattern, channel))
                    result.Add(channel);
        }
        return result;
    }

    /// <summary>Subscribers of one channel (PUBSUB NUMSUB; pattern subscribers not counted, as in Redis).</summary>
    public int SubscriberCount(ReadOnlySpan<byte> channel)
    {
        lock (_gate)
            return _channelLookup.TryGetValue(channel, out var subscribers) ? subscribers.Count : 0;
    }
}
