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
        table.Add(new CommandSpec("replicaof", 3, Admin | NoScript | Stale | NoAsyncLoading | AllShards, 0, 0, 0, ReplicaOf, g,
            "Configures a server as replica of another, or promotes it to a master.", "5.0.0") { Arguments = args });
        table.Add(new CommandSpec("slaveof", 3, Admin | NoScript | Stale | NoAsyncLoading | AllShards, 0, 0, 0, ReplicaOf, g,
            "Sets a Redis server as a replica of another, or promotes it to being a master.") { Arguments = args });
        // The master side: a replica's handshake and sync, and WAIT. They hold no shard when they
        // start (a full sync takes its own cut), and Admin sends them off the socket thread.
        table.Add(new CommandSpec("psync", -3, Connection | Admin | NoScript | NoAsyncLoading | NoMulti, 0, 0, 0, Psync, g,
            "An internal command used in replication.", "2.8.0")
        {
            Arguments = [new("replicationid", "string"), new("offset", "integer")],
        });
        table.Add(new CommandSpec("sync", 1, Connection | Admin | NoScript | NoAsyncLoading | NoMulti, 0, 0, 0, Sync, g,
            "An internal command used in replication.", "1.0.0"));
        table.Add(new CommandSpec("replconf", -1, Connection | Admin | NoScript | Loading | Stale | AllowBusy, 0, 0, 0, ReplConf, g,
            "An internal command for configuring the replication stream.", "3.0.0"));
        table.Add(new CommandSpec("wait", 3, Connection | NoScript, 0, 0, 0, Wait, "generic",
            "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.", "3.0.0")
        {
            Arguments = [new("numreplicas", "integer"), new("timeout", "integer")],
        });
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
        // A replica of ours asking to follow someone: Redis refuses it (it would cut its own feed).
        if (c.Client is ClientConnection { Feed: not null })
        {
            c.Error("ERR Command is not valid when client is a replica.");
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

    /// <summary>
    /// PSYNC replid offset: +CONTINUE and the stream from that offset when it is ours and still
    /// kept, else +FULLRESYNC replid offset and a snapshot taken at that very offset.
    /// </summary>
    private static void Psync(ref CommandContext c)
    {
        if (!CanServeReplica(ref c, out var connection))
            return;
        if (!Protocol.NumberFormat.TryParseInt64(c.Arg(2), out long offset))
        {
            c.Error(Errors.NotInteger);
            return;
        }
        var master = c.Server.ReplicationMaster;
        string replId = c.ArgString(1);
        long from = master.TryPartial(replId, offset, out var request);
        if (from >= 0)
        {
            var feed = connection.NewFeed(fullSync: false);
            master.Backlog.Attach(feed, from);
            feed.Sync = master.Syncs.Add(new MasterSyncEntry(feed.Key, full: false, request, diskless: false));
            connection.BecomeReplica(feed, snapshot: null, eofMark: false);
            // A replica that knows PSYNC2 learns our current ID (it may have changed since it synced).
            if (connection.ReplicaCapaPsync2)
                c.Reply.SimpleString("CONTINUE " + c.Server.Replication.Ids.ReplId);
            else
                c.Reply.SimpleString("CONTINUE"u8);
            master.Log.LogInformation("Partial resynchronization request from {Address} accepted. Sending {Bytes} bytes of backlog starting from offset {Offset}.",
                connection.Address, c.Server.Replication.Ids.MasterReplOffset - from + 1, from);
            return;
        }
        FullSync(ref c, connection, announce: true, request);
    }

    /// <summary>SYNC: the old protocol, always a full sync, its snapshot sent with its length and no +FULLRESYNC line.</summary>
    private static void Sync(ref CommandContext c)
    {
        if (CanServeReplica(ref c, out var connection))
            FullSync(ref c, connection, announce: false, c.Server.ReplicationMaster.SyncCommandRequest());
    }

    private static void FullSync(ref CommandContext c, ClientConnection connection, bool announce, SyncRequest request)
    {
        var master = c.Server.ReplicationMaster;
        var feed = connection.NewFeed(fullSync: true);
        var (snapshot, offset) = master.CutForFullSync(feed);
        bool eof = announce && connection.ReplicaCapaEof && c.Server.Config.ReplDisklessSync;
        feed.Sync = master.Syncs.Add(new MasterSyncEntry(feed.Key, full: true, request, eof));
        connection.BecomeReplica(feed, snapshot, eof);
        if (announce)
            c.Reply.SimpleString($"FULLRESYNC {c.Server.Replication.Ids.ReplId} {offset}");
        master.Log.LogInformation("Replica {Address} asks for synchronization; full resync at offset {Offset}, snapshot {How}",
            connection.Address, offset, eof ? "streamed to the socket (diskless)" : "through a file");
    }

    private static bool CanServeReplica(ref CommandContext c, out ClientConnection connection)
    {
        connection = null!;
        if (c.Client is not ClientConnection conn)
        {
            c.Error("ERR PSYNC needs a client connection to stream to");
            return false;
        }
        connection = conn;
        // Already a replica: Redis ignores the command.
        if (conn.Feed is not null)
        {
            c.LogNothing();
            return false;
        }
        var replication = c.Server.Replication;
        if (replication.IsReplica && !replication.LinkUp)
        {
            c.Error("NOMASTERLINK Can't SYNC while not connected with my master");
            return false;
        }
        return true;
    }

    /// <summary>REPLCONF option value ...: what a replica tells its master before and after PSYNC.</summary>
    private static void ReplConf(ref CommandContext c)
    {
        if (c.ArgCount % 2 == 0)
        {
            c.SyntaxError();
            return;
        }
        var connection = c.Client as ClientConnection;
        for (int i = 1; i < c.ArgCount; i += 2)
        {
            if (c.ArgIs(i, "listening-port"u8))
            {
                if (!Protocol.NumberFormat.TryParseInt64(c.Arg(i + 1), out long port))
                {
                    c.Error(Errors.NotInteger);
                    return;
                }
                if (connection is not null)
                    connection.ReplicaListeningPort = (int)port;
            }
            else if (c.ArgIs(i, "capa"u8))
            {
                if (connection is not null && c.ArgIs(i + 1, "eof"u8))
                    connection.ReplicaCapaEof = true;
                else if (connection is not null && c.ArgIs(i + 1, "psync2"u8))
                    connection.ReplicaCapaPsync2 = true;
            }
            else if (c.ArgIs(i, "ack"u8))
            {
                // Only a replica acknowledges, and an ACK is never answered.
                if (connection?.Feed is { } feed && Protocol.NumberFormat.TryParseInt64(c.Arg(i + 1), out long acked))
                    c.Server.ReplicationMaster.Acknowledged(feed, acked);
                c.Reply.Muted = true;
                return;
            }
            else if (c.ArgIs(i, "getack"u8))
            {
                // A master asks its replicas; the replica side answers inside its stream. Nothing to say here.
                c.Reply.Muted = true;
                return;
            }
            else if (c.ArgIs(i, "ip-address"u8) || c.ArgIs(i, "rdb-only"u8) || c.ArgIs(i, "rdb-filter-only"u8))
            {
                // Accepted: the address a replica announces is shown as it connected.
            }
            else
            {
                c.Error($"ERR Unrecognized REPLCONF option: {c.ArgString(i)}");
                return;
            }
        }
        c.Reply.Ok();
    }

    /// <summary>
    /// WAIT numreplicas timeout: how many replicas acknowledged everything written before it, once
    /// that many did or the timeout passed (0 waits for ever).
    /// </summary>
    private static void Wait(ref CommandContext c)
    {
        if (c.Server.Replication.IsReplica)
        {
            c.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.");
            return;
        }
        if (!Protocol.NumberFormat.TryParseInt64(c.Arg(1), out long needed))
        {
            c.Error(Errors.NotInteger);
            return;
        }
        if (!TimeoutArgument.TryMilliseconds(ref c, 2, out long timeout))
            return;
        var master = c.Server.ReplicationMaster;
        // Everything this connection wrote is before the offset now (it waits, at worst, for others' writes too).
        long offset = c.Server.Replication.Ids.MasterReplOffset;
        int acknowledged = master.CountAcknowledged(offset);
        if (acknowledged >= needed || c.Client is not ClientConnection connection || c.Client.InTransaction)
        {
            c.Reply.Integer(acknowledged);
            return;
        }
        var reply = c.Reply;
        connection.ReplyLater(async () => reply.Integer(await master.WaitAsync(offset, (int)Math.Min(needed, int.MaxValue), timeout)));
    }
}
