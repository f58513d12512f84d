using System.Diagnostics;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// client-output-buffer-limit over real TCP: a client that asks for big replies and does not read
/// them is closed at the hard limit at once, and after the soft limit's seconds, with Redis's log
/// line and INFO counter, while other clients keep getting answers. CLIENT LIST shows the unsent
/// bytes (omem) of a stuck client, "normal 0 0 0" never closes a slow reader, and CONFIG SET/GET
/// of the setting match redis-server's wording side by side. Each test runs its own server, as the
/// setting is server-wide.
/// </summary>
public sealed class OutputBufferLimitTests
{
    private const string LimitLogLine = "scheduled to be closed ASAP for overcoming of output buffer limits.";
    private static readonly string Megabyte = new('x', 1 << 20);

    private static ServerProcess StartServer(params string[] arguments) => ServerProcess.Start(arguments);

    private static void SetMegabyteValue(RespClient c, string key) => RespAssert.Ok(c.Call("SET", key, Megabyte));

    private static long Disconnections(RespClient c) => InfoFields.GetInt64(c, "stats", "client_output_buffer_limit_disconnections");

    [Theory]
    [InlineData("sockets")]
    [InlineData("kestrel")]
    public void HardLimitClosesAClientThatDoesNotReadWhileOthersGetAnswers(string transport)
    {
        using var server = StartServer("--transport", transport, "--client-output-buffer-limit", "normal", "4mb", "0", "0");
        using var other = server.Connect();
        SetMegabyteValue(other, "hard:big");
        using var stuck = new NonReadingClient(server.Port, "stuck-hard");

        // 32 MB of replies in one batch: past 4 MB they stop being buffered and the client is dropped.
        stuck.SendGets("hard:big", 32);
        long received = stuck.DrainUntilClosed(15_000);

        Assert.True(received < 32L * NonReadingClient.MegabyteReplyBytes, $"the client received all {received} bytes: it was not cut off");
        Assert.Equal(1, Disconnections(other));
        Poll.Until(() => server.Output.Contains(LimitLogLine), "the server logs the disconnection");
        string logLine = server.Output.Split('\n').First(l => l.Contains(LimitLogLine));
        Assert.Contains("Client id=", logLine);
        Assert.Contains("name=stuck-hard", logLine);
        Assert.Contains("cmd=get", logLine);
        Poll.Until(() => ClientListFields.Of(other, "stuck-hard") is null, "the client leaves CLIENT LIST");

        // Everyone else carries on.
        RespAssert.Simple("PONG", other.Call("PING"));
        Assert.Equal(1 << 20, other.Call("GET", "hard:big").Text!.Length);
        using var fresh = server.Connect();
        Assert.Equal(1 << 20, fresh.Call("GET", "hard:big").Text!.Length);
    }

    [Fact]
    public void SoftLimitClosesAStuckClientOnlyAfterItsSeconds()
    {
        using var server = StartServer("--client-output-buffer-limit", "normal", "0", "1mb", "2");
        using var other = server.Connect();
        SetMegabyteValue(other, "soft:big");
        using var stuck = new NonReadingClient(server.Port, "stuck-soft");

        var clock = Stopwatch.StartNew();
        stuck.SendGets("soft:big", 16);
        // Stuck with megabytes unsent, over the soft limit but with no hard limit: still connected.
        Poll.Until(() => long.Parse(ClientListFields.Of(other, "stuck-soft")?["omem"] ?? "0") > 1 << 20, "the stuck client holds over 1 MB of replies");
        RespAssert.Simple("PONG", other.Call("PING"));

        // Not reading (reading would empty the buffer and stop the clock) until the server drops it.
        Poll.Until(() => ClientListFields.Of(other, "stuck-soft") is null, "the stuck client is closed", 15_000);
        // The soft timer started once the replies were produced, after the send: at least 2 s before the close.
        Assert.True(clock.Elapsed >= TimeSpan.FromSeconds(2), $"closed after {clock.Elapsed.TotalMilliseconds} ms, before the soft limit's 2 seconds");
        long received = stuck.DrainUntilClosed(15_000);
        Assert.True(received < 16L * NonReadingClient.MegabyteReplyBytes);
        Assert.Equal(1, Disconnections(other));
        Poll.Until(() => server.Output.Contains(LimitLogLine) && server.Output.Contains("name=stuck-soft"), "the server logs the disconnection");
        Assert.Equal(1 << 20, other.Call("GET", "soft:big").Text!.Length);
    }

