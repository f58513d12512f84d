using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The stream diagnostics on a real server: a consumer group reading without acknowledging is
/// reported live and from a debug package, named with its pending count, consumers and oldest
/// entry from the keyspace walk; the keyspace report lists groups by pending entries; a group
/// that acknowledges what it reads is not reported.
/// </summary>
public sealed class DoctorStreamTests
{
    [Fact]
    public void GroupThatNeverAcknowledgesIsNamed()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        // A healthy group first: it reads and acknowledges everything.
        Pipeline.RunAll(c, Enumerable.Range(1, 3000).Select(i => new[] { "XADD", "jobs", $"{i}-0", "task", "t" + i }));
        RespAssert.Ok(c.Call("XGROUP", "CREATE", "jobs", "healthy", "0"));
        RespAssert.Ok(c.Call("XGROUP", "CREATE", "jobs", "forgetful", "0"));
        var read = c.Call("XREADGROUP", "GROUP", "healthy", "h1", "COUNT", "1000", "STREAMS", "jobs", ">").Array[0].Array[1].Array;
        RespAssert.Integer(1000, c.Call(["XACK", "jobs", "healthy", .. read.Select(entry => entry.Array[0].Text!)]));
        // The sampler counts once a second: a sample taken between the read and the acks shows
        // 1,000 deliveries and no ack until the next one, which the rule rightly reports. So the
        // doctor is asked once a sample taken after the acks is in the history.
        long ackedAtMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        using (var history = new ApiClient(server.HttpPort))
            Poll.Until(() => history.Get("/api/history?seconds=60", ContractsJson.Default.MetricHistory).Times is { Length: > 0 } times && times[^1] > ackedAtMs,
                "a history sample taken after the healthy group's acks");
        DoctorProbe.AssertAbsent(server, "stream-pending");
        // Then one that reads everything and acknowledges almost nothing.
        Assert.Equal(2500, c.Call("XREADGROUP", "GROUP", "forgetful", "w1", "COUNT", "2500", "STREAMS", "jobs", ">").Array[0].Array[1].Array.Count);
        Assert.Equal(500, c.Call("XREADGROUP", "GROUP", "forgetful", "w2", "STREAMS", "jobs", ">").Array[0].Array[1].Array.Count);
        RespAssert.Integer(2, c.Call("XACK", "jobs", "forgetful", "1-0", "2-0"));

        // Until the history holds every delivery (the sampler counts once a second).
        var (live, offline) = LiveAndOffline.Expect(server, "stream-pending",
            until: f => f.Evidence.ContainsKey("groups") && f.Evidence["delivered_last_5_min"] == "4000",
            what: "the forgetful group named, all 4,000 deliveries counted");
        Assert.Equal("streams", live.Area);
        Assert.Equal(FindingSeverity.Warning, live.Severity);
        Assert.Equal(MetricNames.StreamDeliveriesPerSecond, live.Chart);
        Assert.Contains("4,000 stream entries were delivered", live.Seen);
        Assert.Contains("1,002 acknowledged", live.Seen);
        Assert.StartsWith("group 'forgetful' of stream 'jobs' (db 0): 2,998 pending across 2 consumers", live.Evidence["groups"]);
        Assert.DoesNotContain("healthy", live.Evidence["groups"]);
        // Offline, from the package's own walk a moment later: the same group and count (idle times move on).
        Assert.StartsWith("group 'forgetful' of stream 'jobs' (db 0): 2,998 pending across 2 consumers", offline.Evidence["groups"]);

        // The keyspace report lists the group with its figures (the entries' IDs date from 1970).
        using var api = new ApiClient(server.HttpPort);
        var report = api.Get("/api/keyspace", ContractsJson.Default.KeyspaceReport);
        var group = Assert.Single(report.StreamGroups);
        Assert.Equal(("jobs", "forgetful", 2L, 2998L, "3000-0"), (group.Key, group.Group, group.Consumers, group.Pending, group.LastDeliveredId));
        Assert.True(group.OldestPendingAgeMs > 1_000_000_000_000L, $"oldest pending age {group.OldestPendingAgeMs} ms");
        Assert.InRange(group.OldestPendingIdleMs, 0, 60_000);
        Assert.Equal(0L, group.Lag);
        var streams = Assert.Single(report.Types, t => t.Type == "stream");
        Assert.Equal((1L, 3000L), (streams.Keys, streams.Elements));
    }
}
