using System.Globalization;
using System.Text.Json;
using Diagnostics.Contracts;

namespace Diagnostics.Monitor.Attach;

/// <summary>
/// Finds the server to attach to and reads its announcement: by pid, by the pid in its pidfile, or
/// by scanning the announcement directories for its RESP port. The server's own user and
/// environment (/proc/PID/status and environ, readable by root) say which directories it used.
/// </summary>
public sealed class ServerLocator(MonitorOptions options)
{
    /// <summary>The server and its announcement, or null with why not (yet).</summary>
    public (MonitorAnnouncement? Server, string Why) Locate()
    {
        if (options.Port is int port)
            return ByPort(port);
        int? pid = options.Pid;
        if (options.PidFile is { } pidFile)
        {
            string? text = TryRead(pidFile);
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
            if (Read(path) is { } announcement && announcement.Pid == pid)
                return (announcement, "");
        return (null, $"process {pid} has no announcement (is it a Diagnostics.Server with its HTTP listener on? looked in {string.Join(", ", AnnouncementPaths(pid))})");
    }

    private (MonitorAnnouncement?, string) ByPort(int port)
    {
        var searched = new List<string>();
        foreach (string directory in AllDirectories())
        {
            searched.Add(directory);
            if (!Directory.Exists(directory))
                continue;
            foreach (string file in Directory.GetFiles(directory, "*.json"))
                if (Read(file) is { } announcement && announcement.Port == port && ProcessLiveness.IsRunning(announcement.Pid))
                    return (announcement, "");
        }
        return (null, $"no running server announces RESP port {port} (looked in {string.Join(", ", searched)})");
    }

    private IEnumerable<string> AnnouncementPaths(int pid)
    {
        if (options.AnnouncementFile is { } explicitFile)
            return [explicitFile];
        var environment = ProcessEnvironment(pid);
        var paths = new List<string>();
        foreach (string directory in AnnouncementDirectories.Candidates(UserOf(pid), name => environment.GetValueOrDefault(name)))
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

    private static uint UserOf(int pid)
    {
        foreach (string line in (TryRead($"/proc/{pid}/status") ?? "").Split('\n'))
            if (line.StartsWith("Uid:", StringComparison.Ordinal))
                return uint.Parse(line.Split('\t', StringSplitOptions.RemoveEmptyEntries)[2], CultureInfo.InvariantCulture);
        return 0;
    }

    private static Dictionary<string, string> ProcessEnvironment(int pid)
    {
        var environment = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (string entry in (TryRead($"/proc/{pid}/environ") ?? "").Split('\0', StringSplitOptions.RemoveEmptyEntries))
        {
            int equals = entry.IndexOf('=');
            if (equals > 0)
                environment[entry[..equals]] = entry[(equals + 1)..];
        }
        return environment;
    }

    private static string? TryRead(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
