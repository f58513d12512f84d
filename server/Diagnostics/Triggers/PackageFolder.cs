using System.IO.Compression;
using System.Text.RegularExpressions;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Monitor;

namespace Diagnostics.Server.Diagnostics.Triggers;

/// <summary>
/// The folder under <c>dir</c> where triggered packages are kept: created owner-only, refused when
/// it is a symbolic link or another user's (a package holds the configuration and client
/// addresses); only regular files named as this server names them are listed, served or deleted,
/// so a name from a request never becomes a path of its own.
/// </summary>
public sealed partial class PackageFolder(Func<string> directory)
{
    public const string FolderName = "debug-packages";

    [GeneratedRegex(@"^package-[0-9]{8}-[0-9]{6}-[a-z0-9-]{1,64}\.zip$", RegexOptions.CultureInvariant)]
    private static partial Regex PackageName();

    public string Path => System.IO.Path.GetFullPath(System.IO.Path.Combine(directory(), FolderName));

    /// <summary>True for a name this server could have given a package.</summary>
    public static bool IsPackageName(string name) => PackageName().IsMatch(name);

    /// <summary>The folder, created if missing; throws (with the reason) when it cannot be trusted.</summary>
    public string Ensure()
    {
        string path = Path;
        var info = new DirectoryInfo(path);
        if (!info.Exists)
        {
            if (OperatingSystem.IsWindows())
                Directory.CreateDirectory(path);
            else
                Directory.CreateDirectory(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
            info.Refresh();
        }
        if (info.LinkTarget is not null)
            throw new IOException($"{path} is a symbolic link; triggered packages are not written through links");
        if (!OperatingSystem.IsWindows())
        {
            uint owner = UnixIdentity.OwnerOf(path);
            if (owner != UnixIdentity.EffectiveUserId())
                throw new IOException($"{path} is owned by uid {owner}, not this server's user");
            if ((info.UnixFileMode & (UnixFileMode.GroupRead | UnixFileMode.GroupWrite | UnixFileMode.GroupExecute | UnixFileMode.OtherRead | UnixFileMode.OtherWrite | UnixFileMode.OtherExecute)) != 0)
                File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
        return path;
    }

    /// <summary>A new package's path: its time and a slug of why it was taken.</summary>
    public string NewPackagePath(DateTimeOffset at, string reasonSlug)
        => System.IO.Path.Combine(Ensure(), $"package-{at.UtcDateTime:yyyyMMdd-HHmmss}-{reasonSlug}.zip");

    /// <summary>The kept packages' files, newest first (regular files with a package's name only).</summary>
    public List<FileInfo> Files()
    {
        var files = new List<FileInfo>();
        var folder = new DirectoryInfo(Path);
        if (!folder.Exists || folder.LinkTarget is not null)
            return files;
        foreach (var file in folder.EnumerateFiles("package-*.zip"))
            if (file.LinkTarget is null && IsPackageName(file.Name))
                files.Add(file);
        files.Sort((a, b) => string.CompareOrdinal(b.Name, a.Name));
        return files;
    }

    /// <summary>The file of a kept package, or null: the name must be one this server gave and the file a regular one.</summary>
    public FileInfo? Find(string name)
    {
        if (!IsPackageName(name))
            return null;
        var file = new FileInfo(System.IO.Path.Combine(Path, name));
        return file.Exists && file.LinkTarget is null ? file : null;
    }

    /// <summary>Deletes the oldest packages past <paramref name="keep"/>.</summary>
    public void Prune(int keep)
    {
        var files = Files();
        for (int i = keep; i < files.Count; i++)
            files[i].Delete();
    }

    /// <summary>
    /// The manifest of a package in the folder, read held to the doctor's package limits
    /// (<see cref="Doctor.PackageReader"/>); null when it cannot be read.
    /// </summary>
    public static PackageManifest? ManifestOf(string path)
    {
        try
        {
            using var zip = ZipFile.OpenRead(path);
            return Doctor.PackageReader.ReadManifest(zip);
        }
        catch (Exception e) when (e is IOException or InvalidDataException or UnauthorizedAccessException or Doctor.InvalidPackageException)
        {
            return null;
        }
    }
}
