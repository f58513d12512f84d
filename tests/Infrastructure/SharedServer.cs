namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// One server process shared by the tests of a class (xunit class fixture). Tests that need a
/// clean keyspace use their own database number or FLUSHALL in a server of their own.
/// </summary>
public sealed class SharedServer : IDisposable
{
    public SharedServer() => Server = ServerProcess.Start();

    public ServerProcess Server { get; }

    public RespClient Connect() => Server.Connect();

    public void Dispose() => Server.Dispose();
}
