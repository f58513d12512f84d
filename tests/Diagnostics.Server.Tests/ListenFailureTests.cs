using System.Net;
using System.Net.Sockets;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>A port another process holds: the server says so in one line, as Redis, and exits with 1 (no crash dump, no abort).</summary>
public sealed class ListenFailureTests
{
    [Fact]
    public void RespPortInUseIsOneClearLineAndExitCodeOne()
    {
        using var holder = HoldPort(out int port);
        var (exitCode, output) = ServerProcess.RunUntilExit("--port", port.ToString());
        Assert.Equal(1, exitCode);
        Assert.Contains($"Could not create server TCP listening socket 127.0.0.1:{port}: bind: Address already in use", output);
        Assert.Contains("aborting", output);
        Assert.DoesNotContain("Unhandled exception", output);
    }

    [Fact]
    public void HttpPortInUseIsOneClearLineAndExitCodeOne()
    {
        using var holder = HoldPort(out int port);
        var (exitCode, output) = ServerProcess.RunUntilExit("--http-port", port.ToString());
        Assert.Equal(1, exitCode);
        Assert.Contains($"Failed to bind to address http://127.0.0.1:{port}: address already in use", output);
        Assert.DoesNotContain("Unhandled exception", output);
        Assert.DoesNotContain("BackgroundService failed", output);
    }

    /// <summary>A loopback port this test holds listening, as another program would.</summary>
    private static TcpListener HoldPort(out int port)
    {
        var holder = new TcpListener(IPAddress.Loopback, 0);
        holder.Start();
        port = ((IPEndPoint)holder.LocalEndpoint).Port;
        return holder;
    }
}
