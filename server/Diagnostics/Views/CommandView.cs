using System.Diagnostics;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.Threads;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>INFO commandstats as records: every command that was called, failed or rejected.</summary>
public static class CommandView
{
    public static CommandStatistics[] Build(DataServer server)
    {
        var specs = server.Commands.AllSpecs;
        var result = new List<CommandStatistics>();
        for (int id = 0; id < specs.Count; id++)
        {
            var (calls, ticks, failed, rejected) = ThreadCounters.Sum(id);
            if (calls == 0 && failed == 0 && rejected == 0)
                continue;
            long usec = (long)(ticks * 1_000_000.0 / Stopwatch.Frequency);
            var spec = specs[id];
            var latency = CommandLatency.Snapshot(id);
            bool tracked = latency.Calls > 0;
            result.Add(new CommandStatistics
            {
                Name = spec.FullName,
                Group = (spec.Parent ?? spec).Group,
                Calls = calls,
                Microseconds = usec,
                MicrosecondsPerCall = calls == 0 ? 0 : (double)usec / calls,
                RejectedCalls = rejected,
                FailedCalls = failed,
                AllocatedBytes = (spec.Flags & Commands.CommandFlags.Fast) == 0 ? ThreadCounters.SumAllocated(id) : null,
                P50Micros = tracked ? latency.Percentile(50) / 1000.0 : null,
                P99Micros = tracked ? latency.Percentile(99) / 1000.0 : null,
                P999Micros = tracked ? latency.Percentile(99.9) / 1000.0 : null,
            });
        }
        result.Sort((a, b) => b.Calls.CompareTo(a.Calls));
        return [.. result];
    }
}
