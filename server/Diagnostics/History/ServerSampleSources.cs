using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.Info;
using Diagnostics.Server.Diagnostics.Kernel;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.SlowCommands;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Diagnostics.History;

/// <summary>
/// The server's own history sources: commands, keyspace, clients and network, CPU, memory, GC
/// and thread pool, disk. Each is a few counter reads once a second.
/// </summary>
public static class ServerSampleSources
{
    public static void Register(Sampler sampler, DataServer server)
    {
        sampler.AddSource(CommandSource(server));
        sampler.AddSource(writer =>
        {
            var stats = server.Stats;
            var (hits, misses) = ThreadCounters.KeyspaceTotals();
            writer.Rate(MetricNames.KeyspaceHitsPerSecond, hits);
            writer.Rate(MetricNames.KeyspaceMissesPerSecond, misses);
            writer.Gauge(MetricNames.ConnectedClients, server.Clients.Count);
            long largestOutput = 0;
            foreach (var client in server.Clients.Snapshot())
                largestOutput = Math.Max(largestOutput, client.OutputBufferBytes);
            writer.Gauge(MetricNames.LargestOutputBufferBytes, largestOutput);
            writer.Rate(MetricNames.RejectedConnectionsPerSecond, stats.RejectedConnections);
            writer.Rate(MetricNames.AuthFailuresPerSecond, stats.AuthFailures);
            writer.Rate(MetricNames.HttpAuthFailuresPerSecond, stats.HttpAuthFailures);
            writer.Rate(MetricNames.AclDeniedPerSecond, stats.AclDenied);
            writer.Rate(MetricNames.NetInputBytesPerSecond, stats.NetInputBytes);
            writer.Rate(MetricNames.NetOutputBytesPerSecond, stats.NetOutputBytes);
            writer.Rate(MetricNames.ExpiredKeysPerSecond, server.Keyspace.ExpiredKeys);
            writer.Rate(MetricNames.EvictedKeysPerSecond, server.Keyspace.Eviction.EvictedKeys);
            writer.Rate(MetricNames.OomRejectionsPerSecond, ThreadCounters.ErrorTotals().GetValueOrDefault("OOM"));
            writer.Rate(MetricNames.TooBusyRefusalsPerSecond, server.Keyspace.Waits.Refused);
            writer.Gauge(MetricNames.ShardWaitersPeak, server.Keyspace.Waits.TakePeak());
            writer.Rate(MetricNames.SlowCommandsPerSecond, server.SlowLog.TotalLogged);
            var (deliveries, acks) = ThreadCounters.StreamTotals();
            writer.Rate(MetricNames.StreamDeliveriesPerSecond, deliveries);
            writer.Rate(MetricNames.StreamAcksPerSecond, acks);
        });
        sampler.AddSource(writer =>
        {
            var tls = server.Tls;
            if (tls.Current is not null)
            {
                writer.Rate(MetricNames.TlsHandshakesPerSecond, tls.Stats.Handshakes);
                writer.Rate(MetricNames.TlsHandshakeFailuresPerSecond, tls.Stats.TotalFailures);
                writer.Gauge(MetricNames.TlsHandshakeMaxMicros, tls.Stats.TakeMaxHandshakeMicros());
            }
            // The certificate that expires first, RESP's or the HTTPS listener's.
            long? seconds = null;
            foreach (var context in (ReadOnlySpan<Tls.TlsContext>)[tls, server.HttpTls])
                if (context.Current is { } current)
                    seconds = Math.Min(seconds ?? long.MaxValue, current.SecondsToExpiry(DateTime.UtcNow));
            if (seconds is { } left)
                writer.Gauge(MetricNames.TlsCertExpiresInDays, left / 86_400.0);
        });
        sampler.AddSource(LatencySource());
        sampler.AddSource(CpuSource());
        sampler.AddSource(writer =>
        {
            writer.Gauge(MetricNames.TrackedBytes, TrackedAllocator.TotalBytes);
            writer.Gauge(MetricNames.ManagedHeapBytes, GC.GetTotalMemory(false));
            writer.Gauge(MetricNames.ResidentBytes, ProcFs.ResidentBytes());
            writer.Gauge(MetricNames.MaxMemoryBytes, server.Keyspace.Eviction.MaxMemory);
            writer.Rate(MetricNames.GcPauseMillisPerSecond, GC.GetTotalPauseDuration().TotalMilliseconds);
            writer.Rate(MetricNames.GcCollectionsPerSecond, GC.CollectionCount(0));
            writer.Rate(MetricNames.Gen2CollectionsPerSecond, GC.CollectionCount(2));
            writer.Rate(MetricNames.ManagedAllocatedBytesPerSecond, GC.GetTotalAllocatedBytes(false));
            writer.Gauge(MetricNames.ThreadPoolQueueLength, ThreadPool.PendingWorkItemCount);
            writer.Gauge(MetricNames.ThreadPoolThreads, ThreadPool.ThreadCount);
        });
        sampler.AddSource(DiskSource());
        sampler.AddSource(server.Monitor.WriteFigures);
        sampler.AddSource(new ReplicationSampleSource(server).Write);
    }

