using System.Collections.Concurrent;
using Diagnostics.ClientLibrary.Tests.Targets;
using Diagnostics.Server.Tests.Infrastructure;
using StackExchange.Redis;

namespace Diagnostics.ClientLibrary.Tests;

/// <summary>
/// ISubscriber as applications use it: channel and pattern subscriptions, publish counts, the
/// order of many messages, unsubscribe, over RESP2 (a second connection for pub/sub) and RESP3
/// (pushes on the one connection), against both servers.
/// </summary>
[Collection(BothServersCollection.Name)]
public sealed class PubSubTests(BothServers servers)
{
    public static TheoryData<Target, RedisProtocol> TargetsAndProtocols => new()
    {
        { Target.Diagnostics, RedisProtocol.Resp2 },
        { Target.Redis, RedisProtocol.Resp2 },
        { Target.Diagnostics, RedisProtocol.Resp3 },
        { Target.Redis, RedisProtocol.Resp3 },
    };

    [Theory]
    [MemberData(nameof(TargetsAndProtocols))]
    public void ChannelAndPatternSubscribersReceiveWhatIsPublished(Target target, RedisProtocol protocol)
    {
        using var subscriberConnection = servers.Connect(target, protocol);
        using var publisherConnection = servers.Connect(target, protocol);
        var subscriber = subscriberConnection.GetSubscriber();
        var publisher = publisherConnection.GetSubscriber();
        var received = new ConcurrentQueue<string>();
        var exact = RedisChannel.Literal($"news.{protocol}");
        var pattern = RedisChannel.Pattern($"news.{protocol}*");

        subscriber.Subscribe(exact, (channel, message) => received.Enqueue($"exact {channel} {message}"));
        subscriber.Subscribe(pattern, (channel, message) => received.Enqueue($"pattern {channel} {message}"));

        Assert.Equal(2, publisher.Publish(exact, "hello"));
        Assert.Equal(1, publisher.Publish(RedisChannel.Literal($"news.{protocol}.sport"), "goal"));
        Assert.Equal(0, publisher.Publish(RedisChannel.Literal("elsewhere"), "nobody"));

        Poll.Until(() => received.Count >= 3, () => $"3 messages, got [{string.Join(", ", received)}]");
        Assert.Equal(
            [$"exact news.{protocol} hello", $"pattern news.{protocol} hello", $"pattern news.{protocol}.sport goal"],
            received.Order(StringComparer.Ordinal).ToArray());
    }

    [Theory]
    [MemberData(nameof(TargetsAndProtocols))]
    public async Task ManyMessagesArriveInTheOrderPublished(Target target, RedisProtocol protocol)
    {
        using var subscriberConnection = servers.Connect(target, protocol);
        using var publisherConnection = servers.Connect(target, protocol);
        var channel = RedisChannel.Literal($"ordered.{protocol}");
        // A ChannelMessageQueue hands messages over one at a time in arrival order (the callback
        // form may run handlers concurrently, which says nothing about the wire order).
        var queue = subscriberConnection.GetSubscriber().Subscribe(channel);
        var publisher = publisherConnection.GetSubscriber();
        const int count = 500;
        var published = new Task<long>[count];
        for (int i = 0; i < count; i++)
            published[i] = publisher.PublishAsync(channel, i.ToString());
        Assert.All(await Task.WhenAll(published), receivers => Assert.Equal(1, receivers));

        for (int i = 0; i < count; i++)
        {
            var next = await queue.ReadAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(10));
            Assert.Equal(i.ToString(), (string?)next.Message);
        }
    }

    [Theory]
    [MemberData(nameof(TargetsAndProtocols))]
    public async Task KeyspaceNotificationsReachAPatternSubscriber(Target target, RedisProtocol protocol)
    {
        // Cache invalidation as applications build it: the server publishes what happens to keys.
        using var connection = servers.Connect(target, protocol);
        var server = connection.GetServer(connection.GetEndPoints()[0]);
        var db = connection.GetDatabase();
        string key = $"notify:{protocol}:item";
        db.KeyDelete(key);
        var queue = await connection.GetSubscriber().SubscribeAsync(RedisChannel.Pattern($"__keyspace@0__:notify:{protocol}:*"));
        server.ConfigSet("notify-keyspace-events", "KA");
        var events = new List<string>();
        try
        {
            db.StringSet(key, "1");
            db.StringIncrement(key);
            db.KeyExpire(key, TimeSpan.FromSeconds(100));
            db.KeyDelete(key);
            for (int i = 0; i < 4; i++)
            {
                var message = await queue.ReadAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(10));
                Assert.Equal($"__keyspace@0__:{key}", (string?)message.Channel);
                events.Add((string)message.Message!);
            }
        }
        finally
        {
            server.ConfigSet("notify-keyspace-events", "");
        }
        Assert.Equal(["set", "incrby", "expire", "del"], events);
    }

    [Theory]
    [MemberData(nameof(TargetsAndProtocols))]
    public void UnsubscribeStopsDeliveryAndTheServerCountsNoSubscriber(Target target, RedisProtocol protocol)
    {
        using var subscriberConnection = servers.Connect(target, protocol);
        using var publisherConnection = servers.Connect(target, protocol);
        var subscriber = subscriberConnection.GetSubscriber();
        var publisher = publisherConnection.GetSubscriber();
        var channel = RedisChannel.Literal($"leaving.{protocol}");
        var pattern = RedisChannel.Pattern($"leaving.{protocol}.*");
        int received = 0;
        subscriber.Subscribe(channel, (_, _) => Interlocked.Increment(ref received));
        subscriber.Subscribe(pattern, (_, _) => Interlocked.Increment(ref received));
        var server = publisherConnection.GetServer(publisherConnection.GetEndPoints()[0]);
        Assert.Equal(1, (long)publisherConnection.GetDatabase().Execute("PUBSUB", "NUMSUB", (string)channel!)[1]);
        // NUMPAT counts every client's patterns: an earlier test's closed connection may still be
        // leaving, so wait for the count this test makes.
        Poll.Until(() => (long)publisherConnection.GetDatabase().Execute("PUBSUB", "NUMPAT") == 1, "PUBSUB NUMPAT is 1");
        Assert.Equal(1, publisher.Publish(channel, "one"));
        Poll.Until(() => Volatile.Read(ref received) == 1, "the first message arrives");

        subscriber.Unsubscribe(channel);
        subscriber.Unsubscribe(pattern);

        Assert.Equal(0, publisher.Publish(channel, "two"));
        Assert.Equal(0, publisher.Publish(RedisChannel.Literal($"leaving.{protocol}.x"), "three"));
        Assert.Equal(0, (long)publisherConnection.GetDatabase().Execute("PUBSUB", "NUMSUB", (string)channel!)[1]);
        Assert.Equal(0, (long)publisherConnection.GetDatabase().Execute("PUBSUB", "NUMPAT"));
        Assert.Empty(server.SubscriptionChannels(RedisChannel.Pattern($"leaving.{protocol}*")));
        Assert.Equal(1, Volatile.Read(ref received));
    }
}
