using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Protected mode as in Redis 7: with protected-mode yes and no password, clients that do not
/// come from loopback are refused with Redis's DENIED text, whatever the bind setting says.
/// Non-loopback traffic comes from a network namespace of the test's own (needs root and iproute2).
/// </summary>
public sealed class ProtectedModeTests
{
    private const string Denied =
        "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. "
        + "In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: "
        + "1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. "
        + "2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. "
        + "3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. "
        + "4) Set up an authentication password for the default user. "
        + "NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.";

    [Fact]
    public void NonLoopbackClientIsDeniedWithoutPassword()
    {
        using var ns = NetworkNamespace.Create();
        using var server = ServerProcess.Start("--bind", "127.0.0.1", ns.HostAddress);

        // redis-cli prints an error reply followed by an empty line.
        var remote = Cli(ns, server, "PING");
        Assert.Equal(Denied + "\n\n", remote.StandardOutput);

        // Loopback clients of the same server are served.
        using var local = server.Connect();
        RespAssert.Simple("PONG", local.Call("PING"));
        Poll.Until(() => server.Output.Contains("Refused connection from " + ns.PeerAddress), "the refusal was logged");
    }

    [Fact]
    public void NonLoopbackClientIsAcceptedWhenAPasswordIsSet()
    {
        using var ns = NetworkNamespace.Create();
        using var server = ServerProcess.Start("--bind", "127.0.0.1", ns.HostAddress, "--requirepass", "secret");

        var unauthenticated = Cli(ns, server, "PING");
        Assert.Equal("NOAUTH Authentication required.\n\n", unauthenticated.StandardOutput);

        var authenticated = Cli(ns, server, "--no-auth-warning", "-a", "secret", "CLIENT", "INFO");
        Assert.Contains($" addr={ns.PeerAddress}:", authenticated.StandardOutput);
        Assert.Contains($" laddr={ns.HostAddress}:{server.Port} ", authenticated.StandardOutput);
    }

    [Fact]
    public void NonLoopbackClientIsAcceptedWithProtectedModeOff()
    {
        using var ns = NetworkNamespace.Create();
        using var server = ServerProcess.Start("--bind", "127.0.0.1", ns.HostAddress, "--protected-mode", "no");

        var remote = Cli(ns, server, "PING");
        Assert.Equal("PONG\n", remote.StandardOutput);
    }

    private static ExternalTool.Result Cli(NetworkNamespace ns, ServerProcess server, params string[] arguments)
        => ns.Run("redis-cli", "redis-tools", ["-h", ns.HostAddress, "-p", server.Port.ToString(CultureInfo.InvariantCulture), .. arguments]);
}
