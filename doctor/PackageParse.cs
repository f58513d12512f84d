using System.IO.Compression;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor;

/// <summary>
/// One reading of one package, on one thread, held to <see cref="PackageLimits"/>: the zip's
/// declared sizes are checked first, then every byte actually unpacked is counted, and after every
/// read the managed bytes this thread allocated since the reading began are compared with the
/// memory limit. That count covers the central directory, the deflate streams and the objects the
/// JSON becomes, so it holds whatever shape the JSON takes (a 3-byte "{}," can become a 100-byte object).
/// </summary>
internal sealed class PackageParse
{
    /// <summary>The contracts' JSON with a shallow depth limit: no contract nests deeper than 5.</summary>
    private static readonly JsonSerializerOptions Json = new(ContractsJson.Default.Options) { MaxDepth = PackageLimits.MaxJsonDepth };

    private readonly PackageLimits _limits;
    private readonly string _fileName;
    private readonly int _thread = Environment.CurrentManagedThreadId;
    private readonly long _allocatedAtStart = GC.GetAllocatedBytesForCurrentThread();
    private long _unpacked;

    public PackageParse(PackageLimits limits, string fileName)
    {
        _limits = limits;
        _fileName = fileName;
    }

    /// <summary>Managed bytes allocated by this reading so far: an upper bound on what its result holds.</summary>
    public long AllocatedBytes
    {
        get
        {
            // The count is per thread: a reading that moved threads would escape it.
            if (Environment.CurrentManagedThreadId != _thread)
                throw new InvalidOperationException("a package is read on the thread that began reading it");
            return GC.GetAllocatedBytesForCurrentThread() - _allocatedAtStart;
        }
    }

    /// <summary>The zip file, checked against the memory limit on every read (the central directory is read through it).</summary>
    public Stream Guard(Stream zip) => new CheckedReadStream(zip, _ => CheckMemory(), leaveOpen: true);

    public void CheckMemory()
    {
        if (AllocatedBytes > _limits.MaxMemoryBytes)
            throw new InvalidPackageException(
                $"{_fileName} needs more than {Human.Bytes(_limits.MaxMemoryBytes)} of memory to open, the limit for the open packages together ({PackageLimits.MemorySetting})",
                PackageLimits.MemorySetting);
    }

    /// <summary>Entry count, names and declared sizes, before anything is unpacked.</summary>
    public void CheckEntries(ZipArchive zip)
    {
        var entries = zip.Entries;
        if (entries.Count > PackageLimits.MaxEntries)
            throw new InvalidPackageException($"{_fileName} holds {entries.Count} entries; a debug package holds at most {PackageLimits.MaxEntries}", "entry count");
        var names = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        long declared = 0;
        foreach (var entry in entries)
        {
            string name = entry.FullName;
            if (!IsPlainName(name))
                throw new InvalidPackageException($"{_fileName} holds an entry named '{Printable(name)}'; a debug package's entries are plain file names, in no folder");
            if (!names.Add(name))
                throw new InvalidPackageException($"{_fileName} holds two entries named '{Printable(name)}'");
            if (entry.Length < 0)
                throw new InvalidPackageException($"{_fileName} is damaged: {Printable(name)} declares a negative size");
            if (entry.Length > _limits.MaxEntryBytes)
                throw EntryTooLarge(name);
            declared += entry.Length;
            if (declared > _limits.MaxUnpackedBytes)
                throw UnpackedTooLarge();
        }
    }

    public PackageManifest ReadManifest(ZipArchive zip)
    {
        var manifest = Read(zip, PackageManifest.FileName, ContractsJson.Default.PackageManifest)
            ?? throw new InvalidPackageException($"{_fileName} is not a debug package: {PackageManifest.FileName} is missing");
        // The server writes lists of objects here; a hand-made manifest may say null for a list or
        // an element, which the pages would trip over.
        return manifest.Entries is null || manifest.Omitted is null || manifest.Entries.Contains(null!) || manifest.Omitted.Contains(null!)
            ? manifest with { Entries = WithoutNulls(manifest.Entries), Omitted = WithoutNulls(manifest.Omitted) }
            : manifest;
    }

    private static List<T> WithoutNulls<T>(IReadOnlyList<T>? items) where T : class
    {
        var kept = new List<T>();
        foreach (var item in items ?? [])
            if (item is not null)
                kept.Add(item);
        return kept;
    }

