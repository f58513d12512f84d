using System.IO.Compression;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor;

/// <summary>Opens a debug package and hands its files to the rules as a <see cref="DoctorInput"/>.</summary>
public static class PackageReader
{
    public static PackageManifest ReadManifest(ZipArchive zip) =>
        Read(zip, PackageManifest.FileName, ContractsJson.Default.PackageManifest)
        ?? throw new InvalidDataException($"not a debug package: {PackageManifest.FileName} is missing");

    /// <summary>The rules' input as it was when the package was taken; parts the package lacks stay empty.</summary>
    public static DoctorInput ReadInput(ZipArchive zip)
    {
        var manifest = ReadManifest(zip);
        return new DoctorInput
        {
            TakenUnixMs = manifest.TakenAt.ToUnixTimeMilliseconds(),
            Info = Read(zip, "info.json", ContractsJson.Default.InfoReport) ?? new InfoReport([]),
            History = Read(zip, "history.json", ContractsJson.Default.MetricHistory),
            Threads = Read(zip, "threads.json", ContractsJson.Default.ThreadSnapshotArray) ?? [],
            Clients = Read(zip, "clients.json", ContractsJson.Default.ClientSnapshotArray) ?? [],
            Commands = Read(zip, "commands.json", ContractsJson.Default.CommandStatisticsArray) ?? [],
            Latency = Read(zip, "latency.json", ContractsJson.Default.LatencyReport),
            SlowLog = Read(zip, "slowlog.json", ContractsJson.Default.SlowLogRecordArray) ?? [],
            Memory = Read(zip, "memory.json", ContractsJson.Default.MemoryReport),
            Runtime = Read(zip, "runtime.json", ContractsJson.Default.RuntimeReport),
            Environment = Read(zip, "environment.json", ContractsJson.Default.EnvironmentReport),
            DiskIo = Read(zip, "diskio.json", ContractsJson.Default.DiskIoFiguresArray) ?? [],
            Monitor = Read(zip, "monitor.json", ContractsJson.Default.MonitorReport),
            Config = Read(zip, "config.json", ContractsJson.Default.DictionaryStringString) ?? [],
        };
    }

    private static T? Read<T>(ZipArchive zip, string name, JsonTypeInfo<T> type) where T : class
    {
        var entry = zip.GetEntry(name);
        if (entry is null)
            return null;
        using var stream = entry.Open();
        return JsonSerializer.Deserialize(stream, type);
    }
}
