using Diagnostics.Contracts;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Server.Diagnostics.Package;
using Diagnostics.Server.Diagnostics.SlowCommands;
using Diagnostics.Server.Diagnostics.Views;
using Diagnostics.Studio.Security;
using Diagnostics.Studio.Sources;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Studio;

/// <summary>
/// The studio's view of this server: the same contract views the HTTP API serves and the debug
/// package holds, built in-process on request (no HTTP, no JSON in between).
/// </summary>
public sealed class LiveStudioSource(DataServer server, LiveHistoryFeed feed, ILogger<LiveStudioSource> log) : IStudioSource, IServerControl
{
    public SourceDescription Description { get; } =
        new(SourceKind.Live, System.Environment.MachineName, System.Environment.ProcessId, DebugPackageBuilder.ProductVersion);

    public IHistoryFeed? Feed => feed;
    public IServerControl? Control => this;

    public InfoReport Info() => InfoView.Build(server, []);

    public MetricHistory History(int seconds)
    {
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        return server.Sampler.History.Window(now - seconds * 1000L, now);
    }

    public IReadOnlyList<ThreadSnapshot> Threads() => ThreadView.Build(server.Sampler.ThreadCpu);
    public IReadOnlyList<ClientSnapshot> Clients() => ClientView.Build(server);
    public IReadOnlyList<ClosedClient> ClosedClients() => server.Clients.Closed.Recent();
    public HotKeysReport? HotKeys() => server.HotKeys.Period == 0 ? null : HotKeysView.Build(server);
    public TriggerReport? Triggers() => server.Triggers?.Report();
    public SlowLogSummary? SlowSummary() => SlowLogView.Summary(server);

    public Stream? OpenTriggeredPackage(string name)
        => server.Triggers?.Folder.Find(name) is { } file ? new FileStream(file.FullName, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0) : null;
    public IReadOnlyList<InFlightWork> InFlight() => InFlightView.Build();
    public IReadOnlyList<CommandStatistics> Commands() => CommandView.Build(server);
    public ScriptReport? Scripts() => ScriptView.Build(server, withSource: false);
    public LatencyReport? Latency() => LatencyView.Build(server);
    public IReadOnlyList<SlowLogRecord> SlowLog() => SlowLogView.Build(server);
    public MemoryReport? Memory() => MemoryView.Build(server);
    public IReadOnlyList<DiskIoFigures> DiskIo() => DiskIoView.Build();
    public RuntimeReport? Runtime() => RuntimeView.Build();
    public ReplicationSnapshot? Replication() => ReplicationView.Build(server);
    public MonitorReport? Monitor() => server.Monitor.Report();
    public EnvironmentReport? Environment() => EnvironmentView.Build();
    public IReadOnlyDictionary<string, string> Config() => Redaction.Settings(server.Config);
    public IReadOnlyList<AclLogRecord> AclLog() => AclLogView.Build(server);
    /// <summary>
    /// The rules read the whole hour of history: open tabs of logins that may see the same asking
    /// within the same second share one examination (a race, or logins of differing permissions
    /// taking turns, only means one examination too many).
    /// </summary>
    public DoctorReport Doctor(StudioPermissions seenBy)
    {
        long now = System.Environment.TickCount64;
        if (_doctor is { } cached && cached.SeenBy == seenBy && now - cached.At < DoctorReuseMillis)
            return cached.Report;
        var report = DoctorView.Examine(server, seenBy);
        _doctor = new CachedReport(now, seenBy, report);
        return report;
    }

    private const long DoctorReuseMillis = 1000;
    private volatile CachedReport? _doctor;

    private sealed record CachedReport(long At, StudioPermissions SeenBy, DoctorReport Report);

    public bool KillClient(long id)
    {
        if (server.Clients.Find(id) is not { } client)
            return false;
        // A change made from the browser leaves a trace in the log (and the debug package's log ring).
        log.LogWarning("Client id={Id} addr={Address} killed from the studio", id, client.Address);
        client.Kill();
        return true;
    }
}
