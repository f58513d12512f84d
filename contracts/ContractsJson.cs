using System.Text.Json.Serialization;

namespace Diagnostics.Contracts;

/// <summary>
/// The one JSON shape of every contract type, generated at compile time (no reflection, trimming
/// safe): camelCase names, enums as strings, NaN and infinities as named literals so a figure
/// the server could not compute survives the round trip.
/// </summary>
[JsonSourceGenerationOptions(
    PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase,
    UseStringEnumConverter = true,
    NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
    WriteIndented = true)]
[JsonSerializable(typeof(InfoReport))]
[JsonSerializable(typeof(ThreadSnapshot[]))]
[JsonSerializable(typeof(ClientSnapshot[]))]
[JsonSerializable(typeof(InFlightWork[]))]
[JsonSerializable(typeof(CommandStatistics[]))]
[JsonSerializable(typeof(ScriptReport))]
[JsonSerializable(typeof(LatencyReport))]
[JsonSerializable(typeof(SlowLogRecord[]))]
[JsonSerializable(typeof(AclLogRecord[]))]
[JsonSerializable(typeof(SlowLogSummary))]
[JsonSerializable(typeof(ClosedClient[]))]
[JsonSerializable(typeof(HotKeysReport))]
[JsonSerializable(typeof(MemoryReport))]
[JsonSerializable(typeof(KeyspaceReport))]
[JsonSerializable(typeof(MetricHistory))]
[JsonSerializable(typeof(DoctorReport))]
[JsonSerializable(typeof(PackageManifest))]
[JsonSerializable(typeof(PackageOpened))]
[JsonSerializable(typeof(TriggerReport))]
[JsonSerializable(typeof(RuntimeReport))]
[JsonSerializable(typeof(EnvironmentReport))]
[JsonSerializable(typeof(DiskIoFigures[]))]
[JsonSerializable(typeof(ReplicationSnapshot))]
[JsonSerializable(typeof(MonitorBatch))]
[JsonSerializable(typeof(MonitorReport))]
[JsonSerializable(typeof(MonitorAnnouncement))]
[JsonSerializable(typeof(Dictionary<string, string>))]
[JsonSerializable(typeof(string[]))]
public sealed partial class ContractsJson : JsonSerializerContext;
