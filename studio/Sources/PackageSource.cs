using System.IO.Compression;
using System.Text.Json;
using Diagnostics.Contracts;
using Diagnostics.Doctor;

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

    private PackageSource(SourceDescription description, PackageManifest manifest, DoctorInput input, IReadOnlyList<InFlightWork> inFlight)
    {
        Description = description;
        Manifest = manifest;
        _input = input;
        _inFlight = inFlight;
        _doctor = DoctorRules.Examine(input);
    }

    public SourceDescription Description { get; }
    public PackageManifest Manifest { get; }
    public IHistoryFeed? Feed => null;
    public IServerControl? Control => null;

    /// <summary>Reads a package; <see cref="InvalidDataException"/> when the stream is not a zip or has no manifest.</summary>
    public static PackageSource Open(Stream zipStream, string id, string fileName)
    {
        ZipArchive zip;
        try
        {
            zip = new ZipArchive(zipStream, ZipArchiveMode.Read, leaveOpen: true);
        }
        catch (InvalidDataException e)
        {
            throw new InvalidDataException($"{fileName} is not a zip file ({e.Message})", e);
        }
        using (zip)
        {
            try
            {
                var manifest = PackageReader.ReadManifest(zip);
                var input = PackageReader.ReadInput(zip);
                IReadOnlyList<InFlightWork> inFlight = [];
                if (zip.GetEntry("inflight.json") is { } entry)
                {
                    using var stream = entry.Open();
                    inFlight = JsonSerializer.Deserialize(stream, ContractsJson.Default.InFlightWorkArray) ?? [];
                }
                var description = new SourceDescription(SourceKind.Package, manifest.Host, manifest.ProcessId, manifest.ProductVersion, manifest.TakenAt, id, fileName);
                return new PackageSource(description, manifest, input, inFlight);
            }
            catch (JsonException e)
            {
                throw new InvalidDataException($"{fileName} holds an entry that is not valid JSON ({e.Message})", e);
            }
        }
    }

    public InfoReport Info() => _input.Info;
    public MetricHistory History(int seconds) => _input.History is { } history ? HistoryWindow.Last(history, seconds) : HistoryWindow.Empty;
    public IReadOnlyList<ThreadSnapshot> Threads() => _input.Threads;
    public IReadOnlyList<ClientSnapshot> Clients() => _input.Clients;
    public IReadOnlyList<InFlightWork> InFlight() => _inFlight;
    public IReadOnlyList<CommandStatistics> Commands() => _input.Commands;
    public LatencyReport? Latency() => _input.Latency;
    public IReadOnlyList<SlowLogRecord> SlowLog() => _input.SlowLog;
    public MemoryReport? Memory() => _input.Memory;
    public IReadOnlyList<DiskIoFigures> DiskIo() => _input.DiskIo;
    public RuntimeReport? Runtime() => _input.Runtime;
    public MonitorReport? Monitor() => _input.Monitor;
    public EnvironmentReport? Environment() => _input.Environment;
    public IReadOnlyDictionary<string, string> Config() => _input.Config;
    public DoctorReport Doctor() => _doctor;
}
