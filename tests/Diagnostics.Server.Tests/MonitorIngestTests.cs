using System.Net;
using System.Text;
using System.Text.Json;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// What the monitor may push, even with the right token: a body of at most 8 MiB (larger ones are
/// refused with 413 before they are read), and only so many rows kept, the rest counted as dropped.
/// No elevated monitor is needed: the test pushes as one would, with the announced token.
/// </summary>
public sealed class MonitorIngestTests
{
    private const int MaxBodyBytes = 8 * 1024 * 1024;

    [Fact]
    public void OversizedBatchesAreRefusedWith413BeforeTheyAreRead()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        string token = AnnouncedToken(server);
        // Told the length up front, the server answers after the headers, without waiting for a byte of the body.
        using (var socket = Connect(server))
        {
            Send(socket, $"POST {MonitorAnnouncement.IngestPath} HTTP/1.1\r\nHost: 127.0.0.1\r\n{MonitorAnnouncement.TokenHeader}: {token}\r\nContent-Type: application/json\r\nContent-Length: {MaxBodyBytes + 1}\r\n\r\n");
            Assert.StartsWith("HTTP/1.1 413", StatusLine(socket));
        }
        // Streamed in chunks with no length, it stops reading once the limit is passed.
        using (var socket = Connect(server))
        {
            Send(socket, $"POST {MonitorAnnouncement.IngestPath} HTTP/1.1\r\nHost: 127.0.0.1\r\n{MonitorAnnouncement.TokenHeader}: {token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
            string chunk = $"{64 * 1024:x}\r\n{new string(' ', 64 * 1024)}\r\n";
            try
            {
                for (int sent = 0; sent <= MaxBodyBytes + 64 * 1024; sent += 64 * 1024)
                    Send(socket, chunk);
            }
            catch (System.Net.Sockets.SocketException)
            {
                // The server answered and closed while the rest was still being sent.
            }
            Assert.StartsWith("HTTP/1.1 413", StatusLine(socket));
        }
        Assert.Equal(0, api.Get("/api/monitor", ContractsJson.Default.MonitorReport).Batches);
    }

    private static System.Net.Sockets.Socket Connect(ServerProcess server)
    {
        var socket = new System.Net.Sockets.Socket(System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp) { ReceiveTimeout = 30_000 };
        socket.Connect(IPAddress.Loopback, server.HttpPort);
        return socket;
    }

    private static void Send(System.Net.Sockets.Socket socket, string text) => socket.Send(Encoding.ASCII.GetBytes(text));

    private static string StatusLine(System.Net.Sockets.Socket socket)
    {
        var buffer = new byte[4096];
        int received = socket.Receive(buffer);
        string text = Encoding.ASCII.GetString(buffer, 0, received);
        return text.Split("\r\n")[0];
    }

    [Fact]
    public void TablesKeepBoundedRowsAndCountWhatTheyDrop()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        string token = AnnouncedToken(server);
        string longName = new('x', 100_000);
        var batch = new MonitorBatch
        {
            Status = new MonitorStatus { ServerPid = server.Pid, MonitorPid = 1, Host = "h", Platform = "linux", Version = "test", StartedUnixMs = 1 },
            StartUnixMs = 1000,
            EndUnixMs = 2000,
            Io = [.. Enumerable.Range(1, 6000).Select(tid => new KernelIoAggregate(tid, tid == 1 ? longName : "/data/f", "file", "write", "pwrite64", 1, 10, 0, 1, new long[MicrosecondBuckets.Count]))],
            Threads = [.. Enumerable.Range(1, 5000).Select(tid => new ThreadKernelCounters(tid, "t" + tid, new KernelIoCounters(0, 0, 0, 0, 0, 0, 0)))],
            Runtime = new RuntimeInterval { Exceptions = [.. Enumerable.Range(1, 1000).Select(i => new ExceptionCount("Forged" + i + "Exception", 1, i == 1 ? longName : "m"))] },
        };
        string json = JsonSerializer.Serialize(batch, ContractsJson.Default.MonitorBatch);
        Assert.True(json.Length < MaxBodyBytes, $"the batch is {json.Length} bytes");
        using (var request = new HttpRequestMessage(HttpMethod.Post, MonitorAnnouncement.IngestPath) { Content = new StringContent(json, Encoding.UTF8, "application/json") })
        {
            request.Headers.Add(MonitorAnnouncement.TokenHeader, token);
            using var response = api.Send(request);
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        var report = api.Get("/api/monitor", ContractsJson.Default.MonitorReport);
        Assert.Equal(1, report.Batches);
        Assert.Equal(4096, report.ByThread.Count);
        Assert.Equal(4096, report.ThreadCounters.Count);
        Assert.Equal(256, report.Exceptions.Count);
        // 6000 - 4096 thread rows, 5000 - 4096 threads' counters, 1000 - 256 exception types.
        Assert.Equal(1904 + 904 + 744, report.DroppedRows);
        Assert.Equal(2, report.ByTarget.Count);
        Assert.Equal(5999, report.ByTarget.Single(t => t.Target == "/data/f").Count);
        Assert.All(report.ByTarget, t => Assert.True(t.Target.Length <= 512, $"a target name of {t.Target.Length} characters was kept"));
        Assert.All(report.Exceptions, e => Assert.True(e.LastMessage.Length <= 1024, $"a message of {e.LastMessage.Length} characters was kept"));
    }

    /// <summary>The token from the server's announcement file, as the monitor reads it.</summary>
    private static string AnnouncedToken(ServerProcess server)
    {
        foreach (string directory in AnnouncementDirectories.Candidates(0, Environment.GetEnvironmentVariable))
        {
            string path = Path.Combine(directory, AnnouncementDirectories.FileName(server.Pid));
            if (File.Exists(path))
                return JsonSerializer.Deserialize(File.ReadAllText(path), ContractsJson.Default.MonitorAnnouncement)!.Token;
        }
        throw new InvalidOperationException($"no announcement for pid {server.Pid}:\n{server.Output}");
    }
}
