using System.IO.Pipelines;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Protocol;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Replication;

/// <summary>
/// The client the master's command stream runs for (Redis's server.master): authenticated, replies
/// muted (a master is only ever answered REPLCONF ACK, which the link writes itself), allowed to
/// write on a read-only replica, and the one client for whom a replica's expired keys still exist
/// (its effects say <see cref="Engine.CommandEffects.FromMaster"/>): the master's DELs decide.
/// One per link, kept across reconnections as Redis keeps its cached master (same id, same
/// selected database).
/// </summary>
public sealed class MasterClient : ClientSession
{
    public MasterClient(DataServer server, string host, int port, ILogger log)
        : base(server.Clients.NextId(), new RespWriter(PipeWriter.Create(Stream.Null)) { Muted = true }, log, authenticated: true, server.KeyspaceEvents)
    {
        OwnEffects.FromMaster = true;
        // The executor mutes replies by this mode: nothing the master is sent comes from its commands.
        ReplyMode = Network.ReplyMode.Off;
        Address = host.Contains(':') ? $"[{host}]:{port}" : $"{host}:{port}";
        CreatedMs = LastInteractionMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    }

    /// <summary>The master's address (CLIENT LIST addr=, MONITOR lines).</summary>
    public override string Address { get; }
    /// <summary>Our end of the current connection, empty while there is none.</summary>
    public string LocalAddress { get; internal set; } = "";
    public long CreatedMs { get; }
    public long LastInteractionMs { get; internal set; }
    /// <summary>Bytes read from the master over every connection (CLIENT LIST tot-net-in).</summary>
    public long NetInputBytes { get; internal set; }
    /// <summary>Bytes sent to the master (handshake and ACKs; CLIENT LIST tot-net-out).</summary>
    public long NetOutputBytes { get; internal set; }
    /// <summary>Bytes received and not yet applied (CLIENT LIST qbuf).</summary>
    public long QueryBufferBytes { get; internal set; }
    /// <summary>The socket's descriptor, -1 while not connected.</summary>
    public long FileDescriptor { get; internal set; } = -1;

    internal override bool IsMaster => true;
}
