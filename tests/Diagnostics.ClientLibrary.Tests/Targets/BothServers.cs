using Diagnostics.Server.Tests.Infrastructure;
using StackExchange.Redis;

namespace Diagnostics.ClientLibrary.Tests.Targets;

/// <summary>
/// One server process of each kind for the whole project (a collection fixture): starting the two
/// once keeps the project's run short, and the test classes run one after another, so state a test
/// leaves on a server (a flushed script cache, a loaded function library) is seen by no test
/// running at the same time. Tests keep to keys named after themselves.
/// </summary>
public sealed class BothServers : IDisposable
{
    private readonly ServerProcess _diagnostics = ServerProcess.Start();
    private readonly RealRedisServer _redis = RealRedisServer.Start();

    public int Port(Target target) => target == Target.Diagnostics ? _diagnostics.Port : _redis.Port;

    /// <summary>
    /// A multiplexer as an application configures one, with admin commands allowed (IServer's
    /// INFO, CONFIG GET, CLIENT LIST, SCRIPT FLUSH) and no retry on connect: a handshake the server
    /// fails must fail the test, not be retried into a pass.
    /// </summary>
    public ConnectionMultiplexer Connect(Target target, RedisProtocol? protocol = null, string? clientName = null, TextWriter? log = null)
    {
        var options = new ConfigurationOptions
        {
            EndPoints = { { "127.0.0.1", Port(target) } },
            AllowAdmin = true,
            AbortOnConnectFail = true,
            ConnectRetry = 1,
            ConnectTimeout = 10_000,
            SyncTimeout = 10_000,
            AsyncTimeout = 10_000,
            Protocol = protocol,
            ClientName = clientName,
        };
        return ConnectionMultiplexer.Connect(options, log);
    }

    public void Dispose()
    {
        _diagnostics.Dispose();
        _redis.Dispose();
    }
}

/// <summary>Every test class of the project shares <see cref="BothServers"/>.</summary>
[CollectionDefinition(Name)]
public sealed class BothServersCollection : ICollectionFixture<BothServers>
{
    public const string Name = "both servers";
}
