using System.Runtime.InteropServices;
using Diagnostics.Monitor.Linux;

namespace Diagnostics.Monitor.Attach;

/// <summary>
/// Whether a folder is beyond the reach of everyone but its owner and root: not a symbolic link,
/// and neither it nor any folder above it (on its real path, links resolved) can be changed by
/// anyone else. A folder open to others will do only when it is sticky (as /tmp), where each user
/// can rename or delete only their own entries; an announcement folder must be closed outright.
/// The owner itself is checked against the process by the caller.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public static class FolderTrust
{
    /// <summary>The folder's facts and real path, or why nothing in it can be trusted.</summary>
    public static (FileFacts Facts, string RealPath, string? Problem) Check(string folder, bool closedToOthers)
    {
        try
        {
            return CheckOrThrow(folder, closedToOthers);
        }
        catch (IOException ex)
        {
            // Someone may remove or replace a folder of theirs while it is looked at.
            return (default, "", $"its folder cannot be examined: {ex.Message}");
        }
    }

    private static (FileFacts, string, string?) CheckOrThrow(string folder, bool closedToOthers)
    {
        var facts = FileFacts.Of(folder);
        if (facts is not { } f)
            return (default, "", "its folder does not exist");
        if (f.Kind == FileKind.SymbolicLink)
            return (f, "", "its folder is a symbolic link");
        if (f.Kind != FileKind.Directory)
            return (f, "", "its folder is not a directory");
        if (f.WritableByOthers && (closedToOthers || !f.Sticky))
            return (f, "", $"its folder is writable by others (mode {f.ModeText})");
        string? real = RealPath(folder);
        if (real is null)
            return (f, "", "its folder's real path cannot be resolved");
        for (string? above = Path.GetDirectoryName(real); above is not null; above = Path.GetDirectoryName(above))
        {
            if (FileFacts.Of(above) is not { } a || a.Kind != FileKind.Directory)
                return (f, real, $"{above} above its folder is not a directory");
            if (a.Owner != 0 && a.Owner != f.Owner)
                return (f, real, $"{above} above its folder belongs to uid {a.Owner}, not to root or the folder's owner");
            if (a.WritableByOthers && !a.Sticky)
                return (f, real, $"{above} above its folder is writable by others and not sticky (mode {a.ModeText})");
        }
        return (f, real, null);
    }

    /// <summary>The path with every symbolic link resolved (realpath(3)), or null.</summary>
    public static string? RealPath(string path)
    {
        nint resolved = Libc.realpath(path, 0);
        if (resolved == 0)
            return null;
        try
        {
            return Marshal.PtrToStringUTF8(resolved);
        }
        finally
        {
            Libc.free(resolved);
        }
    }
}
