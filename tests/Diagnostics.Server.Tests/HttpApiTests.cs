using System.Net;
using System.Net.Sockets;
using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>The JSON API against the figures a test client can check for itself.</summary>
public sealed class HttpApiTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private ApiClient Api() => new(shared.Server.HttpPort);

    [Fact]
    public void ClientNetworkTotalsEqualTheBytesReallySentAndReceived()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Connect(IPAddress.Loopback, shared.Server.Port);
        long sent = 0, received = 0;
        var buffer = new byte[4096];
        byte[][] requests =
        [
            RespClient.Encode("CLIENT", "SETNAME", "net-accuracy"),
            RespClient.Encode("SET", "net-accuracy:key", "hello"),
            RespClient.Encode("GET", "net-accuracy:key"),
            Encoding.ASCII.GetBytes("PING\r\n"),
        ];
        string[] replies = ["+OK\r\n", "+OK\r\n", "$5\r\nhello\r\n", "+PONG\r\n"];
        for (int i = 0; i < requests.Length; i++)
        {
            socket.Send(requests[i]);
            sent += requests[i].Length;
            int expected = replies[i].Length, got = 0;
            while (got < expected)
                got += socket.Receive(buffer, got, expected - got, SocketFlags.None);
            Assert.Equal(replies[i], Encoding.ASCII.GetString(buffer, 0, got));
            received += got;
        }

        using var api = Api();
        var client = Array.Find(api.Get("/api/clients", ContractsJson.Default.ClientSnapshotArray), c => c.Name == "net-accuracy");
        Assert.NotNull(client);
        Assert.Equal(sent, client.NetInputBytes);
        Assert.Equal(received, client.NetOutputBytes);
        Assert.Equal(4, client.CommandsProcessed);
        Assert.Equal("ping", client.LastCommand);
    }

    [Fact]
    public void ThreadTableShowsTheThreadsThatServedCommandsWithRolesAndCpu()
    {
        using (var c = shared.Connect())
            for (int i = 0; i < 200; i++)
                RespAssert.Ok(c.Call("SET", "threads:" + i, "v"));
        using var api = Api();
        var threads = api.Get("/api/threads", ContractsJson.Default.ThreadSnapshotArray);
        Assert.Contains(threads, t => t.Alive && t.CommandsProcessed > 0 && t.NetInputBytes > 0 && t.Role == "network I/O and commands");
        Assert.Contains(threads, t => t.Name == "sampler" && t.Role == "diagnostics sampler");
        Assert.Contains(threads, t => t.OsThreadId == shared.Server.Pid && t.Role.StartsWith("main", StringComparison.Ordinal));
        Assert.All(threads, t => Assert.True(t.CpuUserSeconds >= 0 && t.CpuSystemSeconds >= 0));
        // Linux keeps per-thread I/O counters: every live thread has them.
        Assert.All(threads, t => Assert.True(!t.Alive || t.KernelIo is not null, $"thread {t.OsThreadId} has no /proc io counters"));
    }

    [Fact]
    public void PerThreadTrackedMemoryAddsUpToTheGlobalTotal()
    {
        using var c = shared.Connect();
        for (int i = 0; i < 500; i++)
            RespAssert.Ok(c.Call("SET", "memsum:" + i, new string('x', 100)));
        using var api = Api();
        // Nothing else allocates while the test client is idle, so two reads agree; retry if a
        // concurrent test moved the total between them.
        Poll.Until(() =>
        {
            var memory = api.Get("/api/memory", ContractsJson.Default.MemoryReport);
            long sum = 0;
            foreach (var thread in memory.Threads)
                sum += thread.LiveBytes;
            return sum == memory.TrackedBytes;
        }, "the per-thread live bytes to add up to the tracked total");
    }

    [Fact]
    public void InFlightWorkShowsACommandWhileItRuns()
    {
        using var sleeper = shared.Connect();
        long id = sleeper.Call("CLIENT", "ID").Integer;
        sleeper.Send("DEBUG", "SLEEP", "1.5");
        using var api = Api();
        InFlightWork? running = null;
        Poll.Until(() => (running = Array.Find(api.Get("/api/inflight", ContractsJson.Default.InFlightWorkArray), w => w.ClientId == id)) is not null,
            "DEBUG SLEEP to show as in-flight work");
        Assert.Equal("debug", running!.Activity);
        Assert.True(running.ElapsedMicros > 0);
        var client = Array.Find(api.Get("/api/clients", ContractsJson.Default.ClientSnapshotArray), c => c.Id == id);
        Assert.Equal("debug", client?.Running?.Activity);
        RespAssert.Ok(sleeper.Read());
    }

    [Fact]
    public void KillingAClientThroughTheApiClosesItsConnection()
    {
        using var victim = shared.Connect();
        long id = victim.Call("CLIENT", "ID").Integer;
        using var api = Api();
        using (var response = api.Send(new HttpRequestMessage(HttpMethod.Post, $"/api/clients/{id}/kill")))
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.True(victim.IsClosedByServer());
        using (var response = api.Send(new HttpRequestMessage(HttpMethod.Post, $"/api/clients/{id}/kill")))
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
    }

    [Fact]
    public void HistoryHoldsOneSampleASecondWithTheLoadInIt()
    {
        using (var c = shared.Connect())
        {
            for (int i = 0; i < 300; i++)
                c.Call("INCR", "history:counter");
        }
        using var api = Api();
        MetricHistory history = null!;
        Poll.Until(() =>
        {
            history = api.Get("/api/history?seconds=120", ContractsJson.Default.MetricHistory);
            return history.Times.Length >= 3 && Array.Exists(history.Series[MetricNames.OpsPerSecond], v => v > 0);
        }, "three samples, one of them with commands in it");
        Assert.Equal(1000, history.IntervalMillis);
        for (int i = 1; i < history.Times.Length; i++)
            Assert.InRange(history.Times[i] - history.Times[i - 1], 500, 3000);
        foreach (var (name, values) in history.Series)
            Assert.True(values.Length == history.Times.Length, $"{name} has {values.Length} values for {history.Times.Length} samples");
        Assert.True(history.Series[MetricNames.TrackedBytes][^1] > 0);
        Assert.True(history.Series.ContainsKey(MetricNames.OpsPerSecondGroupPrefix + "string"));
        Assert.Contains(history.Threads, t => t.Name == "sampler" && t.CpuPercent.Length == history.Times.Length);
    }

    [Fact]
    public void InfoAsJsonHasTheSameSectionsAsInfo()
    {
        using var api = Api();
        var info = api.Get("/api/info", ContractsJson.Default.InfoReport);
        foreach (string section in new[] { "server", "clients", "memory", "persistence", "stats", "cpu", "commandstats", "keyspace", "threads", "diskio" })
            Assert.True(info.Sections.ContainsKey(section), $"section {section} missing");
        Assert.Equal(shared.Server.Port.ToString(), info.Sections["server"]["tcp_port"]);
        var memoryOnly = api.Get("/api/info?section=memory", ContractsJson.Default.InfoReport);
        Assert.Equal(["memory"], memoryOnly.Sections.Keys);
    }
}
