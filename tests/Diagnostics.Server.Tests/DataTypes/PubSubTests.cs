using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Pub/sub over real connections: subscription replies and counts, messages and pattern messages
/// as RESP2 arrays and RESP3 pushes, the RESP2 subscribed context, introspection, ordering under
/// many messages, a slow subscriber dropped at its output limit while everyone else carries on,
/// and keyspace notifications compared event by event with the real redis-server.
/// </summary>
public sealed class PubSubTests
{
    private static void AssertPush(RespValue reply, char kind, params string?[] expected)
    {
        Assert.Equal(kind, reply.Kind);
        Assert.Equal(expected.Length, reply.Array.Count);
        for (int i = 0; i < expected.Length; i++)
        {
            if (expected[i] is null)
                Assert.True(reply.Array[i].IsNull, $"item {i} of {reply} is not null");
            else if (reply.Array[i].Kind == ':')
                Assert.Equal(expected[i], reply.Array[i].Integer.ToString());
            else
                Assert.Equal(expected[i], reply.Array[i].Text);
        }
    }

    [Theory]
    [InlineData(2, '*')]
    [InlineData(3, '>')]
    public void MessagesReachChannelAndPatternSubscribers(int protocol, char kind)
    {
        using var server = ServerProcess.Start();
        using var subscriber = server.Connect();
        using var publisher = server.Connect();
        if (protocol == 3)
            subscriber.Call("HELLO", "3");
        subscriber.Send("SUBSCRIBE", "news", "sport");
        AssertPush(subscriber.Read(), kind, "subscribe", "news", "1");
        AssertPush(subscriber.Read(), kind, "subscribe", "sport", "2");
        subscriber.Send("PSUBSCRIBE", "n*");
        AssertPush(subscriber.Read(), kind, "psubscribe", "n*", "3");

        RespAssert.Integer(2, publisher.Call("PUBLISH", "news", "hello"));
        AssertPush(subscriber.Read(), kind, "message", "news", "hello");
        AssertPush(subscriber.Read(), kind, "pmessage", "n*", "news", "hello");
        RespAssert.Integer(1, publisher.Call("PUBLISH", "sport", "goal"));
        AssertPush(subscriber.Read(), kind, "message", "sport", "goal");
        RespAssert.Integer(0, publisher.Call("PUBLISH", "weather", "rain"));
        RespAssert.Integer(1, publisher.Call("PUBLISH", "nope", "x"));
        AssertPush(subscriber.Read(), kind, "pmessage", "n*", "nope", "x");

        subscriber.Send("UNSUBSCRIBE");
        var first = subscriber.Read();
        var second = subscriber.Read();
        Assert.Equal(["news", "sport"], new[] { first.Array[1].Text, second.Array[1].Text }.Order());
        Assert.Equal(1, second.Array[2].Integer);
        subscriber.Send("PUNSUBSCRIBE");
        AssertPush(subscriber.Read(), kind, "punsubscribe", "n*", "0");
        subscriber.Send("UNSUBSCRIBE");
        AssertPush(subscriber.Read(), kind, "unsubscribe", null, "0");
        // Back to a normal connection.
        RespAssert.Null(subscriber.Call("GET", "anything"));
    }

    [Fact]
    public void Resp2SubscribersTakeOnlyPubSubCommandsAndPing()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        c.Send("SUBSCRIBE", "ch");
        c.Read();
        RespAssert.Error("ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", c.Call("GET", "k"));
        RespAssert.BulkArray(c.Call("PING"), "pong", "");
        RespAssert.BulkArray(c.Call("PING", "hi"), "pong", "hi");
        RespAssert.Simple("RESET", c.Call("RESET"));
        RespAssert.Simple("PONG", c.Call("PING"));

