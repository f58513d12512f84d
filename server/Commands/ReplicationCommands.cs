using Diagnostics.Server.Network;
using Diagnostics.Server.Replication;
using Microsoft.Extensions.Logging;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// The replica side's commands: REPLICAOF (and its old name SLAVEOF) and ROLE. REPLICAOF holds
/// every shard while it changes the role, so the master's stream is never half applied across it.
/// </summary>
public static class ReplicationCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "server";
        var args = new CommandArgument[] { new("host", "string"), new("port", "integer") };
        table.Add(new CommandSpec("replicaof", 3, Admin | NoScript | Stale | AllShards, 0, 0, 0, ReplicaOf, g,
            "Configures a server as replica of another, or promotes it to a master.", "5.0.0") { Arguments = args });
        table.Add(new CommandSpec("slaveof", 3, Admin | NoScript | Stale | AllShards, 0, 0, 0, ReplicaOf, g,
            "Sets a Redis server as a replica of another, or promotes it to being a master.") { Arguments = args });
        table.Add(new CommandSpec("role", 1, Connection | NoScript | Loading | Stale | Fast, 0, 0, 0, Role, g,
            "Returns the replication role.", "2.8.12"));
    }

    private static void ReplicaOf(ref CommandContext c)
    {
        var replication = c.Server.Replication;
        if (c.ArgIs(1, "no"u8) && c.ArgIs(2, "one"u8))
        {
            if (replication.UnsetMaster())
                replication.Log.LogInformation("MASTER MODE enabled (user request from '{Client}')", Describe(ref c));
            c.Reply.Ok();
            return;
        }
        if (!Protocol.NumberFormat.TryParseInt64(c.Arg(2), out long port) || port < 0 || port > 65535)
        {
            c.Error("ERR Invalid master port");
            return;
        }
        string host = c.ArgString(1);
        if (!replication.SetMaster(host, (int)port))
        {
            replication.Log.LogInformation("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
            c.Reply.SimpleString("OK Already connected to specified master"u8);
            return;
        }
        replication.Log.LogInformation("REPLICAOF {Host}:{Port} enabled (user request from '{Client}')", host, port, Describe(ref c));
        c.Reply.Ok();
    }

    private static string Describe(ref CommandContext c)
        => c.Client is ClientConnection connection ? ClientDescription.Describe(connection, c.NowMs) : $"id={c.Client.Id}";

    private static void Role(ref CommandContext c) => ReplicationInfo.WriteRole(c.Reply, c.Server);
}