    /// <summary>The rules' input as it was when the package was taken; parts the package lacks stay empty.</summary>
    public DoctorInput ReadInput(ZipArchive zip, PackageManifest manifest) => new()
    {
        TakenUnixMs = manifest.TakenAt.ToUnixTimeMilliseconds(),
        Info = Read(zip, "info.json", ContractsJson.Default.InfoReport) ?? new InfoReport([]),
        History = Read(zip, "history.json", ContractsJson.Default.MetricHistory),
        Threads = Read(zip, "threads.json", ContractsJson.Default.ThreadSnapshotArray) ?? [],
        Clients = Read(zip, "clients.json", ContractsJson.Default.ClientSnapshotArray) ?? [],
        ClosedClients = Read(zip, "clients-closed.json", ContractsJson.Default.ClosedClientArray) ?? [],
        Commands = Read(zip, "commands.json", ContractsJson.Default.CommandStatisticsArray) ?? [],
        Scripts = Read(zip, "scripts.json", ContractsJson.Default.ScriptReport),
        Latency = Read(zip, "latency.json", ContractsJson.Default.LatencyReport),
        SlowLog = Read(zip, "slowlog.json", ContractsJson.Default.SlowLogRecordArray) ?? [],
        SlowSummary = Read(zip, "slowlog-summary.json", ContractsJson.Default.SlowLogSummary),
        Memory = Read(zip, "memory.json", ContractsJson.Default.MemoryReport),
        AclLog = Read(zip, "acl-log.json", ContractsJson.Default.AclLogRecordArray) ?? [],
        Keyspace = Read(zip, "keyspace.json", ContractsJson.Default.KeyspaceReport),
        HotKeys = Read(zip, "hotkeys.json", ContractsJson.Default.HotKeysReport),
        Triggers = Read(zip, "triggers.json", ContractsJson.Default.TriggerReport),
        Runtime = Read(zip, "runtime.json", ContractsJson.Default.RuntimeReport),
        Environment = Read(zip, "environment.json", ContractsJson.Default.EnvironmentReport),
        DiskIo = Read(zip, "diskio.json", ContractsJson.Default.DiskIoFiguresArray) ?? [],
        Replication = Read(zip, "replication.json", ContractsJson.Default.ReplicationSnapshot),
        Monitor = Read(zip, "monitor.json", ContractsJson.Default.MonitorReport),
        Config = Read(zip, "config.json", ContractsJson.Default.DictionaryStringString) ?? [],
        InFlight = Read(zip, "inflight.json", ContractsJson.Default.InFlightWorkArray) ?? [],
        WaitStacks = ReadWaitStacks(zip),
    };

    /// <summary>stacks.txt grouped by where the pool's threads stand, streamed under the same limits as every entry.</summary>
    private IReadOnlyList<WaitStack>? ReadWaitStacks(ZipArchive zip)
    {
        using var stream = Open(zip, "stacks.txt");
        if (stream is null)
            return null;
        using var reader = new StreamReader(stream, System.Text.Encoding.UTF8, detectEncodingFromByteOrderMarks: false);
        return WaitStacks.Summarize(reader);
    }

    /// <summary>One JSON entry, streamed from the deflate stream into the deserializer, never whole in memory.</summary>
    public T? Read<T>(ZipArchive zip, string name, JsonTypeInfo<T> type) where T : class
    {
        using var stream = Open(zip, name);
        return stream is null ? null : JsonSerializer.Deserialize(stream, (JsonTypeInfo<T>)Json.GetTypeInfo(typeof(T)));
    }

    /// <summary>An entry's stream that counts what it unpacks against the limits; null when the package lacks it.</summary>
    private CheckedReadStream? Open(ZipArchive zip, string name)
    {
        var entry = zip.GetEntry(name);
        if (entry is null)
            return null;
        long entryBytes = 0;
        return new CheckedReadStream(entry.Open(), read =>
        {
            entryBytes += read;
            _unpacked += read;
            if (entryBytes > _limits.MaxEntryBytes)
                throw EntryTooLarge(name);
            if (_unpacked > _limits.MaxUnpackedBytes)
                throw UnpackedTooLarge();
            CheckMemory();
        }, leaveOpen: false);
    }

    private InvalidPackageException EntryTooLarge(string name) => new(
        $"{_fileName}: {Printable(name)} unpacks to more than {Human.Bytes(_limits.MaxEntryBytes)}, the limit for one entry ({PackageLimits.EntrySizeSetting})",
        PackageLimits.EntrySizeSetting);

    private InvalidPackageException UnpackedTooLarge() => new(
        $"{_fileName} unpacks to more than {Human.Bytes(_limits.MaxUnpackedBytes)}, the limit for a whole package ({PackageLimits.UnpackedSizeSetting})",
        PackageLimits.UnpackedSizeSetting);

    private static bool IsPlainName(string name) =>
        name.Length is > 0 and <= PackageLimits.MaxNameLength
        && name is not "." and not ".."
        && name.IndexOfAny(['/', '\\', ':']) < 0
        && !name.Any(char.IsControl);

    /// <summary>A name as it may be shown: control characters replaced, and cut short.</summary>
    private static string Printable(string name)
    {
        string shown = new(name.Select(c => char.IsControl(c) ? '?' : c).Take(PackageLimits.MaxNameLength).ToArray());
        return shown.Length < name.Length ? shown + "..." : shown;
    }
}