    /// <summary>Ops/s in all and by command group ("string", "generic"...), summed over every thread's counters.</summary>
    private static Action<SampleWriter> CommandSource(DataServer server)
    {
        var specs = server.Commands.AllSpecs;
        var groupNames = new List<string>();
        var groupOf = new int[specs.Count];
        for (int id = 0; id < specs.Count; id++)
        {
            string group = (specs[id].Parent ?? specs[id]).Group;
            int index = groupNames.IndexOf(group);
            if (index < 0)
            {
                index = groupNames.Count;
                groupNames.Add(group);
            }
            groupOf[id] = index;
        }
        var seriesNames = new string[groupNames.Count];
        for (int g = 0; g < seriesNames.Length; g++)
            seriesNames[g] = MetricNames.OpsPerSecondGroupPrefix + groupNames[g];
        var byGroup = new long[groupNames.Count];
        return writer =>
        {
            Array.Clear(byGroup);
            foreach (var row in ThreadCounters.All())
            {
                long[] calls = row.Calls;
                int n = Math.Min(calls.Length, groupOf.Length);
                for (int id = 0; id < n; id++)
                    byGroup[groupOf[id]] += Volatile.Read(ref calls[id]);
            }
            long total = 0;
            for (int g = 0; g < byGroup.Length; g++)
            {
                total += byGroup[g];
                writer.Rate(seriesNames[g], byGroup[g]);
            }
            writer.Rate(MetricNames.OpsPerSecond, total);
        };
    }

    /// <summary>
    /// p50, p99 and p99.9 of every command run in the interval: all commands' histograms summed,
    /// minus the previous sample's sum, so each point describes that second alone.
    /// </summary>
    private static Action<SampleWriter> LatencySource()
    {
        var previous = new long[LatencyBuckets.Count];
        var current = new long[LatencyBuckets.Count];
        return writer =>
        {
            Array.Clear(current);
            foreach (int id in CommandLatency.CommandsWithData())
            {
                long[] counts = CommandLatency.Snapshot(id).Counts;
                for (int i = 0; i < current.Length; i++)
                    current[i] += counts[i];
            }
            var interval = new long[current.Length];
            for (int i = 0; i < interval.Length; i++)
                interval[i] = Math.Max(0, current[i] - previous[i]);
            Array.Copy(current, previous, current.Length);
            var distribution = new Latency.LatencyDistribution(interval);
            writer.Gauge(MetricNames.LatencyP50Micros, distribution.Percentile(50) / 1000.0);
            writer.Gauge(MetricNames.LatencyP99Micros, distribution.Percentile(99) / 1000.0);
            writer.Gauge(MetricNames.LatencyP999Micros, distribution.Percentile(99.9) / 1000.0);
        };
    }

    /// <summary>Process CPU as a share of one core (top's convention) and the machine's as a share of all of them.</summary>
    private static Action<SampleWriter> CpuSource()
    {
        return writer =>
        {
            var usage = Environment.CpuUsage;
            double elapsed = writer.ElapsedSeconds;
            double user = writer.Delta("cpu.user", usage.UserTime.TotalSeconds);
            double system = writer.Delta("cpu.system", usage.PrivilegedTime.TotalSeconds);
            writer.Gauge(MetricNames.CpuUserPercent, elapsed > 0 ? user * 100 / elapsed : 0);
            writer.Gauge(MetricNames.CpuSystemPercent, elapsed > 0 ? system * 100 / elapsed : 0);
            writer.Gauge(MetricNames.CpuProcessPercent, elapsed > 0 ? (user + system) * 100 / elapsed : 0);
            if (ProcFs.TryReadMachineCpu(out long busy, out long total))
            {
                double busyDelta = writer.Delta("cpu.machine.busy", busy);
                double totalDelta = writer.Delta("cpu.machine.total", total);
                writer.Gauge(MetricNames.CpuMachinePercent, totalDelta > 0 ? busyDelta * 100 / totalDelta : 0);
            }
            writer.Gauge(MetricNames.ProcessThreads, ProcFs.Available ? ProcFs.ThreadIds().Count : 0);
        };
    }

    /// <summary>
    /// Disk bytes read and written, in all and by purpose (the purposes that move bytes: AOF
    /// appends, rewrite, load, manifest), fsyncs, and the slowest fsync of the interval.
    /// </summary>
    private static Action<SampleWriter> DiskSource()
    {
        var purposeSeries = new Dictionary<DiskIoPurpose, string>();
        foreach (var purpose in (DiskIoPurpose[])[DiskIoPurpose.AofWrite, DiskIoPurpose.RewriteRead, DiskIoPurpose.RewriteWrite, DiskIoPurpose.LoadRead, DiskIoPurpose.Manifest, DiskIoPurpose.SnapshotWrite, DiskIoPurpose.SnapshotRead])
            purposeSeries[purpose] = MetricNames.DiskBytesPerSecondPurposePrefix + DiskIoInfo.Name(purpose);
        return writer =>
        {
            long read = 0, written = 0;
            var totals = DiskIo.Totals();
            foreach (var (purpose, stats) in totals)
            {
                if (purposeSeries.TryGetValue(purpose, out string? series))
                    writer.Rate(series, stats.Bytes);
                if (DiskIo.IsRead(purpose))
                    read += stats.Bytes;
                else
                    written += stats.Bytes;
            }
            long fsyncs = totals[DiskIoPurpose.AofFsync].Count;
            writer.Rate(MetricNames.DiskReadBytesPerSecond, read);
            writer.Rate(MetricNames.DiskWriteBytesPerSecond, written);
            writer.Rate(MetricNames.FsyncsPerSecond, fsyncs);
            // Measured, not a histogram bucket's upper bound (which can be half again the real worst).
            writer.Gauge(MetricNames.FsyncMaxMicros, DiskIo.TakeIntervalMax(DiskIoPurpose.AofFsync));
        };
    }
}
