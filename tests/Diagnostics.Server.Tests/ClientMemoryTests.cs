using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Memory held by clients, side by side with redis-server 7.0: a client that sent one large
/// command does not keep a buffer of that size while it sits idle (Redis's
/// clientsCronResizeQueryBuffer), and maxmemory-clients disconnects the clients using the most
/// memory once all clients together go over it (Redis 7.0's client eviction), sparing those that
/// asked for CLIENT NO-EVICT.
/// </summary>
public sealed class ClientMemoryTests
{
    private const int LargeValueBytes = 900 * 1024;

    private static (RespClient Control, IDisposable Server) Start(string target, params string[] arguments)
    {
        if (target == "redis-server")
        {
            var redis = RealRedisServer.Start(arguments);
            return (redis.Connect(), redis);
        }
        var ours = ServerProcess.Start(arguments);
        return (ours.Connect(), ours);
    }

    private static RespClient Connect(IDisposable server)
        => server is ServerProcess ours ? ours.Connect() : ((RealRedisServer)server).Connect();

    private static long QueryBufferMemory(Dictionary<string, string> fields)
        => long.Parse(fields["qbuf"]) + long.Parse(fields["qbuf-free"]);

    [Theory]
    [InlineData("diagnostics-server")]
    [InlineData("redis-server")]
    public void IdleClientsGiveBackTheBufferOfALargeCommand(string target)
    {
        const int Clients = 20;
        var (control, server) = Start(target);
        var clients = new List<RespClient>();
        try
        {
            using (control)
            {
                string value = new('v', LargeValueBytes);
                for (int i = 0; i < Clients; i++)
                {
                    var client = Connect(server);
                    clients.Add(client);
                    RespAssert.Ok(client.Call("CLIENT", "SETNAME", $"big-{i}"));
                    RespAssert.Ok(client.Call("SET", $"big:{i}", value));
                }
                long usedAfterWrites = InfoFields.GetInt64(control, "memory", "used_memory");
                long heldAfterWrites = 0;
                for (int i = 0; i < Clients; i++)
                    heldAfterWrites += QueryBufferMemory(ClientListFields.Of(control, $"big-{i}")!);

                // Idle for more than 2 s: every one of them is down to a small buffer.
                Poll.Until(() =>
                {
                    for (int i = 0; i < Clients; i++)
                        if (QueryBufferMemory(ClientListFields.Of(control, $"big-{i}")!) > 64 * 1024)
                            return false;
                    return true;
                }, () => $"every idle client holds at most 64 KB of query buffer; CLIENT LIST:\n{control.Call("CLIENT", "LIST").Text}", timeoutMs: 15_000);

                // What they held is given back: used_memory (what maxmemory counts) falls by it.
                long usedIdle = InfoFields.GetInt64(control, "memory", "used_memory");
                long released = usedAfterWrites - usedIdle;
                Assert.True(released >= heldAfterWrites * 9 / 10,
                    $"{target}: used_memory {usedAfterWrites} -> {usedIdle} ({released} released) while the clients' query buffers held {heldAfterWrites}");
                // The clients and their data are all still there.
                for (int i = 0; i < Clients; i++)
                    RespAssert.Integer(LargeValueBytes, clients[i].Call("STRLEN", $"big:{i}"));
            }
        }
        finally
        {
            foreach (var client in clients)
                client.Dispose();
            server.Dispose();
        }
    }

