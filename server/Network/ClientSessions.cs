using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Network;

/// <summary>
/// Admits or refuses a new client (maxclients, protected mode) and runs its
/// <see cref="ClientConnection"/> until it ends, then releases it. Shared by both transports.
/// maxclients is what bounds everything kept per client (connections, their shard work items,
/// their buffers): a refused connection gets Redis's error and is closed at once.
/// </summary>
public sealed class ClientSessions(DataServer server, ILogger<ClientSessions> log)
{
    private const string ProtectedModeError =
        "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. "
        + "In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: "
        + "1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. "
        + "2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. "
        + "3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. "
        + "4) Set up an authentication password for the default user. "
        + "NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.";

    public async Task RunAsync(ClientTransport transport)
    {
        server.Stats.ConnectionReceived();
        string? refusal = Admission(transport.RemoteEndPoint);
        if (refusal is not null)
        {
            server.Stats.ConnectionRejected();
            log.LogWarning("Refused connection from {Remote}: {Reason}", transport.RemoteEndPoint, refusal.Split('.')[0]);
            await transport.Pipe.Output.WriteAsync(System.Text.Encoding.ASCII.GetBytes("-" + refusal + "\r\n"));
            return;
        }

        bool released = false;
        try
        {
            var client = new ClientConnection(server, transport, log);
            server.Clients.Add(client);
            try
            {
                await client.RunAsync();
            }
            finally
            {
                // The place is given back as the client leaves the list, before its buffers are
                // freed: once connected_clients shows it gone, a new connection may take its place.
                server.Clients.Remove(client);
                server.Clients.Release();
                released = true;
                client.LeaveReplication();
                client.Dispose();
            }
        }
        finally
        {
            if (!released)
                server.Clients.Release();
        }
    }

    /// <summary>Null when the client may stay (and it then holds a place: release it), else why not.</summary>
    private string? Admission(EndPoint? remote)
    {
        var config = server.Config;
        if (config.ProtectedMode && server.Acl.DefaultNeedsNoPassword && remote is IPEndPoint ip && !IPAddress.IsLoopback(ip.Address)
            && !(ip.Address.IsIPv4MappedToIPv6 && IPAddress.IsLoopback(ip.Address.MapToIPv4())))
            return ProtectedModeError;
        if (!server.Clients.TryAdmit(config.MaxClients))
            return "ERR max number of clients reached";
        return null;
    }
}

/// <summary>Kestrel's entry point for the RESP listener when the "transport" setting is "kestrel".</summary>
public sealed class RespConnectionHandler(ClientSessions sessions) : ConnectionHandler
{
    public override Task OnConnectedAsync(ConnectionContext connection) => sessions.RunAsync(new KestrelClientTransport(connection));
}
