using System.Net;
using System.Net.Sockets;

namespace Diagnostics.Server.Network;

/// <summary>
/// Listening sockets that a restart can rebind at once and that no second server can share.
/// </summary>
/// <remarks>
/// Not <see cref="SocketOptionName.ReuseAddress"/>: on Unix .NET maps it to SO_REUSEADDR and
/// SO_REUSEPORT, and SO_REUSEPORT lets a second process listen on the same address and port; the
/// kernel then splits new connections between two servers with different data, and neither
/// reports a clash. What a restart needs (binding while closed connections linger in TIME_WAIT)
/// is SO_REUSEADDR alone, which the runtime already sets on every TCP socket on Unix, as Redis
/// sets it. Windows rebinds over TIME_WAIT anyway; there the port is claimed exclusively so that
/// no other socket can take it over.
/// </remarks>
public static class ListenSocket
{
    public static Socket Create(IPEndPoint endPoint)
    {
        var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        if (OperatingSystem.IsWindows())
            socket.ExclusiveAddressUse = true;
        return socket;
    }
}
