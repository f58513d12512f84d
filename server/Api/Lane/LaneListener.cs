using System.Net;
using System.Net.Sockets;
using Diagnostics.Server.Network;
using Microsoft.AspNetCore.Connections;

namespace Diagnostics.Server.Api.Lane;

/// <summary>Accepts HTTP connections for Kestrel and runs each as a <see cref="LaneConnection"/>.</summary>
internal sealed class LaneListener : IConnectionListener
{
    // Kestrel's default backlog.
    private const int Backlog = 512;
    private readonly Socket _socket;
    private readonly DiagnosticsLane _lane;

    public LaneListener(IPEndPoint endPoint, DiagnosticsLane lane)
    {
        _lane = lane;
        _socket = ListenSocket.Create(endPoint);
        if (endPoint.Address.Equals(IPAddress.IPv6Any))
            _socket.DualMode = true;
        try
        {
            _socket.Bind(endPoint);
        }
        catch (SocketException ex) when (ex.SocketErrorCode == SocketError.AddressAlreadyInUse)
        {
            _socket.Dispose();
            // The exception Kestrel turns into its own "address already in use" message.
            throw new AddressInUseException(ex.Message, ex);
        }
        _socket.Listen(Backlog);
        EndPoint = _socket.LocalEndPoint!;
    }

    public EndPoint EndPoint { get; }

    public async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        while (true)
        {
            try
            {
                var accepted = await _socket.AcceptAsync(cancellationToken).ConfigureAwait(false);
                return new LaneConnection(accepted, _lane);
            }
            catch (ObjectDisposedException)
            {
                return null; // unbound
            }
            catch (SocketException ex) when (ex.SocketErrorCode == SocketError.OperationAborted)
            {
                return null; // unbound
            }
            catch (OperationCanceledException)
            {
                return null;
            }
            catch (SocketException)
            {
                // A peer that reset before its connection was accepted: take the next one.
            }
        }
    }

    public ValueTask UnbindAsync(CancellationToken cancellationToken = default)
    {
        _socket.Dispose();
        return ValueTask.CompletedTask;
    }

    public ValueTask DisposeAsync()
    {
        _socket.Dispose();
        return ValueTask.CompletedTask;
    }
}