    [Fact]
    public void ClientListShowsUnsentRepliesOfAStuckClientUntilItReads()
    {
        using var server = StartServer();
        using var other = server.Connect();
        SetMegabyteValue(other, "omem:big");
        using var stuck = new NonReadingClient(server.Port, "stuck-omem");

        stuck.SendGets("omem:big", 8);
        long total = 8L * NonReadingClient.MegabyteReplyBytes;
        Dictionary<string, string>? fields = null;
        Poll.Until(() =>
        {
            fields = ClientListFields.Of(other, "stuck-omem");
            return fields is not null && long.Parse(fields["omem"]) > 0 && long.Parse(fields["tot-net-out"]) + long.Parse(fields["omem"]) >= total;
        }, "the stuck client's replies are produced and partly unsent");
        // The kernel takes what fits its buffers; the rest is what this server holds for the client.
        Thread.Sleep(300);
        fields = ClientListFields.Of(other, "stuck-omem")!;
        long omem = long.Parse(fields["omem"]);
        Assert.InRange(omem, 1, total);
        // tot-net-out is what the kernel took, as tot-net-in is what was read: with the "+OK\r\n"
        // of CLIENT SETNAME, sent plus unsent is every byte produced.
        Assert.Equal(total + 5, long.Parse(fields["tot-net-out"]) + omem);
        Assert.True(long.Parse(fields["oll"]) > 0, $"oll={fields["oll"]} with {omem} bytes unsent");
        Assert.True(long.Parse(fields["tot-mem"]) >= omem, $"tot-mem={fields["tot-mem"]} does not include omem={omem}");
        Assert.Equal("rw", fields["events"]);
        Assert.True(InfoFields.GetInt64(other, "clients", "client_recent_max_output_buffer") >= omem);

        // Once the client reads everything, nothing is left unsent.
        var replies = new byte[total];
        stuck.ReadExactly(replies, 30_000);
        Poll.Until(() => ClientListFields.Of(other, "stuck-omem") is { } f && f["omem"] == "0" && f["oll"] == "0" && f["events"] == "r",
            "the client's output buffer is empty after it read everything");
        Assert.Equal(0, Disconnections(other));
    }

    [Fact]
    public void LoweringTheLimitClosesAClientAlreadyStuck()
    {
        using var server = StartServer();
        using var other = server.Connect();
        SetMegabyteValue(other, "lower:big");
        using var stuck = new NonReadingClient(server.Port, "stuck-lower");
        stuck.SendGets("lower:big", 16);
        Poll.Until(() => long.Parse(ClientListFields.Of(other, "stuck-lower")?["omem"] ?? "0") > 2 << 20, "the client is stuck with over 2 MB unsent");

        // Nothing more is produced for it: the clients cron finds it over the new hard limit.
        RespAssert.Ok(other.Call("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"));
        // Not reading meanwhile: that would empty the buffer before the cron looks.
        Poll.Until(() => ClientListFields.Of(other, "stuck-lower") is null, "the stuck client is closed", 15_000);
        Assert.True(stuck.DrainUntilClosed(15_000) < 16L * NonReadingClient.MegabyteReplyBytes);
        Assert.Equal(1, Disconnections(other));
        Poll.Until(() => server.Output.Contains("name=stuck-lower"), "the server logs the disconnection");
    }

    [Fact]
    public void UnlimitedNormalClassNeverClosesASlowReaderOfABigReply()
    {
        using var server = StartServer("--client-output-buffer-limit", "normal", "0", "0", "0");
        using var other = server.Connect();
        const int size = 8 << 20;
        RespAssert.Ok(other.Call("SET", "slow:big", new string('y', size)));
        using var slow = new NonReadingClient(server.Port, "slow-reader", receiveBufferBytes: 64 * 1024);

        slow.SendGets("slow:big", 1);
        // At most 64 KB every 25 ms: over 3 seconds with most of the reply unsent, past several cron checks.
        long replyBytes = 1 + (size.ToString().Length) + 2 + size + 2;
        slow.ReadSlowly(replyBytes, 64 * 1024, 25);

        Assert.NotNull(ClientListFields.Of(other, "slow-reader"));
        Assert.Equal(0, Disconnections(other));
        Assert.DoesNotContain(LimitLogLine, server.Output);
    }

