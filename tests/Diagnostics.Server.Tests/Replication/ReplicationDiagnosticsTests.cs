using System.IO.Compression;
using System.Text.Json;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// Replication's diagnostics on a master of ours with a replica of ours: /api/replication shows
/// the replica online at the master's offset and the sync that attached it, the replica shows its
/// link; the 1 Hz history has the per-replica series; the debug package holds replication.json;
/// and the full sync's bytes are in the network and disk accounting.
/// </summary>
public sealed class ReplicationDiagnosticsTests
{
    [Fact]
    public async Task TheMasterShowsItsReplicaAndTheReplicaItsLink()
    {
        using var dir = new TempDirectory();
        // Through a file (not diskless): the snapshot is written and read back, both counted.
        using var pair = ReplicaPair.Start(["--repl-diskless-sync", "no", "--dir", dir.Path]);
        using var m = pair.Master.Connect();
        Pipeline.RunAll(m, Enumerable.Range(0, 500).Select(i => new[] { "SET", "k:" + i, new string('v', 100) }));
        RespAssert.Integer(1, m.Call("WAIT", "1", "5000"));
        pair.WaitInSync();

        using var masterApi = new ApiClient(pair.Master.HttpPort);
        ReplicationSnapshot view = null!;
        Poll.Until(() =>
        {
            view = masterApi.Get("/api/replication", ContractsJson.Default.ReplicationSnapshot);
            return view.Replicas.Count == 1 && view.Replicas[0].AckOffset == view.MasterReplOffset;
        }, () => $"the replica's ACK at the master's offset: {JsonSerializer.Serialize(view, ContractsJson.Default.ReplicationSnapshot)}");
        Assert.Equal("master", view.Role);
        var replica = view.Replicas[0];
        Assert.Equal(pair.ReplicaKey, replica.Key);
        Assert.Equal("online", replica.State);
        Assert.Equal(0, replica.LagBytes);
        Assert.True(replica.AckAgeSeconds < 5, $"ACK age {replica.AckAgeSeconds}");
        Assert.True(replica.SnapshotBytesSent > 0 && replica.StreamBytesSent > 50_000, $"sent {replica.SnapshotBytesSent} + {replica.StreamBytesSent}");
        Assert.Equal(1, replica.FullSyncs);
        Assert.True(view.Backlog.Active);
        Assert.True(view.Backlog.HistoryLength > 50_000);

        var sync = Assert.Single(view.Syncs, s => s.Side == "master");
        Assert.Equal(pair.ReplicaKey, sync.Peer);
        Assert.True(sync.Full);
        // A master made a replica offers its own history (PSYNC2), which is not the master's.
        Assert.Equal(FullSyncReason.IdMismatch, sync.Reason);
        Assert.Equal(40, sync.RequestedReplId.Length);
        Assert.Equal("online", sync.Outcome);
        Assert.False(sync.Diskless);
        Assert.Equal(replica.SnapshotBytesSent, sync.SnapshotBytes);
        Assert.Null(sync.EndReason);

        // The snapshot's bytes are in the replica connection's network count (its own flushes), and
        // the file it went through in the disk accounting: written by "rdb sync", read back to send.
        var client = ClientListLine(m, replica.ClientId);
        Assert.True(long.Parse(client["tot-net-out"]) >= replica.SnapshotBytesSent + replica.StreamBytesSent,
            $"tot-net-out {client["tot-net-out"]} against {replica.SnapshotBytesSent} + {replica.StreamBytesSent} sent");
        var diskio = InfoFields.Read(m, "diskio");
        Assert.Contains(diskio, f => f.Key.EndsWith("_snapshot_write", StringComparison.Ordinal) && f.Value.StartsWith("name=rdb sync,", StringComparison.Ordinal));
        Assert.True(long.Parse(InfoFields.Parts(diskio["io_snapshot_read"])["bytes"]) >= replica.SnapshotBytesSent, diskio["io_snapshot_read"]);

        // The replica's side: its link up at the master's offset, and the sync it made.
        // The master's PINGs move its offset on (14 bytes each): both sides are read again until
        // the replica's applied offset is the master's of the same moment.
        using var replicaApi = new ApiClient(pair.Replica.HttpPort);
        ReplicationSnapshot replicaView = null!;
        long masterOffset = 0;
        Poll.Until(() =>
        {
            replicaView = replicaApi.Get("/api/replication", ContractsJson.Default.ReplicationSnapshot);
            masterOffset = masterApi.Get("/api/replication", ContractsJson.Default.ReplicationSnapshot).MasterReplOffset;
            return replicaView.Link?.AppliedOffset == masterOffset;
        }, () => $"the replica's applied offset at the master's {masterOffset}: {JsonSerializer.Serialize(replicaView, ContractsJson.Default.ReplicationSnapshot)}");
        Assert.Equal("replica", replicaView.Role);
        Assert.Equal("connected", replicaView.Link!.State);
        Assert.Equal(pair.Master.Port, replicaView.Link.Port);
        Assert.Equal(view.ReplId, replicaView.ReplId);
        var made = Assert.Single(replicaView.Syncs, s => s.Side == "replica");
        Assert.True(made.Full);
        Assert.Equal($"127.0.0.1:{pair.Master.Port}", made.Peer);
        Assert.True(made.SnapshotBytes > 0);

        // The history: the replica's own series on the master, the link's on the replica.
        string key = pair.ReplicaKey;
        MetricHistory history = null!;
        Poll.Until(() =>
        {
            history = masterApi.Get("/api/history?seconds=60", ContractsJson.Default.MetricHistory);
            return history.Series.ContainsKey(MetricNames.ReplLagBytesPrefix + key) && history.Series[MetricNames.ReplSentBytesPerSecondPrefix + key].Any(v => v > 0);
        }, () => "the replica's series in the master's history: " + string.Join(", ", history.Series.Keys.Where(k => k.StartsWith("repl", StringComparison.Ordinal))));
        foreach (string prefix in new[] { MetricNames.ReplLagSecondsPrefix, MetricNames.ReplAckAgeSecondsPrefix })
            Assert.True(history.Series.ContainsKey(prefix + key), prefix + key);
        Assert.Contains(MetricNames.ReplBacklogFillPercent, history.Series.Keys);
        Assert.True(history.Series[MetricNames.ReplStreamBytesPerSecond].Any(v => v > 0), "the stream's bytes per second");
        Assert.True(MetricNames.IsSeries(MetricNames.ReplLagBytesPrefix + key));
        Poll.Until(() => replicaApi.Get("/api/history?seconds=60", ContractsJson.Default.MetricHistory).Series.GetValueOrDefault(MetricNames.ReplLinkUp) is { Length: > 0 } up && up[^1] == 1,
            "the replica's history shows its link up");

        // The meters (Prometheus, dotnet-counters) name the replica too.
        string metrics = masterApi.GetText("/metrics");
        Assert.Contains(metrics.Split('\n'), l => l.StartsWith("redis_replication_replica_lag", StringComparison.Ordinal) && l.Contains($"replica=\"{key}\""));

        // The debug package holds the same view.
        byte[] package = await masterApi.Http.GetByteArrayAsync("/api/debug/package");
        using var zip = new ZipArchive(new MemoryStream(package), ZipArchiveMode.Read);
        using var entry = zip.GetEntry("replication.json")!.Open();
        var packaged = JsonSerializer.Deserialize(entry, ContractsJson.Default.ReplicationSnapshot)!;
        Assert.Equal(key, Assert.Single(packaged.Replicas).Key);
        Assert.Contains(packaged.Syncs, s => s.Side == "master" && s.Full);
    }

