using System.Net;
using Microsoft.AspNetCore.Connections;

namespace Diagnostics.Server.Api.Lane;

/// <summary>
/// Kestrel's transport for the HTTP listeners (API, studio, metrics): it binds only the HTTP
/// and HTTPS ports, so with <c>--transport kestrel</c> the RESP listeners keep Kestrel's socket transport.
/// </summary>
internal sealed class LaneListenerFactory(DiagnosticsLane lane, params int[] httpPorts) : IConnectionListenerFactory, IConnectionListenerFactorySelector
{
    public bool CanBind(EndPoint endpoint) => endpoint is IPEndPoint { Port: not 0 } ip && Array.IndexOf(httpPorts, ip.Port) >= 0;

    public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default)
        => ValueTask.FromResult<IConnectionListener>(new LaneListener((IPEndPoint)endpoint, lane));
}
