using System.Net;
using System.Net.Sockets;
using Diagnostics.Server.Tls;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Network;

/// <summary>
/// The lean RESP listener: accepts sockets on the configured addresses and runs each as a
/// <see cref="SocketClientTransport"/>, on the plain port and on tls-port (after a TLS handshake).
/// Used instead of Kestrel's listener when the "transport" setting is "sockets" (see the
/// benchmark notes in the README for why).
/// </summary>
public sealed class SocketListener : IHostedService
{
    private readonly DataServer _server;
    private readonly ClientSessions _sessions;
    private readonly ILogger<SocketListener> _log;
    private readonly List<Socket> _plain = [];
    private readonly Lock _tlsGate = new();
    private List<Socket> _tls = [];
    private readonly CancellationTokenSource _stopping = new();
    private readonly List<Task> _loops = [];

    public SocketListener(DataServer server, ClientSessions sessions, ILogger<SocketListener> log)
    {
        _server = server;
        _sessions = sessions;
        _log = log;
        // CONFIG SET tls-port moves the TLS listener, as Redis's changeListenPort.
        server.Config.TlsPortChanged = ChangeTlsPort;
    }

    /// <summary>
    /// Binds every address before returning, so the host reports "ready" only once clients can
    /// connect (a bind failure stops the start with the reason).
    /// </summary>
    public Task StartAsync(CancellationToken cancellationToken)
    {
        var config = _server.Config;
        if (config.Port != 0)
            _plain.AddRange(Bind(config.Port));
        if (config.Tls.Port != 0)
            _tls = Bind(config.Tls.Port);
        foreach (var socket in _plain)
            _loops.Add(AcceptLoop(socket, tls: false, _stopping.Token));
        foreach (var socket in _tls)
            _loops.Add(AcceptLoop(socket, tls: true, _stopping.Token));
        return Task.CompletedTask;
    }

    /// <summary>
    /// Stops accepting, then drops every client and waits for their connections to unwind, so no
    /// command is still touching the keyspace when the server frees it.
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        _stopping.Cancel();
        foreach (var socket in _plain)
            socket.Dispose();
        lock (_tlsGate)
            foreach (var socket in _tls)
                socket.Dispose();
        Task[] loops;
        lock (_loops)
            loops = [.. _loops];
        await Task.WhenAll(loops).WaitAsync(cancellationToken).ConfigureAwait(false);
        foreach (var client in _server.Clients.Snapshot())
            client.Kill();
        var deadline = DateTime.UtcNow.AddSeconds(5);
        while (_server.Clients.Count > 0 && DateTime.UtcNow < deadline && !cancellationToken.IsCancellationRequested)
            await Task.Delay(10, CancellationToken.None).ConfigureAwait(false);
        if (_server.Clients.Count > 0)
            _log.LogWarning("{Count} clients still connected at shutdown", _server.Clients.Count);
    }

    /// <summary>Listening sockets on every bind address for <paramref name="port"/>; all or none (a failure closes those already bound).</summary>
    private List<Socket> Bind(int port)
    {
        var bound = new List<Socket>();
        foreach (var endPoint in ListenAddresses.Resolve(_server.Config.Bind, port))
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
                foreach (var other in bound)
                    other.Dispose();
                // Redis's wording, so scripts that watch for it see the same line.
                throw new IOException($"Could not create server TCP listening socket {endPoint}: bind: {ex.Message}", ex);
            }
            bound.Add(socket);
        }
        return bound;
    }

    /// <summary>The new port is bound before the old one closes, so a refused port leaves the old listener serving.</summary>
    private string? ChangeTlsPort()
    {
        int port = _server.Config.Tls.Port;
        lock (_tlsGate)
        {
            if (_stopping.IsCancellationRequested)
                return "the server is shutting down";
            List<Socket> fresh;
            try
            {
                fresh = port == 0 ? [] : Bind(port);
            }
            catch (IOException ex)
            {
                _log.LogWarning("{Error}", ex.Message);
                return ex.Message;
            }
            foreach (var socket in _tls)
                socket.Dispose();
            _tls = fresh;
            lock (_loops)
                foreach (var socket in fresh)
                    _loops.Add(AcceptLoop(socket, tls: true, _stopping.Token));
            _log.LogInformation(port == 0 ? "TLS listener closed" : "TLS listener moved to port {Port}", port);
            return null;
        }
    }

    private async Task AcceptLoop(Socket listener, bool tls, CancellationToken stopping)
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
            catch (SocketException ex) when (ex.SocketErrorCode is SocketError.OperationAborted or SocketError.Interrupted)
            {
                // The listener was closed (tls-port moved).
                return;
            }
            catch (SocketException ex)
            {
                // Out of descriptors, say: back off instead of spinning on the same failure.
                _log.LogWarning("Accept failed: {Error}", ex.SocketErrorCode);
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
            _ = tls ? ServeTls(accepted, stopping) : Serve(new SocketClientTransport(accepted, _server.Config.TcpKeepAlive, _server.Stats));
        }
    }

    private async Task ServeTls(Socket socket, CancellationToken stopping)
    {
        SocketClientTransport? transport;
        try
        {
            transport = await TlsHandshake.AcceptAsync(socket, _server.Tls, _server.Config.TcpKeepAlive, _server.Stats, _log, stopping);
        }
        catch (Exception ex)
        {
            _log.LogError(ex, "TLS handshake failed unexpectedly");
            socket.Dispose();
            return;
        }
        if (transport is not null)
            await Serve(transport);
    }

    private async Task Serve(SocketClientTransport transport)
    {
        using var _ = transport;
        try
        {
            await _sessions.RunAsync(transport);
        }
        catch (Exception ex)
        {
            _log.LogError(ex, "Connection from {Remote} failed", transport.RemoteEndPoint);
        }
    }
}
