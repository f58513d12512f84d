using System.Diagnostics;
using System.IO.Compression;
using System.Text.Json;
using Diagnostics.Contracts;

namespace Diagnostics.Server.Diagnostics.Package;

/// <summary>
/// Writes a debug package: a zip of every registered entry plus manifest.json, built in a temp
/// file so the HTTP response can carry its length. Each entry is written to memory first, so an
/// entry that fails halfway leaves nothing half-written in the zip: the manifest records its
/// error and the package goes on. Entries run one after another, each under a time limit.
/// </summary>
public sealed class DebugPackageBuilder(DataServer server, DebugPackageRegistry registry)
{
    private static readonly TimeSpan EntryTimeout = TimeSpan.FromSeconds(20);

    /// <summary>Builds the package into a new temp file and returns its path; the caller deletes it.</summary>
    public async Task<string> BuildAsync(CancellationToken cancellationToken)
    {
        string path = Path.Combine(Path.GetTempPath(), $"diagnostics-package-{Environment.ProcessId}-{Guid.NewGuid():N}.zip");
        try
        {
            await using (var file = new FileStream(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None, 64 * 1024, useAsync: true))
            {
                using var zip = new ZipArchive(file, ZipArchiveMode.Create, leaveOpen: true);
                var manifestEntries = new List<PackageEntry>();
                foreach (var entry in registry.Entries())
                    manifestEntries.Add(await WriteEntryAsync(zip, entry, cancellationToken).ConfigureAwait(false));

                var manifest = new PackageManifest
                {
                    Product = "Diagnostics.Server",
                    ProductVersion = ProductVersion,
                    Host = Environment.MachineName,
                    OperatingSystem = System.Runtime.InteropServices.RuntimeInformation.OSDescription,
                    ProcessId = Environment.ProcessId,
                    UptimeSeconds = (Environment.TickCount64 - server.Stats.StartedTicks) / 1000,
                    TakenAt = DateTimeOffset.UtcNow,
                    Entries = manifestEntries,
                };
                var manifestEntry = zip.CreateEntry(PackageManifest.FileName, CompressionLevel.Optimal);
                await using var stream = manifestEntry.Open();
                await JsonSerializer.SerializeAsync(stream, manifest, ContractsJson.Default.PackageManifest, cancellationToken).ConfigureAwait(false);
            }
            return path;
        }
        catch
        {
            File.Delete(path);
            throw;
        }
    }

    public static string ProductVersion { get; } =
        typeof(DebugPackageBuilder).Assembly.GetCustomAttributes(typeof(System.Reflection.AssemblyInformationalVersionAttribute), false) is [System.Reflection.AssemblyInformationalVersionAttribute version, ..]
            ? version.InformationalVersion
            : typeof(DebugPackageBuilder).Assembly.GetName().Version?.ToString() ?? "0.0.0";

    private static async Task<PackageEntry> WriteEntryAsync(ZipArchive zip, DebugPackageEntry entry, CancellationToken cancellationToken)
    {
        long started = Stopwatch.GetTimestamp();
        using var buffer = new MemoryStream();
        string? error = null;
        using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
        {
            timeout.CancelAfter(EntryTimeout);
            try
            {
                await entry.Write(buffer, timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                error = $"timed out after {EntryTimeout.TotalSeconds:0} s";
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                error = $"{ex.GetType().Name}: {ex.Message}";
            }
        }
        double elapsed = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
        if (error is not null)
            return new PackageEntry(entry.FileName, 0, elapsed, error);

        var zipEntry = zip.CreateEntry(entry.FileName, CompressionLevel.Optimal);
        await using (var stream = zipEntry.Open())
        {
            buffer.Position = 0;
            await buffer.CopyToAsync(stream, cancellationToken).ConfigureAwait(false);
        }
        return new PackageEntry(entry.FileName, buffer.Length, elapsed, null);
    }
}
