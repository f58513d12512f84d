using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Latency;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>LATENCY HISTOGRAM for every command with data, and every latency monitor event.</summary>
public static class LatencyView
{
    public static LatencyReport Build(DataServer server)
    {
        var specs = server.Commands.AllSpecs;
        var commands = new List<Contracts.LatencyDistribution>();
        foreach (int id in CommandLatency.CommandsWithData())
        {
            var distribution = CommandLatency.Snapshot(id);
            var buckets = new List<LatencyBucket>();
            foreach (var (micros, cumulative) in distribution.CumulativeByPowerOfTwo())
                buckets.Add(new LatencyBucket(micros, cumulative));
            commands.Add(new Contracts.LatencyDistribution(specs[id].FullName, distribution.Calls, buckets));
        }
        var events = new List<Contracts.LatencyEventSeries>();
        foreach (var snapshot in server.LatencyMonitor.Events())
        {
            var samples = new List<Contracts.LatencySample>(snapshot.Samples.Count);
            foreach (var sample in snapshot.Samples)
                samples.Add(new Contracts.LatencySample(sample.UnixSeconds, sample.Milliseconds));
            events.Add(new Contracts.LatencyEventSeries(snapshot.Name, snapshot.Latest.UnixSeconds, snapshot.Latest.Milliseconds, snapshot.MaxMilliseconds, samples));
        }
        return new LatencyReport(commands, events, server.LatencyMonitor.ThresholdMilliseconds);
    }
}
