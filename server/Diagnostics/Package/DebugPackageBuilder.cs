using System.Diagnostics;
using System.IO.Compression;
using System.Text.Json;
using Diagnostics.Contracts;
using Diagnostics.Studio.Security;

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

    /// <summary>
    /// Builds the package <paramref name="grant"/> may have into a new temp file and returns its
    /// path; the caller deletes it. An entry the login may not see on its own page or route is not
    /// even written: the manifest names it, what it needs and who took the package.
    /// </summary>
    public async Task<string> BuildAsync(StudioGrant grant, CancellationToken cancellationToken)
    {
        string path = Path.Combine(Path.GetTempPath(), $"diagnostics-package-{Environment.ProcessId}-{Guid.NewGuid():N}.zip");
        await BuildAsync(path, trigger: null, grant, cancellationToken).ConfigureAwait(false);
        return path;
    }

    /// <summary>
    /// Builds the package into <paramref name="path"/> (created, owner-only: it holds the server's
    /// configuration and client addresses), recording <paramref name="trigger"/> in its manifest,
    /// with what <paramref name="grant"/> may see (null: everything, as a triggered package holds).
    /// On failure nothing is left at <paramref name="path"/>.
    /// </summary>
    /// <remarks>
    /// The file is written synchronously: on Linux an async FileStream runs every write on the
    /// thread pool, and a package is asked for when the pool may be starved.
    /// </remarks>
    public async Task BuildAsync(string path, string? trigger, StudioGrant? grant, CancellationToken cancellationToken)
    {
        try
        {
            var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.ReadWrite, Share = FileShare.None, BufferSize = 64 * 1024 };
            if (!OperatingSystem.IsWindows())
                options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
            using (var file = new FileStream(path, options))
            {
                using var zip = new ZipArchive(file, ZipArchiveMode.Create, leaveOpen: true);
                var manifestEntries = new List<PackageEntry>();
                var omitted = new List<PackageOmission>();
                foreach (var entry in registry.Entries())
                {
                    if (grant is not null && !grant.Has(entry.Permissions))
                    {
                        var missing = StudioPermission.Missing(entry.Permissions, grant.Permissions);
                        omitted.Add(new PackageOmission(entry.FileName, StudioPermission.Names(missing), StudioPermission.Rules(missing)));
                        continue;
                    }
                    manifestEntries.Add(await WriteEntryAsync(zip, entry, grant, cancellationToken).ConfigureAwait(false));
                }

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
                    Trigger = trigger,
                    TakenBy = omitted.Count == 0 ? null : grant!.Who,
                    Omitted = omitted,
                };
                var manifestEntry = zip.CreateEntry(PackageManifest.FileName, CompressionLevel.Optimal);
                using var stream = manifestEntry.Open();
                JsonSerializer.Serialize(stream, manifest, ContractsJson.Default.PackageManifest);
            }
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

    private static async Task<PackageEntry> WriteEntryAsync(ZipArchive zip, DebugPackageEntry entry, StudioGrant? grant, CancellationToken cancellationToken)
    {
        long started = Stopwatch.GetTimestamp();
        using var buffer = new MemoryStream();
        string? error = null;
        using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
        {
            timeout.CancelAfter(EntryTimeout);
            try
            {
                await entry.Write(buffer, grant, timeout.Token).ConfigureAwait(false);
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
        using (var stream = zipEntry.Open())
        {
            buffer.Position = 0;
            buffer.CopyTo(stream);
        }
        return new PackageEntry(entry.FileName, buffer.Length, elapsed, null);
    }
}
