namespace Diagnostics.Contracts;

/// <summary>
/// Whether a process still runs: how a server tells a stale announcement from a live one, and how
/// the monitor tells whether the server it follows is still there.
/// </summary>
public static class ProcessLiveness
{
    public static bool IsRunning(int pid)
    {
        if (OperatingSystem.IsLinux())
            return Directory.Exists($"/proc/{pid}");
        try
        {
            using var process = System.Diagnostics.Process.GetProcessById(pid);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }
}
