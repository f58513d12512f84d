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
        var (exitCode, output) = ServerProcess.RunUntilExit("--http-port", port.ToString(), "--port", "0");
        Assert.Equal(1, exitCode);
        Assert.Contains($"Failed to bind to address http://127.0.0.1:{port}: address already in use", output);
        Assert.DoesNotContain("Unhandled exception", output);
        Assert.DoesNotContain("BackgroundService failed", output);
    }

    /// <summary>
    /// A second server on a running server's ports is refused, whichever transport: .NET's
    /// ReuseAddress would have let both listen (SO_REUSEPORT), and the kernel would then split
    /// clients between two servers with different data.
    /// </summary>
    [Theory]
    [InlineData("sockets")]
    [InlineData("kestrel")]
    public void SecondServerOnARunningServersPortsIsRefused(string transport)
    {
        using var first = ServerProcess.Start("--transport", transport);
        var (exitCode, output) = ServerProcess.RunUntilExit("--transport", transport, "--port", first.Port.ToString());
        Assert.Equal(1, exitCode);
        Assert.Contains($"127.0.0.1:{first.Port}", output);
        Assert.Contains("ddress already in use", output);

        // --port 0: no RESP listener (as in Redis), so no other free port can race this one's failure.
        (exitCode, output) = ServerProcess.RunUntilExit("--http-port", first.HttpPort.ToString(), "--port", "0");
        Assert.Equal(1, exitCode);
        Assert.Contains($"Failed to bind to address http://127.0.0.1:{first.HttpPort}: address already in use", output);

        using var client = first.Connect();
        Assert.Equal("PONG", client.Call("PING").Text);
    }

    /// <summary>
    /// Ports whose connections a stopped server closed first (so the kernel still keeps them, in
    /// FIN_WAIT or TIME_WAIT) are bound again at once by the next server: SO_REUSEADDR is set (on Unix, by the runtime).
    /// </summary>
    [Fact]
    public async Task RestartRebindsPortsItsClosedConnectionsStillHold()
    {
        int port, httpPort;
        using (var first = ServerProcess.Start())
        {
            port = first.Port;
            httpPort = first.HttpPort;
            using var client = first.Connect();
            using var http = new HttpClient();
            await http.GetStringAsync($"http://127.0.0.1:{httpPort}/");
            client.Send("SHUTDOWN");
            Assert.True(first.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        Assert.True(HoldsClosedConnection(port), $"the kernel keeps no closed connection on port {port}: the restart below would prove nothing");
        Assert.True(HoldsClosedConnection(httpPort), $"the kernel keeps no closed connection on port {httpPort}: the restart below would prove nothing");
        using var second = ServerProcess.Start("--port", port.ToString(), "--http-port", httpPort.ToString());
        using var again = second.Connect();
        Assert.Equal("PONG", again.Call("PING").Text);
    }

    /// <summary>
    /// True when a loopback IPv4 connection with local port <paramref name="port"/> is in a state
    /// the kernel keeps after the local side closed: FIN_WAIT1, FIN_WAIT2, TIME_WAIT, CLOSING
    /// (04, 05, 06, 0B in /proc/net/tcp). Any of them makes a bind without SO_REUSEADDR fail.
    /// </summary>
    private static bool HoldsClosedConnection(int port)
    {
        string local = $"0100007F:{port:X4}";
        foreach (string line in File.ReadLines("/proc/net/tcp").Skip(1))
        {
            var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (fields[1] == local && fields[3] is "04" or "05" or "06" or "0B")
                return true;
        }
        return false;
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
