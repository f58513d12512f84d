using Diagnostics.Contracts;
using Diagnostics.Doctor;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The replication rules over constructed inputs: a lagging replica (sustained or a burst, ACKs
/// stopped or just slow), resyncs out of a too small backlog, and a replica in a sync loop with
/// its likely cause.
/// </summary>
public sealed class ReplicationRulesTests
{
    private const long Now = 1_795_000_000_000;
    private const string Replica = "10.0.0.5:6380";

    [Fact]
    public void ASustainedLagWithACKsComingIsSlow()
    {
        // 40 s at 12 to 51 s behind, still now; it acknowledges every second.
        var finding = Lag(120, i => i >= 80 ? 12 + (i - 80) : 0.5, ackAge: _ => 1);
        Assert.Equal(Replica, finding.Evidence["replica"]);
        Assert.Equal("yes", finding.Evidence["ongoing"]);
        Assert.Equal("no", finding.Evidence["acks_stopped"]);
        Assert.Equal("40", finding.Evidence["lagging_seconds"]);
        Assert.Equal("51", finding.Evidence["lag_seconds_max"]);
        Assert.Equal("4000000", finding.Evidence["lag_bytes_max"]);
        Assert.Contains("It is just slow", finding.Seen);
        Assert.Equal(MetricNames.ReplLagSecondsPrefix + Replica, finding.Chart);
    }

    [Fact]
    public void ALagWhoseACKsStoppedSaysSo()
    {
        var finding = Lag(100, i => i >= 50 ? i - 40 : 0, ackAge: i => i >= 50 ? i - 49 : 1);
        Assert.Equal("yes", finding.Evidence["acks_stopped"]);
        Assert.Contains("Its ACKs stopped", finding.Seen);
    }

    [Fact]
    public void ALagThatEndedIsReportedAsPast()
    {
        var finding = Lag(200, i => i is >= 50 and < 100 ? 20 : 0, ackAge: _ => 1);
        Assert.Equal("no", finding.Evidence["ongoing"]);
        Assert.Equal("50", finding.Evidence["lagging_seconds"]);
    }

    [Fact]
    public void ABurstIsNotLag()
    {
        var report = DoctorRules.Examine(LagInput(120, i => i >= 100 ? 15 : 0, _ => 1));
        Assert.DoesNotContain(report.Findings, f => f.Rule == "replica-lag");
    }

    [Fact]
    public void AResyncOutOfTheBacklogSaysHowBigItHadToBe()
    {
        var input = WithSyncs(
            Sync(Now - 120_000, FullSyncReason.NewReplica, endedAt: Now - 60_000, endReason: "connection closed"),
            Sync(Now - 50_000, FullSyncReason.NotInBacklog, requested: 1_000_001, masterOffset: 4_000_000),
            Sync(Now - 40_000, FullSyncReason.None, full: false));
        var finding = Assert.Single(DoctorRules.Examine(input).Findings, f => f.Rule == "repl-backlog-too-small");
        Assert.Equal("1", finding.Evidence["resyncs"]);
        Assert.Equal(Replica, finding.Evidence["replicas"]);
        Assert.Equal("3000000", finding.Evidence["missed_bytes_max"]);
        Assert.Equal("1048576", finding.Evidence["repl_backlog_size"]);
        Assert.Equal((6L * 1024 * 1024).ToString(), finding.Evidence["suggested_repl_backlog_size"]);
        Assert.Contains("after 10 s away", finding.Seen);
        Assert.Contains("CONFIG SET repl-backlog-size 6291456", finding.Advice);
        Assert.DoesNotContain(DoctorRules.Examine(input).Findings, f => f.Rule == "repl-sync-loop");
    }

    [Fact]
    public void ThreeFullSyncsOfOneReplicaAfterOutputLimitDropsAreALoop()
    {
        const string Drop = "output buffer limit (client-output-buffer-limit replica)";
        var input = WithSyncs(
            Sync(Now - 300_000, FullSyncReason.NewReplica, endedAt: Now - 250_000, endReason: Drop),
            Sync(Now - 240_000, FullSyncReason.IdMismatch, endedAt: Now - 150_000, endReason: Drop),
            Sync(Now - 140_000, FullSyncReason.NewReplica));
        var finding = Assert.Single(DoctorRules.Examine(input).Findings, f => f.Rule == "repl-sync-loop");
        Assert.Equal(Replica, finding.Evidence["peer"]);
        Assert.Equal("3", finding.Evidence["full_syncs"]);
        Assert.Equal("output-buffer-limit", finding.Evidence["cause"]);
        Assert.Contains("client-output-buffer-limit replica", finding.Advice);
    }

    [Fact]
    public void FullSyncsSpreadOverAnHourAreNoLoop()
    {
        var input = WithSyncs(
            Sync(Now - 3_000_000, FullSyncReason.NewReplica, endedAt: Now - 2_000_000, endReason: "connection closed"),
            Sync(Now - 1_900_000, FullSyncReason.NewReplica, endedAt: Now - 800_000, endReason: "connection closed"),
            Sync(Now - 700_000, FullSyncReason.NewReplica));
        Assert.DoesNotContain(DoctorRules.Examine(input).Findings, f => f.Rule == "repl-sync-loop");
    }

    [Fact]
    public void WithoutReplicationTheRulesSayNothing()
    {
        var report = DoctorRules.Examine(new DoctorInput { TakenUnixMs = Now });
        Assert.DoesNotContain(report.Findings, f => f.Area == "replication");
    }

    private static Finding Lag(int seconds, Func<int, double> lagSeconds, Func<int, double> ackAge)
        => Assert.Single(DoctorRules.Examine(LagInput(seconds, lagSeconds, ackAge)).Findings, f => f.Rule == "replica-lag");

    private static DoctorInput LagInput(int seconds, Func<int, double> lagSeconds, Func<int, double> ackAge)
    {
        var times = new long[seconds];
        var lag = new double[seconds];
        var bytes = new double[seconds];
        var ack = new double[seconds];
        var sent = new double[seconds];
        for (int i = 0; i < seconds; i++)
        {
            times[i] = Now - (seconds - 1 - i) * 1000L;
            lag[i] = lagSeconds(i);
            bytes[i] = lag[i] > 1 ? Math.Min(4_000_000, lag[i] * 100_000) : 0;
            ack[i] = ackAge(i);
            sent[i] = 50_000;
        }
        var history = new MetricHistory
        {
            IntervalMillis = 1000,
            Times = times,
            Series = new()
            {
                [MetricNames.ReplLagSecondsPrefix + Replica] = lag,
                [MetricNames.ReplLagBytesPrefix + Replica] = bytes,
                [MetricNames.ReplAckAgeSecondsPrefix + Replica] = ack,
                [MetricNames.ReplSentBytesPerSecondPrefix + Replica] = sent,
                [MetricNames.ReplStreamBytesPerSecond] = sent,
            },
        };
        return new DoctorInput { TakenUnixMs = Now, History = history };
    }

    private static ReplicationSync Sync(long startedAt, FullSyncReason reason, bool full = true, long requested = -1, long masterOffset = 0, long endedAt = 0, string? endReason = null) => new()
    {
        Side = "master",
        Peer = Replica,
        Full = full,
        Reason = reason,
        RequestedOffset = requested,
        MasterOffset = masterOffset,
        BacklogFirstByte = Math.Max(1, masterOffset - 1024 * 1024 + 1),
        BacklogHistoryLength = 1024 * 1024,
        BacklogSize = 1024 * 1024,
        StartedUnixMs = startedAt,
        FinishedUnixMs = startedAt + 2000,
        DurationMs = 2000,
        Outcome = full ? "online" : "continued",
        EndedUnixMs = endedAt,
        EndReason = endReason,
    };

    private static DoctorInput WithSyncs(params ReplicationSync[] syncs) => new()
    {
        TakenUnixMs = Now,
        Replication = new ReplicationSnapshot
        {
            TakenUnixMs = Now,
            Role = "master",
            ReplId = "a",
            ReplId2 = "0",
            MasterReplOffset = 4_000_000,
            SecondReplOffset = -1,
            Backlog = new BacklogFigures { Active = true, Size = 1024 * 1024 },
            Syncs = syncs,
        },
    };
}
