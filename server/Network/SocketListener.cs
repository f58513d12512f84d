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
public sealed class SocketListener(DataServer server, ClientSessions sessions, ILogger<SocketListener> log) : IHostedService
{
    private readonly List<Socket> _listeners = [];
    private readonly CancellationTokenSource _stopping = new();
    private readonly List<Task> _loops = [];

    /// <summary>
    /// Binds every address before returning, so the host reports "ready" only once clients can
    /// connect (a bind failure stops the start with the reason).
    /// </summary>
    public Task StartAsync(CancellationToken cancellationToken)
    {
        foreach (var endPoint in ListenAddresses.Resolve(server.Config.Bind, server.Config.Port))
        {
            var socket = ListenSocket.Create(endPoint);
            if (endPoint.AddressFamily == AddressFamily.InterNetworkV6)
                socket.DualMode = false;
            try
            {
                socket.Bind(endPoint);
                socket.Listen(511);
            }
            catch (SocketException ex)
            {
                socket.Dispose();
                // Redis's wording, so scripts that watch for it see the same line.
                throw new IOException($"Could not create server TCP listening socket {endPoint}: bind: {ex.Message}", ex);
            }
            _listeners.Add(socket);
        }
        foreach (var socket in _listeners)
            _loops.Add(AcceptLoop(socket, _stopping.Token));
        return Task.CompletedTask;
    }

    /// <summary>
    /// Stops accepting, then drops every client and waits for their connections to unwind, so no
    /// command is still touching the keyspace when the server frees it.
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        _stopping.Cancel();
        foreach (var socket in _listeners)
            socket.Dispose();
        await Task.WhenAll(_loops).WaitAsync(cancellationToken).ConfigureAwait(false);
        foreach (var client in server.Clients.Snapshot())
            client.Kill();
        var deadline = DateTime.UtcNow.AddSeconds(5);
        while (server.Clients.Count > 0 && DateTime.UtcNow < deadline && !cancellationToken.IsCancellationRequested)
            await Task.Delay(10, CancellationToken.None).ConfigureAwait(false);
        if (server.Clients.Count > 0)
            log.LogWarning("{Count} clients still connected at shutdown", server.Clients.Count);
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
                // Out of descriptors, say: back off instead of spinning on the same failure.
                log.LogWarning("Accept failed: {Error}", ex.SocketErrorCode);
                try
                {
                    await Task.Delay(100, stopping);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
                continue;
            }
            // One task per accepted socket, not a queue: ClientSessions refuses a client past
            // maxclients as soon as it starts (a one-line error, then close), so the tasks alive
            // are the admitted clients plus refusals being written; connections not yet accepted
            // wait in the kernel's backlog (511), as with Redis.
            _ = Serve(accepted);
        }
    }

    private async Task Serve(Socket socket)
    {
        using var transport = new SocketClientTransport(socket, server.Config.TcpKeepAlive, server.Stats);
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
