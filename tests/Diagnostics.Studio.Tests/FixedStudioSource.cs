using Diagnostics.Contracts;
using Diagnostics.Studio.Sources;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>
/// Fixed contract data for the studio's component tests: what a page renders is known to the
/// byte. It stands in for data, not for a component: the live source and the package source are
/// exercised against real servers in the browser tests.
/// </summary>
public sealed class FixedStudioSource : IStudioSource, IHistoryFeed
{
    public SourceDescription Description { get; init; } = new(SourceKind.Live, "fixture-host", 4242, "1.2.3+abcdef0123456789");
    public bool Live { get; init; } = true;
    public InfoReport InfoReport { get; init; } = new([]);
    public MetricHistory HistoryData { get; init; } = HistoryWindow.Empty;
    public IReadOnlyList<ThreadSnapshot> ThreadList { get; init; } = [];
    public IReadOnlyList<ClientSnapshot> ClientList { get; init; } = [];
    public IReadOnlyList<InFlightWork> InFlightList { get; init; } = [];
    public IReadOnlyList<CommandStatistics> CommandList { get; init; } = [];
    public LatencyReport? LatencyReport { get; init; }
    public IReadOnlyList<SlowLogRecord> SlowLogList { get; init; } = [];
    public IReadOnlyList<ClosedClient> ClosedClientList { get; init; } = [];
    public HotKeysReport? HotKeysData { get; init; }
    public MemoryReport? MemoryReport { get; init; }
    public IReadOnlyList<DiskIoFigures> DiskIoList { get; init; } = [];
    public MonitorReport? MonitorReport { get; init; }
    public RuntimeReport? RuntimeReport { get; init; }
    public EnvironmentReport? EnvironmentReport { get; init; }
    public IReadOnlyDictionary<string, string> ConfigValues { get; init; } = new Dictionary<string, string>();
    public DoctorReport DoctorReport { get; init; } = new(0, 15, []);
    public IServerControl? Control { get; init; }

    public IHistoryFeed? Feed => Live ? this : null;

    public event Action<MetricHistory>? Appended;

    /// <summary>Raises the feed as the sampler would after a tick.</summary>
    public void Tick(MetricHistory points) => Appended?.Invoke(points);

    public InfoReport Info() => InfoReport;
    public MetricHistory History(int seconds) => HistoryWindow.Last(HistoryData, seconds);
    public IReadOnlyList<ThreadSnapshot> Threads() => ThreadList;
    public IReadOnlyList<ClientSnapshot> Clients() => ClientList;
    public IReadOnlyList<InFlightWork> InFlight() => InFlightList;
    public IReadOnlyList<CommandStatistics> Commands() => CommandList;
    public ScriptReport? ScriptsReport { get; init; }
    public ScriptReport? Scripts() => ScriptsReport;
    public LatencyReport? Latency() => LatencyReport;
    public IReadOnlyList<SlowLogRecord> SlowLog() => SlowLogList;
    public IReadOnlyList<ClosedClient> ClosedClients() => ClosedClientList;
    public HotKeysReport? HotKeys() => HotKeysData;
    public SlowLogSummary? SlowSummaryData { get; init; }
    public SlowLogSummary? SlowSummary() => SlowSummaryData;
    public TriggerReport? TriggersReport { get; init; }
    public TriggerReport? Triggers() => TriggersReport;
    public Stream? OpenTriggeredPackage(string name) => null;
    public MemoryReport? Memory() => MemoryReport;
    public IReadOnlyList<DiskIoFigures> DiskIo() => DiskIoList;
    public RuntimeReport? Runtime() => RuntimeReport;
    public ReplicationSnapshot? ReplicationReport { get; init; }
    public ReplicationSnapshot? Replication() => ReplicationReport;
    public MonitorReport? Monitor() => MonitorReport;
    public EnvironmentReport? Environment() => EnvironmentReport;
    public IReadOnlyDictionary<string, string> Config() => ConfigValues;
    public IReadOnlyList<AclLogRecord> AclLogRecords { get; init; } = [];
    public IReadOnlyList<AclLogRecord> AclLog() => AclLogRecords;
    public DoctorReport Doctor(global::Diagnostics.Studio.Security.StudioPermissions seenBy) => DoctorReport;

    /// <summary>A history of <paramref name="seconds"/> one-second samples ending now, each series given as a function of the sample's index.</summary>
    public static MetricHistory MakeHistory(int seconds, params (string Name, Func<int, double> Value)[] series) => MakeHistory(seconds, [], series);

    /// <summary>As above, with per-thread histories (each figure a function of the sample's index).</summary>
    public static MetricHistory MakeHistory(int seconds, IReadOnlyList<(int Tid, string Name, string Role, Func<int, float> Cpu, Func<int, float> Tracked)> threads, params (string Name, Func<int, double> Value)[] series)
    {
        long end = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var times = new long[seconds];
        for (int i = 0; i < seconds; i++)
            times[i] = end - (seconds - 1 - i) * 1000L;
        var values = new Dictionary<string, double[]>(StringComparer.Ordinal);
        foreach (var (name, value) in series)
        {
            var column = new double[seconds];
            for (int i = 0; i < seconds; i++)
                column[i] = value(i);
            values[name] = column;
        }
        var threadHistories = new List<ThreadHistory>();
        foreach (var (tid, name, role, cpu, tracked) in threads)
        {
            var cpuValues = new float[seconds];
            var trackedValues = new float[seconds];
            for (int i = 0; i < seconds; i++)
            {
                cpuValues[i] = cpu(i);
                trackedValues[i] = tracked(i);
            }
            threadHistories.Add(new ThreadHistory(tid, name, role, cpuValues, trackedValues, new float[seconds], new float[seconds]));
        }
        return new MetricHistory { IntervalMillis = 1000, Times = times, Series = values, Threads = threadHistories };
    }
}
