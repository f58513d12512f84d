namespace Diagnostics.Contracts;

/// <summary>
/// Where a server may write its <see cref="MonitorAnnouncement"/>, in the order it tries them, so
/// that a monitor given only the server's pid (and so its user and environment) looks in the
/// same places: systemd's RuntimeDirectory, the user's XDG runtime directory, /run for root, and
/// a per-user directory under /tmp.
/// </summary>
public static class AnnouncementDirectories
{
    public static List<string> Candidates(uint userId, Func<string, string?> environment)
    {
        var directories = new List<string>();
        if (environment("RUNTIME_DIRECTORY") is { Length: > 0 } runtime)
            directories.Add(runtime.Split(':')[0]);
        if (environment("XDG_RUNTIME_DIR") is { Length: > 0 } xdg)
            directories.Add(Path.Combine(xdg, MonitorAnnouncement.DirectoryName));
        if (userId == 0)
            directories.Add("/run/" + MonitorAnnouncement.DirectoryName);
        directories.Add(Path.Combine(OperatingSystem.IsWindows() ? Path.GetTempPath() : "/tmp", $"{MonitorAnnouncement.DirectoryName}-{userId}"));
        return directories;
    }

    public static string FileName(int pid) => $"{pid}.json";
}
