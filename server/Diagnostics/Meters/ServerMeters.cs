using System.Diagnostics;
using System.Diagnostics.Metrics;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Server.Diagnostics.Info;
using Diagnostics.Server.Diagnostics.Kernel;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.Package;
using Diagnostics.Server.Diagnostics.SlowCommands;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Diagnostics.Meters;

/// <summary>
/// The server's figures as System.Diagnostics.Metrics instruments, so dotnet-counters,
/// OpenTelemetry and the Prometheus endpoint see them. All are observable: they read the same
/// counters INFO reads when someone collects, and cost nothing in between. Names follow the
/// Prometheus redis_exporter's (redis_commands_total{cmd}, redis_memory_used_bytes...) once
/// dots become underscores and unit and _total suffixes are added, so existing Redis dashboards
/// work; this server's own figures are under "diagnostics.".
/// </summary>
public sealed class ServerMeters : IDisposable
{
    public const string MeterName = "Diagnostics.Server";

    private readonly Meter _meter;

    public ServerMeters(DataServer server)
    {
        _meter = new Meter(MeterName, Package.DebugPackageBuilder.ProductVersion);
        _meter.CreateObservableCounter("redis.commands", () => PerCommand(server, calls: true), description: "Calls per command");
        _meter.CreateObservableCounter("redis.commands.duration", () => PerCommandSeconds(server), unit: "s", description: "Time spent executing each command");
        _meter.CreateObservableCounter("redis.commands.rejected_calls", () => PerCommand(server, calls: false), description: "Calls refused before running (arity, auth, OOM, MISCONF)");
        _meter.CreateObservableCounter("redis.commands.processed", InstantaneousMetrics.TotalCommands, description: "Commands executed");
        _meter.CreateObservableGauge("redis.latency_percentiles_usec", () => LatencyPercentiles(server), description: "Command latency percentiles in microseconds (latencystats)");
        _meter.CreateObservableCounter("redis.errors", ErrorsByCode, description: "Error replies by error code");
        _meter.CreateObservableGauge("redis.connected_clients", () => server.Clients.Count, description: "Connected clients");
        _meter.CreateObservableGauge("redis.max_clients", () => server.Config.MaxClients, description: "maxclients");
        _meter.CreateObservableCounter("redis.connections.received", () => server.Stats.ConnectionsReceived, description: "Connections accepted");
        _meter.CreateObservableCounter("redis.rejected_connections", () => server.Stats.RejectedConnections, description: "Connections refused (maxclients, protected mode)");
        _meter.CreateObservableCounter("diagnostics.auth.failures", () => AuthFailures(server), description: "Failed authentications by listener (resp: AUTH, http: API key, bearer or login form)");
        _meter.CreateObservableCounter("diagnostics.acl.denied", () => AclDenied(server), description: "Calls the ACL refused, by what was refused (command, key, channel); the studio's and API's refusals count as commands");
        _meter.CreateObservableCounter("diagnostics.http.auth_rate_limited", () => server.Stats.HttpAuthRateLimited, description: "HTTP requests refused (429) because their address failed to authenticate too often");
        _meter.CreateObservableCounter("diagnostics.tls.handshakes", () => server.Tls.Stats.Handshakes, description: "TLS handshakes completed");
        _meter.CreateObservableCounter("diagnostics.tls.handshake.duration", () => server.Tls.Stats.HandshakeMicros / 1e6, unit: "s", description: "Time spent in completed TLS handshakes");
        _meter.CreateObservableCounter("diagnostics.tls.handshake_failures", () => TlsFailures(server), description: "TLS handshakes that failed, by reason (plaintext, timeout, closed, client_certificate, protocol)");
        _meter.CreateObservableGauge("diagnostics.tls.connected_clients", () => server.Tls.Stats.Connected, description: "Clients connected over TLS");
        _meter.CreateObservableGauge("diagnostics.tls.certificate.expiry", () => TlsExpiry(server), unit: "s", description: "Seconds until each TLS certificate in use expires, by listener (resp, http; absent while TLS is off)");
        _meter.CreateObservableCounter("redis.net.input", () => server.Stats.NetInputBytes, unit: "By", description: "Bytes read from clients");
        _meter.CreateObservableCounter("redis.net.output", () => server.Stats.NetOutputBytes, unit: "By", description: "Bytes written to clients");
        _meter.CreateObservableCounter("redis.keyspace.hits", () => ThreadCounters.KeyspaceTotals().Hits, description: "Successful key lookups");
        _meter.CreateObservableCounter("redis.keyspace.misses", () => ThreadCounters.KeyspaceTotals().Misses, description: "Failed key lookups");
        _meter.CreateObservableCounter("redis.evicted_keys", () => server.Keyspace.Eviction.EvictedKeys, description: "Keys evicted under maxmemory");
        _meter.CreateObservableCounter("redis.expired_keys", () => server.Keyspace.ExpiredKeys, description: "Keys expired");
        _meter.CreateObservableGauge("redis.db.keys", () => DatabaseFigures(server, expiring: false), description: "Keys per database");
        _meter.CreateObservableGauge("redis.db.keys_expiring", () => DatabaseFigures(server, expiring: true), description: "Keys with a time to live per database");
        _meter.CreateObservableGauge("redis.memory.used", () => TrackedAllocator.TotalBytes, unit: "By", description: "Tracked native memory (used_memory)");
        _meter.CreateObservableGauge("redis.memory.used_peak", () => TrackedAllocator.PeakBytes, unit: "By", description: "Peak tracked native memory");
        _meter.CreateObservableGauge("redis.memory.used_rss", ProcFs.ResidentBytes, unit: "By", description: "Resident set size");
        _meter.CreateObservableGauge("redis.memory.max", () => server.Keyspace.Eviction.MaxMemory, unit: "By", description: "maxmemory (0: no limit)");
        _meter.CreateObservableCounter("redis.cpu.user", () => Environment.CpuUsage.UserTime.TotalSeconds, unit: "s", description: "CPU time in user mode");
        _meter.CreateObservableCounter("redis.cpu.sys", () => Environment.CpuUsage.PrivilegedTime.TotalSeconds, unit: "s", description: "CPU time in kernel mode");
        _meter.CreateObservableGauge("redis.uptime", () => (Environment.TickCount64 - server.Stats.StartedTicks) / 1000.0, unit: "s", description: "Seconds since start");
        _meter.CreateObservableGauge("redis.slowlog.length", () => server.SlowLog.Length, description: "Entries in the slow log");
        _meter.CreateObservableGauge("redis.aof.enabled", () => server.Aof.Enabled ? 1 : 0, description: "1 while the append-only file is on");
        _meter.CreateObservableGauge("redis.aof.buffer", () => server.Aof.BufferMemory, unit: "By", description: "AOF bytes not yet written");

        _meter.CreateObservableGauge("redis.replication.offset", () => server.Replication.Ids.MasterReplOffset, unit: "By", description: "Bytes of replication stream this server has (master_repl_offset)");
        _meter.CreateObservableGauge("redis.replication.backlog.history", () => server.ReplicationMaster.Backlog.History.HistoryLength, unit: "By", description: "Stream kept for partial resyncs (repl_backlog_histlen)");
        _meter.CreateObservableGauge("redis.replication.replica.lag", () => Replicas(server, ackAge: false), unit: "By", description: "Stream not acknowledged, by replica (ip:port)");
        _meter.CreateObservableGauge("redis.replication.replica.ack_age", () => Replicas(server, ackAge: true), unit: "s", description: "Seconds since the last ACK, by replica (ip:port)");

        _meter.CreateObservableGauge("diagnostics.thread.tracked_memory", ThreadMemory, unit: "By", description: "Tracked native memory by allocating thread");
        _meter.CreateObservableCounter("diagnostics.thread.net", ThreadNetwork, unit: "By", description: "Client bytes by thread and direction");
        _meter.CreateObservableCounter("diagnostics.disk.io", () => DiskFigures(bytes: true), unit: "By", description: "Disk bytes by purpose (aof_write, aof_fsync...)");
        _meter.CreateObservableCounter("diagnostics.disk.operations", () => DiskFigures(bytes: false), description: "Disk operations by purpose");
        _meter.CreateObservableCounter("diagnostics.disk.errors", DiskErrors, description: "Failed disk operations by purpose");
        _meter.CreateObservableGauge("diagnostics.sampler.duration", () => server.Sampler.LastSampleMicros / 1e6, unit: "s", description: "Time the last 1 Hz sample took");
        _meter.CreateObservableGauge("diagnostics.history.size", () => server.Sampler.History.ApproximateBytes, unit: "By", description: "Managed memory held by the metric history");
    }

