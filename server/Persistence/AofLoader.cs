using System.Diagnostics;
using System.Globalization;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Engine;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Loads the files a manifest names, base first, into a keyspace, logging progress once a second.
/// A base file that starts with "REDIS" is an RDB (what Redis writes with aof-use-rdb-preamble),
/// possibly followed by commands. A truncated tail is accepted only in the last file, only when
/// allowed (aof-load-truncated), and is then cut off so appends continue from a clean end.
/// </summary>
public static class AofLoader
{
    public readonly record struct Summary(long Commands, long Bytes, TimeSpan Elapsed, long KeysLoaded);

    public static Summary Load(DataServer server, Keyspace keyspace, string directory, AofManifest manifest,
        DiskIoPurpose purpose, ILogger log, bool allowTruncatedTail, Func<bool>? cancelled = null)
    {
        if (MissingFile(directory, manifest) is { } missing)
            throw new AofFormatException($"The AOF file {missing} listed in the manifest doesn't exist in {directory}");
        var files = new List<AofFileInfo>(manifest.LoadOrder());
        long totalBytes = 0;
        foreach (var info in files)
            totalBytes += new FileInfo(Path.Combine(directory, info.Name)).Length;

        var clock = Stopwatch.StartNew();
        long doneBytes = 0;
        long lastReport = 0;
        using var replayer = new CommandReplayer(server, keyspace);
        var rdb = new RdbLoadVisitor(keyspace, server.Config);
        for (int i = 0; i < files.Count; i++)
        {
            var info = files[i];
            bool last = i == files.Count - 1;
            using var file = DiskFile.OpenRead(Path.Combine(directory, info.Name));
            long start = 0;
            if (StartsWithRdb(file, purpose))
            {
                log.LogInformation("Reading RDB base file {File} on AOF loading...", info.Name);
                using var stream = new DiskFileStream(file, purpose);
                try
                {
                    start = RdbReader.Read(stream, rdb);
                }
                finally
                {
                    rdb.Abandon(); // a collection a corrupt file cut short is not left allocated
                }
                // Functions are the server's, not a keyspace's: a rewrite's private copy leaves them be.
                if (ReferenceEquals(keyspace, server.Keyspace) && rdb.FunctionLibraries.Count > 0
                    && server.Scripts.LoadLibraries(rdb.FunctionLibraries) is { } error)
                    throw new AofFormatException($"A function library in {info.Name} cannot be loaded: {error}");
                rdb.FunctionLibraries.Clear();
            }
            long fileDone = doneBytes;
            var result = replayer.Replay(file, start, purpose, reached =>
            {
                if (cancelled?.Invoke() == true)
                    throw new OperationCanceledException();
                if (purpose == DiskIoPurpose.LoadRead && clock.ElapsedMilliseconds - lastReport >= 1000)
                {
                    lastReport = clock.ElapsedMilliseconds;
                    long done = fileDone + reached;
                    log.LogInformation("Loading AOF: {Done} of {Total} ({Percent}%), {Commands} commands, {Keys} keys",
                        FormatBytes(done), FormatBytes(totalBytes), totalBytes == 0 ? 100 : done * 100 / totalBytes,
                        replayer.Commands, CountKeys(keyspace));
                }
            });
            doneBytes += result.FileLength;
            if (result.Truncated)
            {
                if (!last)
                    throw new AofFormatException($"Unexpected end of file reading the append only file {info.Name} at offset {result.ValidLength}: only the last file may be truncated");
                if (!allowTruncatedTail)
                    throw new AofFormatException($"Unexpected end of file reading the append only file {info.Name} at offset {result.ValidLength}. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.");
                log.LogWarning("!!! Warning: short read while loading the AOF file {File}!!! {Cut} bytes after offset {Offset} were cut off", info.Name, result.FileLength - result.ValidLength, result.ValidLength);
                log.LogWarning("AOF {File} loaded anyway because aof-load-truncated is enabled", info.Name);
                using var writable = DiskFile.OpenWrite(Path.Combine(directory, info.Name), create: false);
                writable.Truncate(result.ValidLength);
                writable.Sync(purpose);
            }
        }
        return new Summary(replayer.Commands + rdb.Keys, doneBytes, clock.Elapsed, CountKeys(keyspace));
    }

    /// <summary>The first file the manifest lists that is not in <paramref name="directory"/>, or null.</summary>
    public static string? MissingFile(string directory, AofManifest manifest)
    {
        foreach (var info in manifest.LoadOrder())
            if (!File.Exists(Path.Combine(directory, info.Name)))
                return info.Name;
        return null;
    }

    private static bool StartsWithRdb(DiskFile file, DiskIoPurpose purpose)
    {
        Span<byte> magic = stackalloc byte[5];
        return file.Length >= 5 && file.Read(magic, 0, purpose) == 5 && magic.SequenceEqual("REDIS"u8);
    }

    private static long CountKeys(Keyspace keyspace)
    {
        long total = 0;
        for (int db = 0; db < keyspace.DatabaseCount; db++)
            total += keyspace.KeyCount(db);
        return total;
    }

    public static string FormatBytes(long bytes) => bytes switch
    {
        >= 1L << 30 => (bytes / (double)(1L << 30)).ToString("0.00", CultureInfo.InvariantCulture) + " GB",
        >= 1L << 20 => (bytes / (double)(1L << 20)).ToString("0.0", CultureInfo.InvariantCulture) + " MB",
        >= 1L << 10 => (bytes / 1024.0).ToString("0.0", CultureInfo.InvariantCulture) + " KB",
        _ => bytes.ToString(CultureInfo.InvariantCulture) + " B",
    };
}
