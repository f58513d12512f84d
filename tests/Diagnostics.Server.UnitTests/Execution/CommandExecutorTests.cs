using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.Tests.Infrastructure;
using Diagnostics.Server.UnitTests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;

namespace Diagnostics.Server.UnitTests.Execution;

/// <summary>
/// Commands run through the <see cref="CommandExecutor"/> with no socket, as a Lua script's
/// redis.call and a replication link will run them, by a client whose replies go to memory; and
/// two servers in one process, each with its own data, WATCH index and AOF. The client holds
/// every shard while its command runs, as a script holds the whole server.
/// </summary>
[Collection(InProcessServerCollection.Name)]
public sealed class CommandExecutorTests : IDisposable
{
    private readonly TempDirectory _dirA = new("executor-a-");
    private readonly TempDirectory _dirB = new("executor-b-");

    public void Dispose()
    {
        _dirA.Dispose();
        _dirB.Dispose();
    }

    [Fact]
    public void TwoServersInOneProcessKeepTheirOwnDataAndWatches()
    {
        using var a = new DataServer(Config(_dirA.Path, appendOnly: false));
        using var b = new DataServer(Config(_dirB.Path, appendOnly: false));
        using var onA = LocalClient.For(a);
        using var onB = LocalClient.For(b);

        Assert.Equal("+OK\r\n", onA.Run(a, "SET", "k", "on-a"));
        Assert.Equal("+OK\r\n", onB.Run(b, "SET", "k", "on-b"));
        Assert.Equal("$4\r\non-a\r\n", onA.Run(a, "GET", "k"));
        Assert.Equal("$4\r\non-b\r\n", onB.Run(b, "GET", "k"));
        Assert.Equal(":1\r\n", onB.Run(b, "DEL", "k"));
        Assert.Equal(":1\r\n", onA.Run(a, "DBSIZE"));
        Assert.Equal(":0\r\n", onB.Run(b, "DBSIZE"));

        // A write to the same key on the other server does not touch this one's watchers...
        Assert.Equal("+OK\r\n", onA.Run(a, "WATCH", "k"));
        Assert.Equal("+OK\r\n", onB.Run(b, "SET", "k", "elsewhere"));
        Assert.Equal("+OK\r\n", onA.Run(a, "MULTI"));
        Assert.Equal("+QUEUED\r\n", onA.Run(a, "INCR", "counter"));
        Assert.Equal("*1\r\n:1\r\n", onA.Run(a, "EXEC"));
        // ...and a write on its own server does.
        using var otherOnA = LocalClient.For(a);
        Assert.Equal("+OK\r\n", onA.Run(a, "WATCH", "k"));
        Assert.Equal("+OK\r\n", otherOnA.Run(a, "SET", "k", "changed"));
        Assert.Equal("+OK\r\n", onA.Run(a, "MULTI"));
        Assert.Equal("+QUEUED\r\n", onA.Run(a, "INCR", "counter"));
        Assert.Equal("*-1\r\n", onA.Run(a, "EXEC"));
        Assert.Equal("$1\r\n1\r\n", onA.Run(a, "GET", "counter"));
    }

    [Fact]
    public void TheExecutorsChecksAnswerASocketlessClientAsRedisDoes()
    {
        using var server = new DataServer(Config(_dirA.Path, appendOnly: false));
        using var client = LocalClient.For(server);

        Assert.Equal("-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n", client.Run(server, "NOSUCH", "x"));
        Assert.Equal("-ERR wrong number of arguments for 'get' command\r\n", client.Run(server, "GET"));
        Assert.Equal("+OK\r\n", client.Run(server, "SET", "list", "v"));
        Assert.Equal("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", client.Run(server, "LPUSH", "list", "x"));
        Assert.Equal("+OK\r\n", client.Run(server, "MULTI"));
        Assert.Equal("-ERR wrong number of arguments for 'set' command\r\n", client.Run(server, "SET", "only-key"));
        Assert.Equal("-EXECABORT Transaction discarded because of previous errors.\r\n", client.Run(server, "EXEC"));
        Assert.Equal(":1\r\n", client.Run(server, "EXISTS", "list"));
    }

    [Fact]
    public void ASocketlessClientsWritesReachItsOwnServersAppendOnlyFile()
    {
        using var a = new DataServer(Config(_dirA.Path, appendOnly: true));
        using var b = new DataServer(Config(_dirB.Path, appendOnly: true));
        a.Aof.Start();
        b.Aof.Start();
        using var onA = LocalClient.For(a);

        Assert.Equal("+OK\r\n", onA.Run(a, "SET", "durable", "value"));
        Assert.Equal("$5\r\nvalue\r\n", onA.Run(a, "GET", "durable"));
        Assert.Equal(":1\r\n", onA.Run(a, "LPUSH", "queue", "job"));
        WaitUntilAcknowledged(a.Aof, onA.AofWaitOffset);

        string logA = ReadIncrementalFile(_dirA.AppendDirectory);
        Assert.Contains("*3\r\n$3\r\nSET\r\n$7\r\ndurable\r\n$5\r\nvalue\r\n", logA);
        Assert.Contains("*3\r\n$5\r\nLPUSH\r\n$5\r\nqueue\r\n$3\r\njob\r\n", logA);
        Assert.DoesNotContain("GET", logA); // reads are not propagated
        Assert.DoesNotContain("durable", ReadIncrementalFile(_dirB.AppendDirectory));
    }

    private static ServerConfig Config(string dir, bool appendOnly)
    {
        var config = new ServerConfig();
        Assert.Null(config.Set("dir", dir, atStartup: true));
        Assert.Null(config.Set("appendonly", appendOnly ? "yes" : "no", atStartup: true));
        return config;
    }


    /// <summary>What a connection's flush does before it may send a write's reply: waits for the AOF to hold it as appendfsync promises.</summary>
    private static void WaitUntilAcknowledged(AppendOnlyFile aof, long offset)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (aof.AcknowledgedOffset < offset)
        {
            Assert.Null(aof.WriteError);
            Assert.True(DateTime.UtcNow < deadline, $"the AOF did not acknowledge offset {offset} within 30 s");
            if (!aof.TryWriteNow())
                aof.DurabilityAdvanced.Wait(TimeSpan.FromMilliseconds(100));
        }
    }

    private static string ReadIncrementalFile(string appendDirectory)
    {
        string path = Assert.Single(Directory.GetFiles(appendDirectory, "*" + AofManifest.IncrSuffix + ".aof"));
        using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using var text = new StreamReader(file, Encoding.UTF8);
        return text.ReadToEnd();
    }
}