    private static IEnumerable<Measurement<double>> Replicas(DataServer server, bool ackAge)
    {
        long offset = server.Replication.Ids.MasterReplOffset;
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        foreach (var feed in server.ReplicationMaster.Backlog.Feeds)
        {
            double value = ackAge ? Math.Max(0, now - feed.AckUnixMs) / 1000.0 : Math.Max(0, offset - Math.Max(feed.AckOffset, feed.AttachOffset));
            yield return new Measurement<double>(value, new KeyValuePair<string, object?>("replica", feed.Key));
        }
    }

    private static IEnumerable<Measurement<long>> PerCommand(DataServer server, bool calls)
    {
        var specs = server.Commands.AllSpecs;
        for (int id = 0; id < specs.Count; id++)
        {
            var (count, _, _, rejected) = ThreadCounters.Sum(id);
            long value = calls ? count : rejected;
            if (value > 0)
                yield return new Measurement<long>(value, new KeyValuePair<string, object?>("cmd", specs[id].FullName));
        }
    }

    private static IEnumerable<Measurement<double>> PerCommandSeconds(DataServer server)
    {
        var specs = server.Commands.AllSpecs;
        for (int id = 0; id < specs.Count; id++)
        {
            var (calls, ticks, _, _) = ThreadCounters.Sum(id);
            if (calls > 0)
                yield return new Measurement<double>((double)ticks / Stopwatch.Frequency, new KeyValuePair<string, object?>("cmd", specs[id].FullName));
        }
    }

