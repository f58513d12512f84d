using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor;

/// <summary>
/// Everything the rules may look at, as contract types: the live server builds it from its views,
/// a debug package from its files. A part a package lacks is empty, and rules that need it say
/// nothing rather than guess.
/// </summary>
public sealed record DoctorInput
{
    public required long TakenUnixMs { get; init; }
    public InfoReport Info { get; init; } = new([]);
    public MetricHistory? History { get; init; }
    public IReadOnlyList<ThreadSnapshot> Threads { get; init; } = [];
    public IReadOnlyList<ClientSnapshot> Clients { get; init; } = [];
    /// <summary>The last clients disconnected for a limit, newest first.</summary>
    public IReadOnlyList<ClosedClient> ClosedClients { get; init; } = [];
    public IReadOnlyList<CommandStatistics> Commands { get; init; } = [];
    /// <summary>The Lua scripts and functions with their stats; null when the package predates them.</summary>
    public ScriptReport? Scripts { get; init; }
    public LatencyReport? Latency { get; init; }
    public IReadOnlyList<SlowLogRecord> SlowLog { get; init; } = [];
    /// <summary>Every slow call by command and client; null when the package predates it (the rules then count the log).</summary>
    public SlowLogSummary? SlowSummary { get; init; }
    public MemoryReport? Memory { get; init; }
    /// <summary>ACL LOG's entries, newest first (empty when the package predates them).</summary>
    public IReadOnlyList<AclLogRecord> AclLog { get; init; } = [];
    /// <summary>The sampled hot keys; null when sampling is off or the package predates it.</summary>
    public HotKeysReport? HotKeys { get; init; }
    /// <summary>The package triggers and the packages they took; null when the package predates them.</summary>
    public TriggerReport? Triggers { get; init; }
    /// <summary>The keyspace walk (types, biggest keys); live, only taken when a rule needs it (memory near maxmemory).</summary>
    public KeyspaceReport? Keyspace { get; init; }
    public RuntimeReport? Runtime { get; init; }
    public EnvironmentReport? Environment { get; init; }
    public IReadOnlyList<DiskIoFigures> DiskIo { get; init; } = [];
    /// <summary>Role, replicas, backlog and recent syncs; null when the package predates them.</summary>
    public ReplicationSnapshot? Replication { get; init; }
    /// <summary>What the elevated monitor reported; null when no monitor ever attached (or the package predates it).</summary>
    public MonitorReport? Monitor { get; init; }
    public IReadOnlyDictionary<string, string> Config { get; init; } = new Dictionary<string, string>();
    /// <summary>What every thread runs now, longest first (threads blocked on shards say so).</summary>
    public IReadOnlyList<InFlightWork> InFlight { get; init; } = [];
    /// <summary>The pool's busy threads grouped by stack; only from a package (capturing stacks live costs too much to do per look), else null.</summary>
    public IReadOnlyList<WaitStack>? WaitStacks { get; init; }

    /// <summary>An INFO field ("memory", "used_memory"), or null.</summary>
    public string? InfoField(string section, string field) =>
        Info.Sections.TryGetValue(section, out var fields) && fields.TryGetValue(field, out var value) ? value : null;

    public long InfoInt64(string section, string field) =>
        long.TryParse(InfoField(section, field), NumberStyles.Integer, CultureInfo.InvariantCulture, out long value) ? value : 0;

    public long ConfigInt64(string name) =>
        Config.TryGetValue(name, out var text) && long.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out long value) ? value : 0;

    /// <summary>
    /// How many events a per-second series counted over its last <paramref name="seconds"/>: each
    /// sample's rate times the time it was measured over (the sampler records it; older packages:
    /// the time between stamps), rounded. A sum of rates is not a count: samples are not exactly a
    /// second apart.
    /// </summary>
    public long RecentCount(string series, int seconds)
    {
        if (History is not { } history || !history.Series.TryGetValue(series, out var values) || values.Length == 0)
            return 0;
        history.Series.TryGetValue(MetricNames.SampleIntervalSeconds, out var intervals);
        int samples = Math.Min(values.Length, Math.Max(1, seconds * 1000 / Math.Max(1, history.IntervalMillis)));
        double total = 0;
        for (int i = values.Length - samples; i < values.Length; i++)
        {
            double intervalSeconds = intervals is not null && intervals.Length == values.Length ? intervals[i]
                : i > 0 && history.Times.Length == values.Length ? (history.Times[i] - history.Times[i - 1]) / 1000.0
                : history.IntervalMillis / 1000.0;
            total += values[i] * intervalSeconds;
        }
        return (long)Math.Round(total);
    }

    /// <summary>The mean of a series' last <paramref name="samples"/> values (0 when it has none).</summary>
    public double RecentAverage(string series, int samples)
    {
        var values = Recent(series, samples);
        double sum = 0;
        foreach (double value in values)
            sum += value;
        return values.Length == 0 ? 0 : sum / values.Length;
    }

    /// <summary>The last <paramref name="samples"/> values of a history series (fewer if the history is shorter), or empty.</summary>
    public ReadOnlySpan<double> Recent(string series, int samples)
    {
        if (History is null || !History.Series.TryGetValue(series, out var values))
            return [];
        int count = Math.Min(samples, values.Length);
        return values.AsSpan(values.Length - count);
    }

    /// <summary>
    /// Up to <paramref name="count"/> client commands running now, longest first (the in-flight
    /// view's order), leaving out threads that only wait for shards: what holds the shards.
    /// </summary>
    public List<InFlightWork> LongestRunning(int count)
    {
        var running = new List<InFlightWork>(count);
        foreach (var work in InFlight)
        {
            if (running.Count == count)
                break;
            if (work.Activity != InFlightWork.WaitingForShards && work.ClientId != 0)
                running.Add(work);
        }
        return running;
    }

    /// <summary>"debug for client 7 (db 0) on thread pool worker (4121), running 412 ms".</summary>
    public static string Describe(InFlightWork work)
        => $"{work.Activity} for client {work.ClientId} (db {work.Database}) on thread {work.ThreadName} ({work.OsThreadId}), running {Human.Micros(work.ElapsedMicros)}";
}
