using Bunit;
using Diagnostics.Contracts;
using Diagnostics.Studio.Charts;
using DoctorPage = Diagnostics.Studio.Pages.Doctor;
using ReplicationPage = Diagnostics.Studio.Pages.Replication;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>The Replication page with fixed data: a master with two replicas, and a replica's link.</summary>
public sealed class ReplicationComponentTests
{
    private static ReplicationSnapshot Master() => new()
    {
        TakenUnixMs = 1_795_000_000_000,
        Role = "master",
        ReplId = "8f1c0a55e2b14d0c9b3e7a6f5d4c3b2a1f0e9d8c",
        ReplId2 = "0000000000000000000000000000000000000000",
        MasterReplOffset = 5_000_000,
        SecondReplOffset = -1,
        Replicas =
        [
            new ReplicaFigures { Key = "10.0.0.5:6380", ClientId = 7, Address = "10.0.0.5", ListeningPort = 6380, State = "online", AckOffset = 5_000_000, NextOffset = 5_000_001,
                SnapshotBytesSent = 2 << 20, StreamBytesSent = 3 << 20, SnapshotMilliseconds = 1500, AttachedWithFullSync = true, FullSyncs = 1, AttachedUnixMs = 1_795_000_000_000 },
            new ReplicaFigures { Key = "10.0.0.6:6380", ClientId = 9, Address = "10.0.0.6", ListeningPort = 6380, State = "online", AckOffset = 3_000_000, NextOffset = 5_000_001,
                LagBytes = 2_000_000, LagSeconds = 42, AckAgeSeconds = 30, FullSyncs = 2, PartialSyncs = 1, AttachedUnixMs = 1_795_000_000_000 },
        ],
        Backlog = new BacklogFigures { Active = true, Size = 1 << 20, FirstByte = 3_951_425, HistoryLength = 1 << 19, HeldBytes = 2_000_000, MemoryBytes = 2 << 20 },
        FullSyncs = 3,
        PartialSyncsOk = 1,
        PartialSyncsRefused = 1,
        Syncs =
        [
            new ReplicationSync { Side = "master", Peer = "10.0.0.6:6380", Full = true, Reason = FullSyncReason.NotInBacklog, RequestedOffset = 1_000_001, MasterOffset = 4_000_000,
                BacklogSize = 1 << 20, SnapshotBytes = 2 << 20, DurationMs = 1500, StartedUnixMs = 1_794_999_000_000, Outcome = "online",
                EndedUnixMs = 1_794_999_500_000, EndReason = "output buffer limit (client-output-buffer-limit replica)" },
            new ReplicationSync { Side = "master", Peer = "10.0.0.6:6380", Full = false, StartedUnixMs = 1_794_999_600_000, Outcome = "continued" },
        ],
    };

