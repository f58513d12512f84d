using Diagnostics.Contracts;
using Diagnostics.Server.Replication;

namespace Diagnostics.Server.Diagnostics.History;

/// <summary>
/// Replication's figures once a second: on a master (once its backlog is active) the stream's
/// bytes per second, the backlog's fill and, per attached replica, its lag in bytes and seconds,
/// its ACK's age and the bytes sent to it; on a replica, its link, the stream it read but has not
/// applied, and how long since its master was last heard. Only volatile reads of what the feeds
/// and the link already keep: nothing is added to the write path.
/// </summary>
/// <remarks>
/// Per-replica figures are series families named by the replica's "ip:port"
/// (<see cref="MetricNames.ReplLagBytesPrefix"/>...), as ops by command group are: the history store
/// forgets a series an hour after its last figure, so replicas that come and go do not pile up.
/// Lag in seconds is the time since the master first had a byte the replica has not acknowledged
/// (from <see cref="StreamTimeline"/>), not bytes behind over the stream's rate: it stays right
/// when the stream is idle or bursty, where a rate estimate divides by nearly nothing.
/// </remarks>
public sealed class ReplicationSampleSource(DataServer server)
{
    private readonly StreamTimeline _timeline = new(Sampler.HistoryCapacity);
    private string _replId = "";

    public void Write(SampleWriter writer)
    {
        var role = server.Replication;
        var master = server.ReplicationMaster;
        if (role is null || master is null)
            return; // the first sample can come before replication is set up
        var backlog = master.Backlog;
        var link = role.Link;
        if (!backlog.Active && link is null)
            return;
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var ids = role.Ids.Read();
        long offset = ids.MasterReplOffset;

        // A new history (a full sync as a replica adopts its master's offset) is not a burst of writes.
        double streamed = writer.Delta("repl.stream", offset);
        if (ids.ReplId != _replId && ids.ReplId2 != _replId)
            streamed = 0;
        _replId = ids.ReplId;
        writer.Gauge(MetricNames.ReplStreamBytesPerSecond, writer.ElapsedSeconds > 0 ? streamed / writer.ElapsedSeconds : 0);
        _timeline.Add(now, offset);

        if (backlog.Active)
        {
            var (_, historyLength) = backlog.History;
            writer.Gauge(MetricNames.ReplBacklogFillPercent, backlog.Size > 0 ? historyLength * 100.0 / backlog.Size : 0);
            var feeds = backlog.Feeds;
            writer.Gauge(MetricNames.ReplConnectedReplicas, feeds.Length);
            foreach (var feed in feeds)
            {
                string key = feed.Key;
                long has = Math.Max(feed.AckOffset, feed.AttachOffset);
                writer.Gauge(MetricNames.ReplLagBytesPrefix + key, Math.Max(0, offset - has));
                writer.Gauge(MetricNames.ReplLagSecondsPrefix + key, _timeline.SecondsBehind(has, now));
                writer.Gauge(MetricNames.ReplAckAgeSecondsPrefix + key, Math.Max(0, now - feed.AckUnixMs) / 1000.0);
                // A reconnection starts the counts over; the writer reads a count that went back as idle.
                writer.Rate(MetricNames.ReplSentBytesPerSecondPrefix + key, Volatile.Read(ref feed.SnapshotBytesSent) + Volatile.Read(ref feed.StreamBytesSent));
            }
        }

        if (link is not null)
        {
            var state = link.State;
            bool up = state == MasterLinkState.Connected;
            writer.Gauge(MetricNames.ReplLinkUp, up ? 1 : 0);
            writer.Gauge(MetricNames.ReplLinkLagBytes, up ? Math.Max(0, link.ReadOffset - offset) : 0);
            long lastHeard = up ? link.Client.LastInteractionMs : link.DownSinceUnixMs;
            writer.Gauge(MetricNames.ReplMasterLastIoSeconds, lastHeard > 0 ? Math.Max(0, now - lastHeard) / 1000.0 : 0);
        }
    }
}
