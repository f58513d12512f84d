using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Network;

/// <summary>
/// The lean RESP listener: accepts sockets on the configured addresses and runs each as a
/// <see cref="SocketClientTransport"/>. Used instead of Kestrel's listener when the
/// "transport" setting is "sockets" (see the benchmark notes in the README for why).
/// </summary>
public sealed class SocketListener(DataServer server, ClientSessions sessions, ILogger<SocketListener> log) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stopping)
    {
        var listeners = new List<Socket>();
        foreach (var endPoint in ListenAddresses.Resolve(server.Config.Bind, server.Config.Port))
        {
            var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            if (endPoint.AddressFamily == AddressFamily.InterNetworkV6)
                socket.DualMode = false;
            socket.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            socket.Bind(endPoint);
            socket.Listen(511);
            listeners.Add(socket);
        }
        stopping.Register(() =>
        {
            foreach (var socket in listeners)
                socket.Dispose();
        });
        var loops = new List<Task>();
        foreach (var socket in listeners)
            loops.Add(AcceptLoop(socket, stopping));
        await Task.WhenAll(loops);
    }

    private async Task AcceptLoop(Socket listener, CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            Socket accepted;
            try
            {
                accepted = await listener.AcceptAsync(stopping);
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException)
            {
                return;
            }
            catch (SocketException ex)
            {
                log.LogWarning("Accept failed: {Error}", ex.SocketErrorCode);
                continue;
            }
            _ = Serve(accepted);
        }
    }

    private async Task Serve(Socket socket)
    {
        using var transport = new SocketClientTransport(socket, server.Config.TcpKeepAlive);
        try
        {
            await sessions.RunAsync(transport);
        }
        catch (Exception ex)
        {
            log.LogError(ex, "Connection from {Remote} failed", transport.RemoteEndPoint);
        }
    }
}
