using System.Globalization;
using System.Text;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Replication;

/// <summary>INFO replication and ROLE, with Redis 7.0's fields, order and values for both roles.</summary>
public static class ReplicationInfo
{
    /// <summary>INFO's "replication" section body (replicationInfo in Redis's genRedisInfoString).</summary>
    public static void Write(StringBuilder text, DataServer server)
    {
        var role = server.Replication;
        var link = role.Link;
        var config = server.Config;
        var ids = role.Ids.Read();
        Field(text, "role", link is null ? "master" : "slave");
        if (link is not null)
        {
            long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            var state = link.State;
            bool up = state == MasterLinkState.Connected;
            // Redis reads these from its master client, or the cached one while the link is down; 1 with neither.
            bool known = up || role.HasCachedMaster;
            Field(text, "master_host", link.Host);
            Field(text, "master_port", link.Port);
            Field(text, "master_link_status", up ? "up" : "down");
            Field(text, "master_last_io_seconds_ago", up ? (now - link.Client.LastInteractionMs) / 1000 : -1);
            Field(text, "master_sync_in_progress", state == MasterLinkState.Transfer ? 1 : 0);
            Field(text, "slave_read_repl_offset", known ? link.ReadOffset : 1);
            Field(text, "slave_repl_offset", known ? ids.MasterReplOffset : 1);
            if (state == MasterLinkState.Transfer)
            {
                long size = link.TransferSize, read = link.TransferRead;
                Field(text, "master_sync_total_bytes", size);
                Field(text, "master_sync_read_bytes", read);
                Field(text, "master_sync_left_bytes", size - read);
                Field(text, "master_sync_perc", size > 0 ? ((double)read / size * 100).ToString("0.00", CultureInfo.InvariantCulture) : "0.00");
                Field(text, "master_sync_last_io_seconds_ago", (now - link.Client.LastInteractionMs) / 1000);
            }
            if (!up)
                Field(text, "master_link_down_since_seconds", link.DownSinceUnixMs == 0 ? -1 : (now - link.DownSinceUnixMs) / 1000);
            Field(text, "slave_priority", config.ReplicaPriority);
            Field(text, "slave_read_only", config.ReplicaReadOnly ? 1 : 0);
            Field(text, "replica_announced", config.ReplicaAnnounced ? 1 : 0);
        }
        // This server's own replicas (a replica may have some too), then its stream and backlog.
        var backlog = server.ReplicationMaster.Backlog;
        var feeds = backlog.Feeds;
        Field(text, "connected_slaves", feeds.Length);
        long nowMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        for (int i = 0; i < feeds.Length; i++)
        {
            var feed = feeds[i];
            text.Append("slave").Append(i).Append(":ip=").Append(feed.Address)
                .Append(",port=").Append(feed.ListeningPort)
                .Append(",state=").Append(feed.State == ReplicaState.Online ? "online" : "send_bulk")
                .Append(",offset=").Append(feed.AckOffset)
                .Append(",lag=").Append((nowMs - feed.AckUnixMs) / 1000).Append("\r\n");
        }
        Field(text, "master_failover_state", "no-failover");
        Field(text, "master_replid", ids.ReplId);
        Field(text, "master_replid2", ids.ReplId2);
        Field(text, "master_repl_offset", ids.MasterReplOffset);
        Field(text, "second_repl_offset", ids.SecondReplOffset);
        var (firstByte, historyLength) = backlog.History;
        Field(text, "repl_backlog_active", backlog.Active ? 1 : 0);
        Field(text, "repl_backlog_size", backlog.Size);
        Field(text, "repl_backlog_first_byte_offset", firstByte);
        Field(text, "repl_backlog_histlen", historyLength);
    }

    /// <summary>ROLE: ["master", offset, [replicas]] or ["slave", host, port, state, offset].</summary>
    public static void WriteRole(RespWriter reply, DataServer server)
    {
        var role = server.Replication;
        var link = role.Link;
        if (link is null)
        {
            reply.ArrayHeader(3);
            reply.Bulk("master"u8);
            reply.Integer(role.Ids.MasterReplOffset);
            // Online replicas: address, listening port and acknowledged offset, the last two as text.
            var feeds = server.ReplicationMaster.Backlog.Feeds;
            int online = 0;
            foreach (var feed in feeds)
                if (feed.State == ReplicaState.Online)
                    online++;
            reply.ArrayHeader(online);
            foreach (var feed in feeds)
            {
                if (feed.State != ReplicaState.Online)
                    continue;
                reply.ArrayHeader(3);
                reply.Bulk(feed.Address);
                reply.BulkInteger(feed.ListeningPort);
                reply.BulkInteger(feed.AckOffset);
            }
            return;
        }
        var state = link.State;
        reply.ArrayHeader(5);
        reply.Bulk("slave"u8);
        reply.Bulk(link.Host);
        reply.Integer(link.Port);
        reply.Bulk(state switch
        {
            MasterLinkState.Connect => "connect"u8,
            MasterLinkState.Connecting => "connecting"u8,
            MasterLinkState.Handshake => "handshake"u8,
            MasterLinkState.Transfer => "sync"u8,
            _ => "connected"u8,
        });
        // Redis's server.master->reploff: only while there is a master client (the link is up).
        reply.Integer(state == MasterLinkState.Connected ? role.Ids.MasterReplOffset : -1);
    }

    private static void Field(StringBuilder text, string name, string value) => text.Append(name).Append(':').Append(value).Append("\r\n");
    private static void Field(StringBuilder text, string name, long value) => text.Append(name).Append(':').Append(value).Append("\r\n");
}
