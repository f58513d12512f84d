using System.IO.Compression;
using Diagnostics.Contracts;
using Diagnostics.Doctor;
using Diagnostics.Fuzz.Harness;
using Diagnostics.Studio.Security;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// The debug package reader through its one entry point for untrusted packages,
/// <see cref="PackageReader.Read"/>, as the studio opens an upload (PackageSource.Open), with
/// the default limits; then the doctor's rules on what was read, whole and as a watch-only login sees it. An input starting "PK" is the
/// zip itself (its directory and entries get fuzzed). Any other input is the parts' JSON
/// separated by NUL bytes, stored uncompressed under the package's file names in order, so the
/// JSON and the rules get fuzzed too (a mutated zip entry mostly fails its CRC). The documented
/// refusal is <see cref="InvalidPackageException"/> (not a zip, not a package, damaged, over a limit).
/// </summary>
public sealed class PackageTarget : IFuzzTarget
{
    /// <summary>The parts in the order a NUL-separated input assigns them.</summary>
    public static readonly string[] PartNames =
    [
        PackageManifest.FileName, "info.json", "history.json", "threads.json", "clients.json", "commands.json",
        "latency.json", "slowlog.json", "memory.json", "runtime.json", "environment.json", "diskio.json",
        "monitor.json", "config.json", "acl-log.json",
    ];

    public string Name => "package";

    public void Run(ReadOnlySpan<byte> input)
    {
        using var stream = input.StartsWith("PK"u8) ? new MemoryStream(input.ToArray(), writable: false) : Package(input);
        PackageContents contents;
        try
        {
            contents = PackageReader.Read(stream, PackageLimits.Default, "fuzz.zip");
        }
        catch (InvalidPackageException)
        {
            return;
        }
        DoctorRules.Examine(contents.Input);
        // As a login that may only watch sees it (the parts it may not see emptied first).
        DoctorRules.Examine(PermittedInput.Of(contents.Input, StudioPermissions.Watch));
        // The studio's pages read every element of the manifest's lists (a partial package's too):
        // the reader hands none of them over as null.
        foreach (var entry in contents.Manifest.Entries)
            _ = entry.Bytes;
        foreach (var omitted in contents.Manifest.Omitted)
            _ = omitted.Name;
    }

    /// <summary>A stored (uncompressed) zip of the NUL-separated parts.</summary>
    public static MemoryStream Package(ReadOnlySpan<byte> parts)
    {
        var stream = new MemoryStream();
        using (var zip = new ZipArchive(stream, ZipArchiveMode.Create, leaveOpen: true))
        {
            int index = 0;
            while (index < PartNames.Length)
            {
                int end = parts.IndexOf((byte)0);
                var part = end < 0 ? parts : parts[..end];
                if (!part.IsEmpty)
                {
                    using var entry = zip.CreateEntry(PartNames[index], CompressionLevel.NoCompression).Open();
                    entry.Write(part);
                }
                index++;
                if (end < 0)
                    break;
                parts = parts[(end + 1)..];
            }
        }
        stream.Position = 0;
        return stream;
    }
}
