using System.Globalization;
using System.Text.Json;
using Diagnostics.Contracts;

namespace Diagnostics.Monitor.Attach;

/// <summary>
/// Finds the server to attach to and reads its announcement: by pid, by the pid in its pidfile, or
/// by scanning the announcement directories for its RESP port. The server's own user and
/// environment (/proc/PID/status and environ, readable by root) say which directories it used.
/// On Linux every announcement must pass <see cref="AnnouncementVerifier"/> first: any local user
/// can write a file in /tmp, and the monitor is root. Each file ignored is logged with why, once.
/// </summary>
public sealed class ServerLocator(MonitorOptions options, ILogger log)
{
    // The last reason logged for each ignored file: the search repeats twice a second.
    private readonly Dictionary<string, string> _ignored = new(StringComparer.Ordinal);

    /// <summary>The server and its announcement, or null with why not (yet).</summary>
    public (MonitorAnnouncement? Server, string Why) Locate()
    {
        if (options.Port is int port)
            return ByPort(port);
        int? pid = options.Pid;
        if (options.PidFile is { } pidFile)
        {
            string? text = ProcessIdentity.TryRead(pidFile);
            if (text is null || !int.TryParse(text.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out int fromFile))
                return (null, $"no pid in {pidFile}");
            pid = fromFile;
        }
        if (!ProcessLiveness.IsRunning(pid!.Value))
            return (null, $"no process {pid}");
        return ByPid(pid.Value);
    }

    private (MonitorAnnouncement?, string) ByPid(int pid)
    {
        foreach (string path in AnnouncementPaths(pid))
            if (Path.Exists(path) && Check(path, announcement => announcement.Pid == pid) is { } announcement)
                return (announcement, "");
        return (null, $"process {pid} has no trustworthy announcement (is it a Diagnostics.Server with its HTTP listener on? looked in {string.Join(", ", AnnouncementPaths(pid))})");
    }

    private (MonitorAnnouncement?, string) ByPort(int port)
    {
        var searched = new List<string>();
        foreach (string directory in AllDirectories())
        {
            searched.Add(directory);
            if (!Directory.Exists(directory) || !IsTrustworthy(directory))
                continue;
            foreach (string file in FilesIn(directory))
                if (Check(file, announcement => announcement.Port == port && ProcessLiveness.IsRunning(announcement.Pid)) is { } announcement)
                    return (announcement, "");
        }
        return (null, $"no running server announces RESP port {port} (looked in {string.Join(", ", searched)})");
    }

    /// <summary>The announcement at <paramref name="path"/> if it is the one wanted and may be trusted; logs why not if it may not.</summary>
    private MonitorAnnouncement? Check(string path, Func<MonitorAnnouncement, bool> wanted)
    {
        if (!OperatingSystem.IsLinux())
            return Read(path) is { } plain && wanted(plain) ? plain : null;
        var (announcement, problem) = AnnouncementVerifier.Verify(path, wanted);
        if (IsNews(path, problem))
            log.LogWarning("Ignored announcement {Path}: {Why}", path, problem);
        return problem is null ? announcement : null;
    }

    /// <summary>
    /// Whether a folder may hold a trustworthy announcement: one that cannot is logged once as a
    /// whole and not listed, however many files someone put in it.
    /// </summary>
    private bool IsTrustworthy(string directory)
    {
        if (!OperatingSystem.IsLinux())
            return true;
        string? problem = FolderTrust.Check(directory, closedToOthers: true).Problem;
        if (IsNews(directory, problem))
            log.LogWarning("Ignored announcements in {Folder}: {Why}", directory, problem);
        return problem is null;
    }

    /// <summary>The folder's announcements; none when it went away meanwhile (any user may remove a folder of theirs at any time).</summary>
    private static string[] FilesIn(string directory)
    {
        try
        {
            return Directory.GetFiles(directory, "*.json");
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return [];
        }
    }

    /// <summary>Remembers why a file or folder was ignored (null: it was not); true when that is new.</summary>
    private bool IsNews(string subject, string? problem)
    {
        if (problem is null)
        {
            _ignored.Remove(subject);
            return false;
        }
        bool news = !_ignored.TryGetValue(subject, out string? last) || last != problem;
        _ignored[subject] = problem;
        return news;
    }

    private IEnumerable<string> AnnouncementPaths(int pid)
    {
        if (options.AnnouncementFile is { } explicitFile)
            return [explicitFile];
        var environment = ProcessIdentity.EnvironmentOf(pid);
        var paths = new List<string>();
        foreach (string directory in AnnouncementDirectories.Candidates(ProcessIdentity.UserOf(pid) ?? 0, name => environment.GetValueOrDefault(name)))
            paths.Add(Path.Combine(directory, AnnouncementDirectories.FileName(pid)));
        return paths;
    }

    /// <summary>Every directory any user's server may have used: for a search by port.</summary>
    private IEnumerable<string> AllDirectories()
    {
        if (options.AnnouncementFile is { } explicitFile)
            return [Path.GetDirectoryName(explicitFile)!];
        var directories = new List<string> { "/run/" + MonitorAnnouncement.DirectoryName };
        if (Directory.Exists("/run/user"))
            foreach (string user in Directory.GetDirectories("/run/user"))
                directories.Add(Path.Combine(user, MonitorAnnouncement.DirectoryName));
        foreach (string directory in Directory.GetDirectories(OperatingSystem.IsWindows() ? Path.GetTempPath() : "/tmp", MonitorAnnouncement.DirectoryName + "-*"))
            directories.Add(directory);
        return directories;
    }

    /// <summary>Windows: the announcement as written, without the Linux checks of owners and sockets.</summary>
    private static MonitorAnnouncement? Read(string path)
    {
        try
        {
            return JsonSerializer.Deserialize(File.ReadAllText(path), ContractsJson.Default.MonitorAnnouncement);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or JsonException)
        {
            return null;
        }
    }
}