    private static IEnumerable<Measurement<double>> LatencyPercentiles(DataServer server)
    {
        var specs = server.Commands.AllSpecs;
        foreach (int id in CommandLatency.CommandsWithData())
        {
            var distribution = CommandLatency.Snapshot(id);
            var command = new KeyValuePair<string, object?>("cmd", specs[id].FullName);
            foreach (var (label, percentile) in new[] { ("0.5", 50.0), ("0.99", 99.0), ("0.999", 99.9) })
                yield return new Measurement<double>(distribution.Percentile(percentile) / 1000.0, command, new KeyValuePair<string, object?>("quantile", label));
        }
    }

    private static IEnumerable<Measurement<long>> TlsFailures(DataServer server)
    {
        for (int i = 0; i < Tls.TlsStats.FailureNames.Length; i++)
            yield return new Measurement<long>(server.Tls.Stats.Failures((Tls.TlsHandshakeFailure)i), new KeyValuePair<string, object?>("reason", Tls.TlsStats.FailureNames[i]));
    }

    private static IEnumerable<Measurement<long>> TlsExpiry(DataServer server)
    {
        foreach (var tls in (Tls.TlsContext[])[server.Tls, server.HttpTls])
            if (tls.Current is { } current)
                yield return new Measurement<long>(current.SecondsToExpiry(DateTime.UtcNow),
                    new KeyValuePair<string, object?>("listener", tls.Name.ToLowerInvariant()), new KeyValuePair<string, object?>("subject", current.Subject));
    }

    private static IEnumerable<Measurement<long>> AclDenied(DataServer server)
    {
        yield return new Measurement<long>(server.Stats.AclDeniedCommands, new KeyValuePair<string, object?>("reason", "command"));
        yield return new Measurement<long>(server.Stats.AclDeniedKeys, new KeyValuePair<string, object?>("reason", "key"));
        yield return new Measurement<long>(server.Stats.AclDeniedChannels, new KeyValuePair<string, object?>("reason", "channel"));
    }

    private static IEnumerable<Measurement<long>> AuthFailures(DataServer server)
    {
        yield return new Measurement<long>(server.Stats.AuthFailures, new KeyValuePair<string, object?>("listener", "resp"));
        yield return new Measurement<long>(server.Stats.HttpAuthFailures, new KeyValuePair<string, object?>("listener", "http"));
    }

    private static IEnumerable<Measurement<long>> ErrorsByCode()
    {
        foreach (var (code, count) in ThreadCounters.ErrorTotals())
            yield return new Measurement<long>(count, new KeyValuePair<string, object?>("err", code));
    }

    private static IEnumerable<Measurement<long>> DatabaseFigures(DataServer server, bool expiring)
    {
        for (int db = 0; db < server.Keyspace.DatabaseCount; db++)
        {
            long keys = 0, volatileKeys = 0;
            foreach (var shard in server.Keyspace.Shards)
            {
                keys += shard.Databases[db].Count;
                volatileKeys += shard.Databases[db].ExpiresCount;
            }
            if (keys > 0)
                yield return new Measurement<long>(expiring ? volatileKeys : keys, new KeyValuePair<string, object?>("db", "db" + db));
        }
    }

    private static IEnumerable<Measurement<long>> ThreadMemory()
    {
        foreach (var record in ThreadMemoryRegistry.Snapshot())
        {
            var (name, tid) = ThreadTags(record.Name, record.OsThreadId);
            yield return new Measurement<long>(record.LiveBytes, name, tid);
        }
    }

    private static IEnumerable<Measurement<long>> ThreadNetwork()
    {
        foreach (var row in ThreadCounters.All())
        {
            long input = Volatile.Read(ref row.NetInputBytes), output = Volatile.Read(ref row.NetOutputBytes);
            if (input == 0 && output == 0)
                continue;
            var (name, tid) = ThreadTags(row.Name, row.OsThreadId);
            yield return new Measurement<long>(input, name, tid, new KeyValuePair<string, object?>("direction", "in"));
            yield return new Measurement<long>(output, name, tid, new KeyValuePair<string, object?>("direction", "out"));
        }
    }

    private static (KeyValuePair<string, object?> Name, KeyValuePair<string, object?> Tid) ThreadTags(string name, int tid) =>
        (new("thread", name), new("tid", tid.ToString(System.Globalization.CultureInfo.InvariantCulture)));

    private static IEnumerable<Measurement<long>> DiskFigures(bool bytes)
    {
        foreach (var (purpose, stats) in DiskIo.Totals())
            yield return new Measurement<long>(bytes ? stats.Bytes : stats.Count, new KeyValuePair<string, object?>("purpose", DiskIoInfo.Name(purpose)));
    }

    private static IEnumerable<Measurement<long>> DiskErrors()
    {
        foreach (var (purpose, stats) in DiskIo.Totals())
            yield return new Measurement<long>(stats.Errors, new KeyValuePair<string, object?>("purpose", DiskIoInfo.Name(purpose)));
    }

    public void Dispose() => _meter.Dispose();
}
