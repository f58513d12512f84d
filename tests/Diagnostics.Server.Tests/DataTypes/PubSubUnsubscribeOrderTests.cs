using System.Diagnostics;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Nothing reaches a client after the reply that ends its last subscription: a RESP2 client is
/// back in normal mode then, and would read a late message as the reply to its next command.
/// A raw RESP2 subscriber runs subscribe / unsubscribe cycles on one channel while publishers
/// hammer it from other connections; after each count-0 unsubscribe reply the next frame must be
/// the +PONG of the PING sent with it, and before the next subscribe reply no message may come.
/// The same client runs against redis-server, which delivers none late.
/// </summary>
public sealed class PubSubUnsubscribeOrderTests
{
    private const int Publishers = 3;
    private static readonly TimeSpan CycleTime = TimeSpan.FromSeconds(6);

    [Theory]
    [InlineData("diagnostics-server")]
    [InlineData("redis-server")]
    public void NoMessageFollowsTheFinalUnsubscribeReply(string target)
    {
        using var ours = target == "diagnostics-server" ? ServerProcess.Start() : null;
        using var redis = target == "redis-server" ? RealRedisServer.Start() : null;
        Func<RespClient> connect = ours is not null ? ours.Connect : redis!.Connect;

        using var stop = new CancellationTokenSource();
        var publishers = new Thread[Publishers];
        long published = 0;
        Exception? publisherFailure = null;
        for (int p = 0; p < Publishers; p++)
        {
            var client = connect();
            publishers[p] = new Thread(() =>
            {
                // Pipelined bursts, so messages are queued for the subscriber at every moment.
                var burst = new string[20][];
                for (int i = 0; i < burst.Length; i++)
                    burst[i] = ["PUBLISH", "orders", "m" + i];
                byte[] request = RespClient.EncodeAll(burst);
                try
                {
                    using (client)
                    {
                        while (!stop.IsCancellationRequested)
                        {
                            client.SendRaw(request);
                            for (int i = 0; i < burst.Length; i++)
                                client.Read();
                            Interlocked.Add(ref published, burst.Length);
                        }
                    }
                }
                catch (Exception ex)
                {
                    publisherFailure = ex;
                }
            }) { IsBackground = true, Name = "publisher " + p };
            publishers[p].Start();
        }

        using var subscriber = connect();
        int cycles = 0, late = 0, delivered = 0;
        var lateExamples = new List<string>();
        var clock = Stopwatch.StartNew();
        try
        {
            while (clock.Elapsed < CycleTime)
            {
                subscriber.Send("SUBSCRIBE", "orders");
                // Not subscribed yet: any message before the subscribe reply is a late one.
                while (true)
                {
                    var frame = subscriber.Read();
                    if (IsMessage(frame))
                    {
                        Late(frame, "before the subscribe reply");
                        continue;
                    }
                    Assert.Equal("subscribe", frame.Array[0].Text);
                    Assert.Equal(1, frame.Array[2].Integer);
                    break;
                }
                // Let a message or two in, so some are always in flight at the unsubscribe.
                var first = subscriber.Read();
                Assert.True(IsMessage(first), $"expected a message while subscribed, got {first}");
                delivered++;

                // The unsubscribe and a PING in one write: the PING's reply is the next thing after count 0.
                subscriber.SendRaw(RespClient.EncodeAll(["UNSUBSCRIBE", "orders"], ["PING"]));
                while (true)
                {
                    var frame = subscriber.Read();
                    if (IsMessage(frame))
                    {
                        delivered++;
                        continue;
                    }
                    Assert.Equal("unsubscribe", frame.Array[0].Text);
                    Assert.Equal(0, frame.Array[2].Integer);
                    break;
                }
                while (true)
                {
                    var frame = subscriber.Read();
                    if (IsMessage(frame))
                    {
                        Late(frame, "after the count-0 unsubscribe reply");
                        continue;
                    }
                    Assert.Equal("+PONG", frame.ToString());
                    break;
                }
                cycles++;
            }
        }
        finally
        {
            stop.Cancel();
            foreach (var thread in publishers)
                thread.Join(TimeSpan.FromSeconds(10));
        }

        Assert.Null(publisherFailure);
        // A run that did not cycle or saw no traffic would prove nothing.
        Assert.True(cycles >= 20, $"only {cycles} subscribe/unsubscribe cycles in {CycleTime.TotalSeconds} s");
        Assert.True(Interlocked.Read(ref published) > cycles, $"{published} messages published in {cycles} cycles");
        Assert.True(late == 0, $"{target}: {late} messages arrived while unsubscribed, in {cycles} cycles ({delivered} in time), e.g.\n{string.Join('\n', lateExamples)}");

        void Late(RespValue frame, string when)
        {
            late++;
            if (lateExamples.Count < 5)
                lateExamples.Add($"cycle {cycles}: {frame} {when}");
        }
    }

    private static bool IsMessage(RespValue frame)
        => frame.Kind == '*' && frame.Items is { Count: 3 } items && items[0].Text == "message";
}
