using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Clients that stop reading, as an operator meets them: a subscriber that never reads what is
/// published to it, a client that sends slowly and never reads its small replies, and one that
/// reads a big reply slowly but steadily (not to be accused). The doctor names the stuck ones
/// before the server cuts them off, and names them again once it has.
/// </summary>
public sealed class DoctorClientTests
{
    private static readonly string Message = new('m', 100_000);

    /// <summary>A client named <paramref name="name"/> subscribed to "news" that never reads, subscribed before this returns.</summary>
    private static NonReadingClient StuckSubscriber(ServerProcess server, RespClient control, string name)
    {
        var stuck = new NonReadingClient(server.Port, name);
        stuck.Send(RespClient.Encode("SUBSCRIBE", "news"));
        Poll.Until(() => ClientListFields.Of(control, name)?["sub"] == "1", "the client is subscribed");
        return stuck;
    }

    /// <summary>10 MB published to "news": beyond what the kernel's buffers take (up to 4 MB here), the rest waits in the server.</summary>
    private static void PublishTenMegabytes(RespClient publisher)
    {
        for (int i = 0; i < 100; i++)
            publisher.Call("PUBLISH", "news", Message);
    }

    [Fact]
    public void SubscriberThatNeverReadsIsNamedBeforeAndAfterItIsCutOff()
    {
        using var server = ServerProcess.Start("--client-output-buffer-limit", "pubsub 16mb 0 0");
        using var publisher = server.Connect();
        using var stuck = StuckSubscriber(server, publisher, "doctor-subscriber");
        long id = long.Parse(ClientListFields.Of(publisher, "doctor-subscriber")!["id"]);

        // What waits in the server is output like any reply: CLIENT LIST omem shows it.
        PublishTenMegabytes(publisher);
        Poll.Until(() => long.Parse(ClientListFields.Of(publisher, "doctor-subscriber")!["omem"]) > 2_000_000,
            "over 2 MB of published messages counted in the subscriber's omem");

        var (finding, offline) = LiveAndOffline.Expect(server, "client-output-buffer", until: f => f.Evidence["client_id"] == id.ToString(),
            what: "the stuck subscriber, after three looks of the clients cron without progress");
        Assert.Equal("pubsub", finding.Evidence["class"]);
        Assert.True(long.Parse(finding.Evidence["pending_push_bytes"]) > 0, finding.Seen);
        Assert.True(long.Parse(finding.Evidence["stalled_seconds"]) >= 3, finding.Seen);
        Assert.Contains("name='doctor-subscriber'", finding.Seen);
        Assert.Contains("queued push messages", finding.Seen);
        Assert.Contains("Its class (pubsub) is cut off at 16 MB (hard): it is at ", finding.Seen);
        Assert.Equal(finding.Evidence["class"], offline.Evidence["class"]);

        // 15 MB more: over the hard limit, the server cuts it off, and says who it was.
        for (int i = 0; i < 150; i++)
            publisher.Call("PUBLISH", "news", Message);
        stuck.DrainUntilClosed(15_000);
        var (closed, closedOffline) = LiveAndOffline.Expect(server, "clients-disconnected");
        Assert.Equal(id.ToString(), closed.Evidence["last_id"]);
        Assert.Equal("doctor-subscriber", closed.Evidence["last_name"]);
        Assert.Equal("output buffer limit", closed.Evidence["last_reason"]);
        Assert.True(long.Parse(closed.Evidence["last_omem"]) >= 16 << 20, closed.Seen);
        Assert.Contains("(pubsub class), limit 16777216 0 0", closed.Seen);
        Assert.Equal(closed.Evidence["last_id"], closedOffline.Evidence["last_id"]);
        Assert.Equal(1, InfoFields.GetInt64(publisher, "stats", "client_output_buffer_limit_disconnections"));
    }

    [Fact]
    public void TheSoftLimitAppliesToQueuedMessagesToo()
    {
        using var server = ServerProcess.Start("--client-output-buffer-limit", "pubsub 0 2mb 2");
        using var publisher = server.Connect();
        using var stuck = StuckSubscriber(server, publisher, "doctor-soft");
        PublishTenMegabytes(publisher);
        // Over the soft limit for more than 2 s, nothing more published: the clients cron cuts it
        // (not reading meanwhile: that would empty the buffer before the cron looks).
        Poll.Until(() => ClientListFields.Of(publisher, "doctor-soft") is null, "the stuck subscriber is closed", 15_000);
        Assert.True(stuck.DrainUntilClosed(15_000) < 10_000_000, "the subscriber received everything: it was not cut off");
        var closed = new ApiClient(server.HttpPort).Get("/api/clients/closed", ContractsJson.Default.ClosedClientArray);
        var record = Assert.Single(closed);
        Assert.Equal("doctor-soft", record.Name);
        Assert.Equal("pubsub", record.Class);
        Assert.True(record.OutputMemoryBytes >= 2 << 20, $"closed with {record.OutputMemoryBytes} bytes unsent");
    }

    [Fact]
    public void SlowSenderThatNeverReadsIsNamedThoughItsRepliesAreSmall()
    {
        using var server = ServerProcess.Start();
        using (var c = server.Connect())
            RespAssert.Ok(c.Call("SET", "medium", new string('v', 200_000)));
        using var stuck = new NonReadingClient(server.Port, "doctor-slow-sender");
        // A GET every 100 ms, never reading: once the kernel's buffers are full the server stops
        // reading its commands too, and the client hangs with well under a megabyte unsent.
        for (int i = 0; i < 30; i++)
        {
            stuck.SendGets("medium", 1);
            Thread.Sleep(100);
        }
        var (finding, _) = LiveAndOffline.Expect(server, "client-output-buffer", until: f => f.Seen.Contains("doctor-slow-sender"),
            what: "the slow sender that never reads");
        Assert.True(long.Parse(finding.Evidence["omem"]) < 1 << 20, $"omem {finding.Evidence["omem"]}: the point is a client holding little");
        Assert.Contains("the server reads none of its commands", finding.Seen);
    }

    [Fact]
    public void ClientReadingABigReplySlowlyIsNotAccused()
    {
        using var server = ServerProcess.Start("--client-output-buffer-limit", "normal 0 0 0");
        const int size = 8 << 20;
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "big", new string('y', size)));
        using var slow = new NonReadingClient(server.Port, "doctor-slow-reader", receiveBufferBytes: 64 * 1024);
        slow.SendGets("big", 1);
        long replyBytes = 1 + size.ToString().Length + 2 + size + 2;
        // 64 KB every 40 ms: about 5 s with megabytes unsent, past several looks of the cron.
        Exception? failed = null;
        var reader = new Thread(() =>
        {
            try
            {
                slow.ReadSlowly(replyBytes, 64 * 1024, 40);
            }
            catch (Exception e)
            {
                failed = e;
            }
        }) { IsBackground = true };
        reader.Start();
        int looks = 0;
        long largest = 0;
        while (reader.IsAlive)
        {
            largest = Math.Max(largest, long.Parse(ClientListFields.Of(c, "doctor-slow-reader")?["omem"] ?? "0"));
            var report = DoctorProbe.Examine(server);
            Assert.DoesNotContain(report.Findings, f => f.Rule == "client-output-buffer");
            looks++;
            Thread.Sleep(500);
        }
        reader.Join();
        Assert.Null(failed);
        Assert.True(looks >= 4 && largest > 1 << 20, $"{looks} looks, at most {largest} bytes unsent: the read was too quick to test anything");
    }
}