    [Theory]
    [InlineData("diagnostics-server")]
    [InlineData("redis-server")]
    public void MaxMemoryClientsDisconnectsTheBiggestClientButNotANoEvictOne(string target)
    {
        var (control, server) = Start(target, "--maxmemory-clients", "3mb");
        try
        {
            using (control)
            {
                RespAssert.Ok(control.Call("CLIENT", "NO-EVICT", "on"));
                string value = new('v', 4 * 1024 * 1024);

                var small = new List<RespClient>();
                for (int i = 0; i < 3; i++)
                {
                    small.Add(Connect(server));
                    RespAssert.Simple("PONG", small[i].Call("PING"));
                }
                using (var big = Connect(server))
                {
                    RespAssert.Ok(big.Call("CLIENT", "SETNAME", "big"));
                    bool closed;
                    try
                    {
                        big.Send("SET", "big", value);
                        closed = ClosedWithin(big, 10_000);
                    }
                    catch (IOException)
                    {
                        closed = true; // dropped while it was still sending, as redis-server does
                    }
                    Assert.True(closed, $"{target}: the client holding a 4 MB command was not disconnected");
                }
                Poll.Until(() => InfoFields.GetInt64(control, "stats", "evicted_clients") == 1,
                    () => $"evicted_clients is 1 (it is {InfoFields.Get(control, "stats", "evicted_clients")})");
                // Only the biggest went: the small ones are still served.
                foreach (var client in small)
                {
                    RespAssert.Simple("PONG", client.Call("PING"));
                    client.Dispose();
                }
                Assert.Null(ClientListFields.Of(control, "big"));

                using (var spared = Connect(server))
                {
                    RespAssert.Ok(spared.Call("CLIENT", "SETNAME", "spared"));
                    RespAssert.Ok(spared.Call("CLIENT", "NO-EVICT", "on"));
                    RespAssert.Ok(spared.Call("SET", "spared", value));
                    Thread.Sleep(2500); // two clients-cron passes at least
                    RespAssert.Simple("PONG", spared.Call("PING"));
                    Assert.Contains("e", ClientListFields.Of(control, "spared")!["flags"]);
                }
                Assert.Equal(1, InfoFields.GetInt64(control, "stats", "evicted_clients"));
            }
        }
        finally
        {
            server.Dispose();
        }
    }

    /// <summary>The setting and CLIENT NO-EVICT reply as redis-server's do, value by value.</summary>
    [Fact]
    public void SettingAndNoEvictRepliesMatchRedis()
    {
        using var ours = ServerProcess.Start("--maxmemory-clients", "5%");
        using var redis = RealRedisServer.Start("--maxmemory-clients", "5%");
        using var a = ours.Connect();
        using var b = redis.Connect();
        string[][] commands =
        [
            ["CONFIG", "GET", "maxmemory-clients"],
            ["CONFIG", "SET", "maxmemory-clients", "1mb"],
            ["CONFIG", "GET", "maxmemory-clients"],
            ["CONFIG", "SET", "maxmemory-clients", "100%"],
            ["CONFIG", "GET", "maxmemory-clients"],
            ["CONFIG", "SET", "maxmemory-clients", "101%"],
            ["CONFIG", "SET", "maxmemory-clients", "-1"],
            ["CONFIG", "SET", "maxmemory-clients", "lots"],
            ["CONFIG", "SET", "maxmemory-clients", "0"],
            ["CONFIG", "GET", "maxmemory-clients"],
            ["CLIENT", "NO-EVICT", "on"],
            ["CLIENT", "NO-EVICT", "OFF"],
            ["CLIENT", "NO-EVICT", "maybe"],
            ["CLIENT", "NO-EVICT"],
        ];
        foreach (var command in commands)
            Assert.Equal(b.Call(command).ToString(), a.Call(command).ToString());
        Assert.Equal(InfoFields.Get(b, "stats", "evicted_clients"), InfoFields.Get(a, "stats", "evicted_clients"));
    }

    /// <summary>True when the server closes the connection within the time (replies before that are read and dropped).</summary>
    private static bool ClosedWithin(RespClient client, int timeoutMs)
    {
        var deadline = DateTime.UtcNow.AddMilliseconds(timeoutMs);
        while (DateTime.UtcNow < deadline)
        {
            try
            {
                if (client.IsClosedByServer(500))
                    return true;
            }
            catch (IOException)
            {
                return true;
            }
        }
        return false;
    }
}