    [Fact]
    public void AKilledReplicaConnectionEndsItsSyncRecordAndTheReplicaContinues()
    {
        using var pair = ReplicaPair.Start([]);
        using var m = pair.Master.Connect();
        RespAssert.Ok(m.Call("SET", "a", "1"));
        pair.WaitInSync();
        m.Call("CLIENT", "KILL", "TYPE", "replica");
        RespAssert.Ok(m.Call("SET", "b", "2"));
        pair.WaitInSync();

        using var api = new ApiClient(pair.Master.HttpPort);
        var view = api.Get("/api/replication", ContractsJson.Default.ReplicationSnapshot);
        var served = view.Syncs.Where(s => s.Side == "master").ToList();
        Assert.Equal(2, served.Count);
        Assert.Equal("killed (CLIENT KILL)", served[0].EndReason);
        Assert.True(served[0].EndedUnixMs > 0);
        Assert.False(served[1].Full);
        Assert.Equal("continued", served[1].Outcome);
        Assert.Equal(1, Assert.Single(view.Replicas).PartialSyncs);
        Assert.Equal(1, view.PartialSyncsOk);
    }

    private static Dictionary<string, string> ClientListLine(RespClient c, long id)
    {
        string line = c.Call("CLIENT", "LIST", "ID", id.ToString()).Text!.Trim();
        var fields = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var pair in line.Split(' '))
        {
            int eq = pair.IndexOf('=');
            if (eq > 0)
                fields[pair[..eq]] = pair[(eq + 1)..];
        }
        return fields;
    }
}
