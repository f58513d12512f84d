using Diagnostics.Contracts;

namespace Diagnostics.Studio.Sources;

/// <summary>
/// Where the studio's pages get everything they show: the live server, or a debug package opened
/// offline. Pages render what these return and never ask which one it is (the layout's banner
/// does). Every answer is a contract type, so both sides speak the same language; parts a package
/// lacks come back empty.
/// </summary>
public interface IStudioSource
{
    SourceDescription Description { get; }

    /// <summary>New history points as the server samples them; null for a package, which does not change.</summary>
    IHistoryFeed? Feed { get; }

    /// <summary>What may be changed through this source; null for a package.</summary>
    IServerControl? Control { get; }

    InfoReport Info();

    /// <summary>The last <paramref name="seconds"/> of history up to the source's present (now, or when the package was taken).</summary>
    MetricHistory History(int seconds);

    IReadOnlyList<ThreadSnapshot> Threads();
    IReadOnlyList<ClientSnapshot> Clients();
    /// <summary>The last clients disconnected for a limit, newest first (empty when a package predates them).</summary>
    IReadOnlyList<ClosedClient> ClosedClients();
    /// <summary>The hottest keys from the always-on sampling; null when sampling is off or a package predates it.</summary>
    HotKeysReport? HotKeys();
    IReadOnlyList<InFlightWork> InFlight();
    IReadOnlyList<CommandStatistics> Commands();
    /// <summary>The Lua scripts and functions with their stats (never their source); null when a package predates them.</summary>
    ScriptReport? Scripts();
    LatencyReport? Latency();
    IReadOnlyList<SlowLogRecord> SlowLog();
    /// <summary>Every slow call by command and by client since start or SLOWLOG RESET; null when a package predates it.</summary>
    SlowLogSummary? SlowSummary();
    MemoryReport? Memory();
    IReadOnlyList<DiskIoFigures> DiskIo();
    RuntimeReport? Runtime();
    /// <summary>Role, replicas, backlog and recent syncs; null when a package predates them.</summary>
    ReplicationSnapshot? Replication();
    EnvironmentReport? Environment();
    IReadOnlyDictionary<string, string> Config();

    /// <summary>ACL LOG's entries, newest first (empty when a package predates them).</summary>
    IReadOnlyList<AclLogRecord> AclLog();

    /// <summary>What the elevated monitor reported (kernel I/O, runtime events); null when the source has no monitor report.</summary>
    MonitorReport? Monitor();

    /// <summary>The package triggers and the packages they took; null when there are none to show.</summary>
    TriggerReport? Triggers();

    /// <summary>A package a trigger took, to open offline; null when there is no such package (or the source is a package).</summary>
    Stream? OpenTriggeredPackage(string name);

    /// <summary>The doctor's findings: for a package, the rules run again over what it holds.</summary>
    /// <param name="seenBy">What the login may see: the rules run over that much (<see cref="Security.PermittedInput"/>).</param>
    DoctorReport Doctor(Security.StudioPermissions seenBy);
}
