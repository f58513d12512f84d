using System.Globalization;

namespace Diagnostics.Monitor.Attach;

/// <summary>
/// Who a process is, from /proc (readable by root for every process): its effective user, its
/// environment (which says where it wrote its files) and its network namespace (whose ports it
/// listens on).
/// </summary>
public static class ProcessIdentity
{
    /// <summary>The effective uid, or null when the process is not running.</summary>
    public static uint? UserOf(int pid)
    {
        if (pid <= 0)
            return null;
        foreach (string line in (TryRead($"/proc/{pid}/status") ?? "").Split('\n'))
            if (line.StartsWith("Uid:", StringComparison.Ordinal))
                return uint.Parse(line.Split('\t', StringSplitOptions.RemoveEmptyEntries)[2], CultureInfo.InvariantCulture);
        return null;
    }

    public static Dictionary<string, string> EnvironmentOf(int pid)
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

    /// <summary>
    /// Whether the process's loopback is this monitor's: in another network namespace,
    /// 127.0.0.1:PORT is somebody else.
    /// </summary>
    public static bool SharesNetworkWithMonitor(int pid)
    {
        try
        {
            string? mine = new FileInfo("/proc/self/ns/net").LinkTarget;
            return mine is not null && mine == new FileInfo($"/proc/{pid}/ns/net").LinkTarget;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    public static string? TryRead(string path)
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