    [Fact]
    public void PipelineOfBigRepliesStaysWithinTheLimitsMemory()
    {
        using var server = StartServer("--client-output-buffer-limit", "normal", "8mb", "4mb", "2");
        using var other = server.Connect();
        SetMegabyteValue(other, "bound:big");
        long heapBefore = InfoFields.GetInt64(other, "memory", "managed_heap_bytes");

        // Ten clients at once, each asking for 200 MB of replies it never reads.
        var clients = Enumerable.Range(0, 10).Select(i => new NonReadingClient(server.Port, $"bound-{i}")).ToList();
        try
        {
            foreach (var client in clients)
                client.SendGets("bound:big", 200);
            foreach (var client in clients)
                client.DrainUntilClosed(15_000);
        }
        finally
        {
            foreach (var client in clients)
                client.Dispose();
        }

        Assert.Equal(10, Disconnections(other));
        // Each client was cut off at 8 MB, so the heap never held the 2 GB asked for; 10 x 8 MB is the bound.
        long heapAfter = InfoFields.GetInt64(other, "memory", "managed_heap_bytes");
        Assert.True(heapAfter - heapBefore < 10L * 8 * 1024 * 1024 + (32 << 20),
            $"managed heap grew by {(heapAfter - heapBefore) >> 20} MB for clients limited to 8 MB each");
        long peak = InfoFields.GetInt64(other, "clients", "client_recent_max_output_buffer");
        Assert.InRange(peak, 4L << 20, (8L << 20) + 64 * 1024);
    }

    [Fact]
    public void ConfigSetAndGetMatchRedis()
    {
        using var server = StartServer();
        using var redis = RealRedisServer.Start();
        using var ours = server.Connect();
        using var theirs = new RespClient(redis.Port);

        string[] values =
        [
            "normal 64mb 32MB 10", "replica 1kb 2k 3", "slave 1b 2B 0", "pubsub 10G 0 0", "Normal 1 1 1",
            "pubsub 1 2 3 normal 4 5 6", "normal 1 1 1 normal 2 2 2", "normal 5kb 1 1", "normal 1 1 +5", "normal 1 1 -0",
            "normal 18446744073709551615 0 0", "normal 18446744073709551616 0 0", "",
            "normal 1mb", "normal 1 2 3 pubsub", "foo 1 1 1", "master 1 1 1", "normal 1 1 1 foo 1 1 1",
            "normal x 1 1", "normal 1 1 -1", "normal -1 1 1", "normal 1 1 1x", "normal 1.5mb 1 1", "normal 0x10 0 0",
            "normal +5 0 0", "normal 1mbb 0 0", "normal 1 1 1.5", "normal 1 1 0x5", "normal 1 1 2147483648",
            "normal 1 1 99999999999999999999", "normal 1 1 1 normal x 1 1",
        ];
        RespAssert.BulkArray(ours.Call("CONFIG", "GET", "client-output-buffer-limit"),
            "client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
        foreach (string value in values)
        {
            var expected = theirs.Call("CONFIG", "SET", "client-output-buffer-limit", value);
            var actual = ours.Call("CONFIG", "SET", "client-output-buffer-limit", value);
            Assert.True(expected == actual, $"CONFIG SET client-output-buffer-limit \"{value}\": redis {expected}, ours {actual}");
            expected = theirs.Call("CONFIG", "GET", "client-output-buffer-limit");
            actual = ours.Call("CONFIG", "GET", "client-output-buffer-limit");
            Assert.True(expected.ToString() == actual.ToString(), $"after \"{value}\": redis {expected}, ours {actual}");
        }
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Wrong number of arguments in buffer limit configuration.",
            ours.Call("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb"));
    }

    [Fact]
    public void LimitsFromTheCommandLineAndConfigFile()
    {
        using var dir = new TempDirectory("obuf-config-");
        string file = Path.Combine(dir.Path, "redis.conf");
        File.WriteAllText(file, "client-output-buffer-limit normal 4mb 2mb 10\nclient-output-buffer-limit pubsub 64mb 16mb 90\n");
        using var server = ServerProcess.StartWith(file, "--client-output-buffer-limit", "replica", "512mb", "128mb", "120");
        using var c = server.Connect();
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "client-output-buffer-limit"),
            "client-output-buffer-limit", "normal 4194304 2097152 10 slave 536870912 134217728 120 pubsub 67108864 16777216 90");

        var (exitCode, output) = ServerProcess.RunUntilExit("--client-output-buffer-limit", "normal", "1mb");
        Assert.Equal(1, exitCode);
        Assert.Contains("Wrong number of arguments in buffer limit configuration.", output);
    }
}