        // RESP3: anything runs while subscribed, and pushes interleave with the replies.
        using var r3 = server.Connect();
        using var publisher = server.Connect();
        r3.Call("HELLO", "3");
        r3.Send("SUBSCRIBE", "ch");
        r3.Read();
        RespAssert.Ok(r3.Call("SET", "k", "v"));
        publisher.Call("PUBLISH", "ch", "m1");
        AssertPush(r3.Read(), '>', "message", "ch", "m1");
        RespAssert.Bulk("v", r3.Call("GET", "k"));
    }

    [Fact]
    public void IntrospectionCountsChannelsPatternsAndSubscribers()
    {
        using var server = ServerProcess.Start();
        using var a = server.Connect();
        using var b = server.Connect();
        using var observer = server.Connect();
        a.Send("SUBSCRIBE", "one", "two");
        a.Read();
        a.Read();
        b.Send("SUBSCRIBE", "two");
        b.Read();
        b.Send("PSUBSCRIBE", "t*", "o*");
        b.Read();
        b.Read();
        Assert.Equal(["one", "two"], observer.Call("PUBSUB", "CHANNELS").Array.Select(v => v.Text).Order());
        RespAssert.BulkArray(observer.Call("PUBSUB", "CHANNELS", "t*"), "two");
        var numsub = observer.Call("PUBSUB", "NUMSUB", "one", "two", "none").Array;
        Assert.Equal(["one", "1", "two", "2", "none", "0"], numsub.Select(v => v.Kind == ':' ? v.Integer.ToString() : v.Text));
        RespAssert.Integer(2, observer.Call("PUBSUB", "NUMPAT"));
        Assert.Equal("2", InfoFields.Get(observer, "stats", "pubsub_channels"));
        Assert.Equal("2", InfoFields.Get(observer, "stats", "pubsub_patterns"));
        string list = observer.Call("CLIENT", "LIST").Text!;
        Assert.Contains(list.Split('\n'), line => line.Contains("sub=1 psub=2") && line.Contains("flags=P"));

        // A subscriber that goes away leaves its channels.
        b.Dispose();
        Poll.Until(() => observer.Call("PUBSUB", "NUMPAT").Integer == 0, "the closed subscriber's patterns to go");
        Assert.Equal(1, observer.Call("PUBSUB", "NUMSUB", "two").Array[1].Integer);
    }

    [Fact]
    public void ManyMessagesArriveInOrder()
    {
        using var server = ServerProcess.Start();
        using var subscriber = server.Connect();
        using var publisher = server.Connect();
        subscriber.Send("SUBSCRIBE", "stream");
        subscriber.Read();
        const int messages = 5000;
        Pipeline.RunAll(publisher, Enumerable.Range(0, messages).Select(i => new[] { "PUBLISH", "stream", "m" + i }));
        for (int i = 0; i < messages; i++)
            Assert.Equal("m" + i, subscriber.Read().Array[2].Text);
    }

    [Fact]
    public async Task ASubscriberThatStopsReadingIsDroppedAndOthersCarryOn()
    {
        using var server = ServerProcess.Start();
        using var publisher = server.Connect();
        RespAssert.Ok(publisher.Call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 2mb 0 0"));
        using var slow = server.Connect();
        using var healthy = server.Connect();
        slow.Send("SUBSCRIBE", "flood");
        slow.Read();
        healthy.Send("SUBSCRIBE", "flood");
        healthy.Read();
        string payload = new('x', 10_000);
        const int Messages = 3000;
        int read = 0;
        var reader = Task.Run(() =>
        {
            for (int i = 0; i < Messages; i++)
            {
                Assert.Equal(payload, healthy.Read().Array[2].Text);
                Volatile.Write(ref read, i + 1);
            }
        });
        // The slow one never reads: 30 MB meant for it goes over 2 MB once the kernel's socket
        // buffers (several MB on loopback) are full.
        for (int i = 0; i < Messages; i++)
        {
            // The healthy subscriber is never more than 50 messages (500 KB) behind, however
            // loaded the machine: its limit is 2 MB.
            while (i - Volatile.Read(ref read) > 50 && !reader.IsCompleted)
                Thread.Sleep(1);
            Assert.False(publisher.Call("PUBLISH", "flood", payload).IsError);
        }
        await reader.WaitAsync(TimeSpan.FromSeconds(30));
        Poll.Until(() => InfoFields.GetInt64(publisher, "stats", "client_output_buffer_limit_disconnections") >= 1, "the slow subscriber to be dropped");
        // What the kernel had already taken still reads; then the stream ends, short of everything.
        int received = 0;
        try
        {
            while (true)
            {
                slow.Read();
                received++;
            }
        }
        catch (Exception e) when (e is EndOfStreamException || (e is IOException && e.InnerException is not System.Net.Sockets.SocketException { SocketErrorCode: System.Net.Sockets.SocketError.TimedOut }))
        {
        }
        Assert.True(received < Messages, $"the dropped subscriber still received all {received} messages");
        RespAssert.Integer(1, publisher.Call("PUBLISH", "flood", "after"));
        Assert.Equal("after", healthy.Read().Array[2].Text);
    }

    [Fact]
    public void KeyspaceNotificationsMatchRedisEventForEvent()
    {
        string[][] script =
        [
            ["SET", "a", "1"], ["SET", "a", "2", "EX", "100"], ["INCR", "n"], ["APPEND", "a", "x"], ["DEL", "a", "nope"],
            ["RPUSH", "l", "x", "y"], ["LPOP", "l"], ["RPOP", "l"], ["LPUSH", "l", "q"], ["LMOVE", "l", "l2", "LEFT", "RIGHT"],
            ["RPOPLPUSH", "l2", "l3"], ["HSET", "h", "f", "v"], ["HINCRBY", "h", "n", "1"], ["HDEL", "h", "f", "n"],
            ["SADD", "s", "a", "b"], ["SMOVE", "s", "t", "a"], ["SPOP", "s"], ["ZADD", "z", "1", "a", "2", "b"], ["ZINCRBY", "z", "1", "a"],
            ["ZADD", "z", "INCR", "5", "b"], ["ZADD", "z", "NX", "9", "a"],
            ["ZPOPMIN", "z"], ["ZREM", "z", "a"], ["ZREM", "z", "b"], ["RENAME", "t", "t2"], ["EXPIRE", "t2", "100"], ["PERSIST", "t2"],
            ["COPY", "t2", "t3"], ["MOVE", "t3", "1"], ["LMPOP", "1", "l3", "LEFT"], ["SINTERSTORE", "si", "t2", "t2"],
            ["ZADD", "zz", "1", "m"], ["ZMPOP", "1", "zz", "MIN"], ["GETDEL", "n"],
            ["SETBIT", "bm", "3", "1"], ["SETBIT", "bm", "3", "1"], ["BITFIELD", "bm", "SET", "u8", "0", "16"], ["BITFIELD", "bm", "GET", "u8", "0"],
            ["BITFIELD", "bm", "INCRBY", "u8", "8", "1"], ["BITFIELD", "bm", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"], ["BITOP", "OR", "bo", "bm", "bm"],
            ["BITOP", "AND", "bo", "nokey1"], ["BITOP", "AND", "bo2", "nokey1"], ["RPUSH", "sl", "2", "1"], ["SORT", "sl", "STORE", "sd"],
            ["SORT", "nokey2", "STORE", "sd"], ["SORT", "nokey2", "STORE", "sd"], ["SORT", "sl"],
            ["XADD", "xs", "1-0", "f", "v"], ["XADD", "xs", "MAXLEN", "1", "2-0", "f", "v"], ["XADD", "xs", "NOMKSTREAM", "3-0", "f", "v"],
            ["XADD", "nostream", "NOMKSTREAM", "3-0", "f", "v"], ["XDEL", "xs", "1-0"], ["XDEL", "xs", "3-0"], ["XTRIM", "xs", "MAXLEN", "5"],
            ["XTRIM", "xs", "MAXLEN", "0"], ["XSETID", "xs", "9-0"], ["XGROUP", "CREATE", "xs", "g", "$"], ["XGROUP", "CREATE", "xm", "g", "$", "MKSTREAM"],
            ["XGROUP", "CREATECONSUMER", "xs", "g", "c1"], ["XGROUP", "CREATECONSUMER", "xs", "g", "c1"], ["XADD", "xs", "10-0", "f", "v"],
            ["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "xs", ">"], ["XCLAIM", "xs", "g", "c3", "0", "10-0"], ["XAUTOCLAIM", "xs", "g", "c4", "0", "0"],
            ["XACK", "xs", "g", "10-0"], ["XGROUP", "SETID", "xs", "g", "0"], ["XGROUP", "DELCONSUMER", "xs", "g", "c1"], ["XGROUP", "DELCONSUMER", "xs", "g", "nobody"],
            ["XGROUP", "DESTROY", "xs", "g"], ["XGROUP", "DESTROY", "xs", "g"],
            // GEOADD publishes ZADD's zadd (only when something changed); the STORE forms georadiusstore or geosearchstore, del when they only delete.
            ["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"], ["GEOADD", "g", "NX", "1", "1", "Palermo"],
            ["GEOADD", "g", "XX", "CH", "13.4", "38.1", "Palermo", "1", "1", "nobody"], ["GEORADIUS", "g", "15", "37", "200", "km"],
            ["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gd"], ["GEORADIUSBYMEMBER", "g", "Palermo", "1", "m", "STOREDIST", "gd"],
            ["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "gd"], ["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "gd"],
            ["GEOSEARCHSTORE", "gs", "g", "FROMMEMBER", "Catania", "BYRADIUS", "500", "km", "STOREDIST"], ["GEOSEARCHSTORE", "g", "g", "FROMMEMBER", "Catania", "BYRADIUS", "1", "km"],
            ["GEOSEARCHSTORE", "gs", "nokey3", "FROMMEMBER", "x", "BYRADIUS", "1", "km"], ["GEOSEARCHSTORE", "gs", "nokey3", "FROMMEMBER", "x", "BYRADIUS", "1", "km"],
            ["GEOSEARCH", "gs", "FROMLONLAT", "15", "37", "BYRADIUS", "500", "km"], ["GEORADIUSBYMEMBER", "nokey3", "x", "1", "km", "STORE", "g"],
            ["PFADD", "hl", "a", "b"], ["PFADD", "hl", "a"], ["PFADD", "hl2"], ["PFADD", "hl2"], ["PFCOUNT", "hl"], ["PFCOUNT", "hl", "hl2"],
            ["PFMERGE", "hm", "hl", "hl2"], ["PFMERGE", "hm"], ["PFDEBUG", "DECODE", "hl2"], ["PFDEBUG", "TODENSE", "hl"],
            ["PFDEBUG", "GETREG", "hl2"], ["PFDEBUG", "ENCODING", "hl"], ["PFADD", "hl", "c"],
            ["SET", "gone", "v", "PX", "1"],
        ];
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        var mine = Events(ours.Connect(), ours.Connect(), script, "KEA");
        var theirs = Events(redis.Connect(), redis.Connect(), script, "KEA");
        Assert.True(theirs.Count > 40, $"redis published only {theirs.Count} events");
        Assert.Equal(theirs, mine);

        // Off by default: nothing is published (the marker is the first message the listener sees).
        using var quiet = ServerProcess.Start();
        using var c = quiet.Connect();
        using var listener = quiet.Connect();
        Assert.Equal("", c.Call("CONFIG", "GET", "notify-keyspace-events").Array[1].Text);
        listener.Send("PSUBSCRIBE", "*");
        listener.Read();
        RespAssert.Ok(c.Call("SET", "k", "v", "PX", "1"));
        c.Call("RPUSH", "l", "x");
        Thread.Sleep(200);
        RespAssert.Integer(1, c.Call("PUBLISH", "marker", "m"));
        Assert.Equal("marker", listener.Read().Array[2].Text);
    }

    /// <summary>Runs the script with notifications on and returns "event key" for every __keyevent message, in order.</summary>
    private static List<string> Events(RespClient commands, RespClient listener, string[][] script, string flags)
    {
        using (commands)
        using (listener)
        {
            RespAssert.Ok(commands.Call("CONFIG", "SET", "notify-keyspace-events", flags));
            listener.Send("PSUBSCRIBE", "__keyevent@*");
            listener.Read();
            foreach (var command in script)
                Assert.False(commands.Call(command).IsError, string.Join(' ', command));
            // The last key expires on its own: wait for its event, the last one.
            var events = new List<string>();
            while (true)
            {
                var message = listener.Read().Array;
                string channel = message[2].Text!;
                events.Add(channel[(channel.IndexOf(':') + 1)..] + " " + message[3].Text);
                if (channel.EndsWith(":expired", StringComparison.Ordinal))
                    return events;
            }
        }
    }
}
