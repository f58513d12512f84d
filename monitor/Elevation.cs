using System.Security.Principal;

namespace Diagnostics.Monitor;

/// <summary>Whether this process may do what the monitor does, and in words what it needs when it may not.</summary>
public static class Elevation
{
    public static bool IsElevated()
    {
        if (OperatingSystem.IsWindows())
        {
            using var identity = WindowsIdentity.GetCurrent();
            return new WindowsPrincipal(identity).IsInRole(WindowsBuiltInRole.Administrator);
        }
        return Linux.Libc.geteuid() == 0;
    }

    public static string Requirement() => OperatingSystem.IsWindows()
        ? "Diagnostics.Monitor must run as Administrator: it starts an ETW kernel session (FileIO, DiskIO, Thread and Process events), which Windows allows only to administrators, and opens an EventPipe session on the server process. Run it from an elevated prompt, or install it as a Windows service."
        : $"Diagnostics.Monitor must run as root (it runs as uid {Linux.Libc.geteuid()}): it creates a tracefs instance and enables the kernel's syscall and block tracepoints (/sys/kernel/tracing), reads other processes' /proc/PID/fd and io, and opens an EventPipe session on the server process. Run it with sudo, or as the systemd service (monitor/diagnostics-monitor.service).";
}
