using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// A replica that keeps falling out of a too small backlog, as an operator meets it: a master of
/// ours with a 16 KB backlog and a replica of ours that stops answering (frozen) while the master
/// writes more than that, twice. Each time it comes back it must fully resync; the doctor, live
/// and from the debug package, says the backlog was too small, by how much, and that the replica
/// is in a sync loop because of it.
/// </summary>
public sealed class DoctorReplicationTests
{
    [Fact]
    public void ResyncsOutOfATooSmallBacklogAreNamedWithTheSizeNeeded()
    {
        using var pair = ReplicaPair.Start(["--repl-backlog-size", "16kb"]);
        using var m = pair.Master.Connect();
        for (int round = 0; round < 2; round++)
        {
            pair.Freeze();
            // The master lets go of it (as it would at its output limit); frozen, it cannot come back yet.
            Assert.Equal(1, m.Call("CLIENT", "KILL", "TYPE", "replica").Integer);
            // About 100 KB of stream while it is away: six times what the backlog keeps.
            Pipeline.RunAll(m, Enumerable.Range(0, 100).Select(i => new[] { "SET", $"r{round}:{i}", new string('x', 1000) }));
            pair.Thaw();
            pair.WaitInSync();
        }
        using (var m2 = pair.Master.Connect())
            Assert.Equal(3, InfoFields.GetInt64(m2, "stats", "sync_full"));

        var (backlog, backlogOffline) = pair.Expect(() => LiveAndOffline.Expect(pair.Master, "repl-backlog-too-small", f => f.Evidence["resyncs"] == "2",
            what: "two full resyncs out of the backlog"));
        Assert.Equal(pair.ReplicaKey, backlog.Evidence["replicas"]);
        long missed = long.Parse(backlog.Evidence["missed_bytes_max"]);
        Assert.InRange(missed, 100_000, 200_000);
        Assert.Equal("16384", backlog.Evidence["repl_backlog_size"]);
        Assert.True(long.Parse(backlog.Evidence["suggested_repl_backlog_size"]) >= 2 * missed, backlog.Advice);
        Assert.Contains("CONFIG SET repl-backlog-size", backlog.Advice);
        Assert.Contains(" away: it asked for offset ", backlog.Seen);
        Assert.Equal(backlog.Evidence["missed_bytes_max"], backlogOffline.Evidence["missed_bytes_max"]);

        var (loop, loopOffline) = pair.Expect(() => LiveAndOffline.Expect(pair.Master, "repl-sync-loop", what: "three full syncs of one replica"));
        Assert.Equal(pair.ReplicaKey, loop.Evidence["peer"]);
        Assert.Equal("3", loop.Evidence["full_syncs"]);
        Assert.Equal("backlog-too-small", loop.Evidence["cause"]);
        Assert.Contains($"Replica {pair.ReplicaKey} fully synced 3 times", loop.Title);
        Assert.Equal(loop.Evidence["cause"], loopOffline.Evidence["cause"]);
    }

    [Fact]
    public void AReplicaThatStoppedAnsweringIsNamedAsLaggingWithItsACKsStopped()
    {
        using var pair = ReplicaPair.Start([]);
        using var m = pair.Master.Connect();
        pair.Freeze();
        Pipeline.RunAll(m, Enumerable.Range(0, 50).Select(i => new[] { "SET", "lag:" + i, new string('x', 1000) }));
        // Ten seconds until the unacknowledged bytes are old enough, thirty more for it to be sustained.
        var (lag, offline) = pair.Expect(() => LiveAndOffline.Expect(pair.Master, "replica-lag", what: "the frozen replica, 40 s behind", timeoutMs: 90_000));
        Assert.Equal(pair.ReplicaKey, lag.Evidence["replica"]);
        Assert.Equal("yes", lag.Evidence["acks_stopped"]);
        Assert.Equal("yes", lag.Evidence["ongoing"]);
        Assert.True(long.Parse(lag.Evidence["lag_bytes_max"]) >= 50_000, lag.Seen);
        Assert.True(double.Parse(lag.Evidence["lag_seconds_max"], System.Globalization.CultureInfo.InvariantCulture) >= 30, lag.Seen);
        Assert.Contains("Its ACKs stopped", lag.Seen);
        Assert.Equal(lag.Evidence["replica"], offline.Evidence["replica"]);
        pair.Thaw();
        pair.WaitInSync();
    }
}
