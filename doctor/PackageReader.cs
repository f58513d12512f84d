using System.IO.Compression;
using System.Text.Json;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor;

/// <summary>Opens a debug package and hands its files to the rules as a <see cref="DoctorInput"/>.</summary>
public static class PackageReader
{
    /// <summary>
    /// Reads a package from anywhere (an upload, a file someone sent): the one entry point for
    /// untrusted input. <paramref name="zip"/> must be seekable (a zip is read from its end).
    /// Throws <see cref="InvalidPackageException"/> when it is not a zip, not a package, damaged, or
    /// over one of <paramref name="limits"/>; the message names the file and the limit.
    /// </summary>
    public static PackageContents Read(Stream zip, PackageLimits limits, string fileName)
    {
        var parse = new PackageParse(limits, fileName);
        ZipArchive archive;
        try
        {
            archive = new ZipArchive(parse.Guard(zip), ZipArchiveMode.Read, leaveOpen: true);
        }
        catch (InvalidDataException e)
        {
            throw new InvalidPackageException($"{fileName} is not a zip file ({e.Message})", inner: e);
        }
        using (archive)
        {
            try
            {
                parse.CheckEntries(archive);
                var manifest = parse.ReadManifest(archive);
                var input = parse.ReadInput(archive, manifest);
                return new PackageContents(manifest, input, input.InFlight, parse.AllocatedBytes);
            }
            catch (JsonException e)
            {
                throw new InvalidPackageException($"{fileName} holds an entry that is not valid JSON ({e.Message})", inner: e);
            }
            catch (Exception e) when (e is InvalidDataException or NotSupportedException or IOException)
            {
                // A deflate stream that does not decode, or a compression method zip readers do not know.
                throw new InvalidPackageException($"{fileName} is damaged ({e.Message})", inner: e);
            }
        }
    }

    /// <summary>The manifest of an opened zip, with the default limits.</summary>
    public static PackageManifest ReadManifest(ZipArchive zip)
    {
        var parse = new PackageParse(PackageLimits.Default, "the package");
        parse.CheckEntries(zip);
        return parse.ReadManifest(zip);
    }

    /// <summary>The rules' input from an opened zip, with the default limits; parts the package lacks stay empty.</summary>
    public static DoctorInput ReadInput(ZipArchive zip)
    {
        var parse = new PackageParse(PackageLimits.Default, "the package");
        parse.CheckEntries(zip);
        return parse.ReadInput(zip, parse.ReadManifest(zip));
    }
}
