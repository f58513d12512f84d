using Diagnostics.Contracts;
using Diagnostics.Doctor;
using Diagnostics.Studio.Security;

namespace Diagnostics.Studio.Sources;

/// <summary>
/// A debug package opened offline: everything is read once when it is opened, and every page
/// then renders the server as it was when the package was taken. The doctor rules run again over
/// it, so a package from an older server gets today's rules.
/// </summary>
public sealed class PackageSource : IStudioSource
{
    private readonly DoctorInput _input;
    private readonly IReadOnlyList<InFlightWork> _inFlight;
    private readonly DoctorReport _doctor;

    private PackageSource(SourceDescription description, PackageContents contents, DoctorReport doctor, long memoryBytes)
    {
        Description = description;
        Manifest = contents.Manifest;
        _input = contents.Input;
        _inFlight = contents.InFlight;
        _doctor = doctor;
        MemoryBytes = memoryBytes;
    }

    public SourceDescription Description { get; }
    public PackageManifest Manifest { get; }
    public IHistoryFeed? Feed => null;
    public IServerControl? Control => null;

    /// <summary>
    /// Managed bytes that reading the package and examining it allocated: an upper bound on what
    /// it holds, and what the library counts against its memory limit.
    /// </summary>
    public long MemoryBytes { get; }

    /// <summary>
    /// Reads a package from a seekable stream, on the calling thread (its allocations are counted
    /// there); <see cref="InvalidPackageException"/> when it is not a package or is over a limit.
    /// </summary>
    public static PackageSource Open(Stream zipStream, string id, string fileName, PackageLimits limits)
    {
        var contents = PackageReader.Read(zipStream, limits, fileName);
        long beforeExamining = GC.GetAllocatedBytesForCurrentThread();
        var doctor = DoctorRules.Examine(contents.Input);
        long memory = contents.AllocatedBytes + GC.GetAllocatedBytesForCurrentThread() - beforeExamining;
        var manifest = contents.Manifest;
        var description = new SourceDescription(SourceKind.Package, manifest.Host, manifest.ProcessId, manifest.ProductVersion, manifest.TakenAt, id, fileName,
            manifest.TakenBy, manifest.Omitted);
        return new PackageSource(description, contents, doctor, memory);
    }

    public InfoReport Info() => _input.Info;
    public MetricHistory History(int seconds) => _input.History is { } history ? HistoryWindow.Last(history, seconds) : HistoryWindow.Empty;
    public IReadOnlyList<ThreadSnapshot> Threads() => _input.Threads;
    public IReadOnlyList<ClientSnapshot> Clients() => _input.Clients;
    public IReadOnlyList<ClosedClient> ClosedClients() => _input.ClosedClients;
    public HotKeysReport? HotKeys() => _input.HotKeys;
    public TriggerReport? Triggers() => _input.Triggers;
    public SlowLogSummary? SlowSummary() => _input.SlowSummary;
    public Stream? OpenTriggeredPackage(string name) => null;
    public IReadOnlyList<InFlightWork> InFlight() => _inFlight;
    public IReadOnlyList<CommandStatistics> Commands() => _input.Commands;
    public ScriptReport? Scripts() => _input.Scripts;
    public LatencyReport? Latency() => _input.Latency;
    public IReadOnlyList<SlowLogRecord> SlowLog() => _input.SlowLog;
    public MemoryReport? Memory() => _input.Memory;
    public IReadOnlyList<DiskIoFigures> DiskIo() => _input.DiskIo;
    public RuntimeReport? Runtime() => _input.Runtime;
    public ReplicationSnapshot? Replication() => _input.Replication;
    public MonitorReport? Monitor() => _input.Monitor;
    public EnvironmentReport? Environment() => _input.Environment;
    public IReadOnlyDictionary<string, string> Config() => _input.Config;
    public IReadOnlyList<AclLogRecord> AclLog() => _input.AclLog;

    /// <summary>
    /// The findings examined when the package was opened, or, for a login that may not see all of
    /// it, the rules run again over what it may see (kept for the next refresh of the same login).
    /// </summary>
    public DoctorReport Doctor(StudioPermissions seenBy)
    {
        if ((seenBy & StudioPermissions.All) == StudioPermissions.All)
            return _doctor;
        if (_partialDoctor is { } cached && cached.SeenBy == seenBy)
            return cached.Report;
        var report = DoctorRules.Examine(PermittedInput.Of(_input, seenBy));
        _partialDoctor = new PartialReport(seenBy, report);
        return report;
    }

    private volatile PartialReport? _partialDoctor;

    private sealed record PartialReport(StudioPermissions SeenBy, DoctorReport Report);
}