    [Fact]
    public void AMasterShowsItsReplicasBacklogSyncsAndALagChartPerReplica()
    {
        var source = new FixedStudioSource
        {
            ReplicationReport = Master(),
            HistoryData = FixedStudioSource.MakeHistory(5,
                (MetricNames.ReplLagBytesPrefix + "10.0.0.5:6380", _ => 0), (MetricNames.ReplLagBytesPrefix + "10.0.0.6:6380", i => i * 1000),
                (MetricNames.ReplLagSecondsPrefix + "10.0.0.5:6380", _ => 0), (MetricNames.ReplLagSecondsPrefix + "10.0.0.6:6380", i => i),
                (MetricNames.ReplBacklogFillPercent, _ => 50), (MetricNames.ReplStreamBytesPerSecond, _ => 1000)),
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<ReplicationPage>(source);

        Assert.Equal(["10.0.0.5:6380", "10.0.0.6:6380"], page.FindAll("table.replicas tbody tr").Select(r => r.GetAttribute("data-replica")));
        var lagging = page.Find("table.replicas tr[data-replica='10.0.0.6:6380']");
        Assert.Contains("failed", lagging.ClassName);
        Assert.Contains("1.9 MB", lagging.TextContent); // lag bytes
        Assert.Contains("42", lagging.TextContent);
        Assert.Contains("2 / 1", lagging.TextContent);
        Assert.DoesNotContain("failed", page.Find("table.replicas tr[data-replica='10.0.0.5:6380']").ClassName ?? "");
        Assert.Contains("512 KB (50% full)", page.Find(".tiles.backlog").TextContent);
        Assert.Contains("8f1c0a55e2b14d0c9b3e7a6f5d4c3b2a1f0e9d8c", page.Markup);

        // Newest first: the partial continuation, then the full sync out of the backlog and how its connection ended.
        var syncs = page.FindAll("table.syncs tbody tr");
        Assert.Equal(2, syncs.Count);
        Assert.Contains("partial", syncs[0].TextContent);
        Assert.Contains("offset 1000001 left the backlog (2.9 MB behind, backlog 1 MB)", syncs[1].TextContent);
        Assert.Contains("output buffer limit", syncs[1].TextContent);

        var charts = page.FindComponents<TimeChart>();
        var lagChart = charts.Single(c => c.Instance.Title == "Replica lag (bytes)");
        Assert.Equal(["10.0.0.5:6380", "10.0.0.6:6380"], lagChart.Instance.Series.Select(s => s.Label));
        Assert.Contains(charts, c => c.Instance.Title == "Replica lag (seconds)" && c.Instance.Unit == ChartUnit.Seconds);
        Assert.Contains(charts, c => c.Instance.Title == "Backlog fill");
        Assert.DoesNotContain(charts, c => c.Instance.Title == "Link up");
    }

    [Fact]
    public void AReplicaShowsItsLink()
    {
        var source = new FixedStudioSource
        {
            ReplicationReport = Master() with
            {
                Role = "replica",
                Replicas = [],
                Syncs = [new ReplicationSync { Side = "replica", Peer = "10.0.0.1:6379", Full = true, SnapshotBytes = 1 << 20, KeysLoaded = 10, DurationMs = 800, StartedUnixMs = 1_794_999_000_000, Outcome = "loaded" }],
                Link = new MasterLinkFigures { Host = "10.0.0.1", Port = 6379, State = "connected", ReadOffset = 5_000_100, AppliedOffset = 5_000_000, LagBytes = 100, LastIoSecondsAgo = 1, CommandsApplied = 1234 },
            },
            HistoryData = FixedStudioSource.MakeHistory(5, (MetricNames.ReplLinkUp, _ => 1), (MetricNames.ReplLinkLagBytes, _ => 100)),
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<ReplicationPage>(source);

        Assert.Equal("10.0.0.1:6379", page.Find(".master-address").TextContent);
        var link = page.Find(".tiles.link").TextContent;
        Assert.Contains("connected", link);
        Assert.Contains("100 B", link);
        Assert.Contains("No replica is attached.", page.Markup);
        Assert.Contains("with master", page.Find("table.syncs tbody tr").TextContent);
        Assert.Contains(page.FindComponents<TimeChart>(), c => c.Instance.Title == "Link up");
    }

    [Fact]
    public void AFindingsChartOfAReplicasSeriesReadsInItsFamilysUnit()
    {
        Assert.Equal(ChartUnit.Seconds, DoctorPage.UnitOf(MetricNames.ReplLagSecondsPrefix + "10.0.0.5:6380"));
        Assert.Equal(ChartUnit.Bytes, DoctorPage.UnitOf(MetricNames.ReplLagBytesPrefix + "10.0.0.5:6380"));
        Assert.Equal(ChartUnit.BytesPerSecond, DoctorPage.UnitOf(MetricNames.ReplSentBytesPerSecondPrefix + "10.0.0.5:6380"));
        Assert.Equal(ChartUnit.Percent, DoctorPage.UnitOf(MetricNames.ReplBacklogFillPercent));
        Assert.Equal(ChartUnit.OpsPerSecond, DoctorPage.UnitOf(MetricNames.OpsPerSecondGroupPrefix + "string"));
    }

    [Fact]
    public void APackageWithoutReplicationSaysSo()
    {
        var source = new FixedStudioSource { Live = false };
        using var context = StudioRendering.Context(source);
        var page = context.Render<ReplicationPage>(source);
        Assert.Contains("no replication figures", page.Markup);
    }
}
