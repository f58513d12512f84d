using System.Globalization;
using System.Runtime.InteropServices;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Info;
using Diagnostics.Server.Diagnostics.Kernel;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>
/// The machine as the process sees it: CPUs, memory, the cgroup limits that bound them in a
/// container, load and descriptors. What an operator asks first when a server misbehaves on a
/// host they cannot log in to.
/// </summary>
public static class EnvironmentView
{
    // Built at most once a second: counting /proc/self/fd stats every entry's target (the
    // enumerator asks whether a link is a directory), milliseconds with thousands of clients, and
    // the cgroup files a host lacks cost an exception each. A second-old report is what anyone
    // asking (the doctor at every look, the studio) needs.
    private static EnvironmentReport? s_last;
    private static long s_lastBuiltMs = long.MinValue;

    public static EnvironmentReport Build()
    {
        long now = Environment.TickCount64;
        if (Volatile.Read(ref s_last) is { } last && now - Volatile.Read(ref s_lastBuiltMs) < 1000)
            return last;
        var report = BuildNow();
        Volatile.Write(ref s_last, report);
        Volatile.Write(ref s_lastBuiltMs, now);
        return report;
    }

    private static EnvironmentReport BuildNow()
    {
        double[] load = [];
        if (ProcFs.TryRead("/proc/loadavg") is { } loadText)
        {
            string[] parts = loadText.Split(' ');
            if (parts.Length >= 3)
                load = [Parse(parts[0]), Parse(parts[1]), Parse(parts[2])];
        }
        long uptime = ProcFs.TryRead("/proc/uptime") is { } uptimeText ? (long)Parse(uptimeText.Split(' ')[0]) : Environment.TickCount64 / 1000;
        return new EnvironmentReport
        {
            Host = Environment.MachineName,
            OperatingSystem = RuntimeInformation.OSDescription,
            KernelRelease = InfoBuilder.KernelRelease,
            Architecture = InfoBuilder.ArchitectureName(),
            Framework = RuntimeInformation.FrameworkDescription,
            ProcessorCount = Environment.ProcessorCount,
            CpuModel = CpuModel(),
            TotalMemoryBytes = InfoBuilder.TotalSystemMemory,
            AvailableMemoryBytes = ProcFs.MemInfoBytes("MemAvailable") ?? 0,
            CgroupMemoryLimitBytes = CgroupMemoryLimit(),
            CgroupCpuLimit = CgroupCpuLimit(),
            Container = Container(),
            LoadAverage = load,
            UptimeSeconds = uptime,
            ProcessPath = Environment.ProcessPath ?? "",
            WorkingDirectory = Environment.CurrentDirectory,
            ProcessId = Environment.ProcessId,
            OpenFileDescriptors = OpenDescriptors(),
            MaxFileDescriptors = MaxDescriptors(),
        };
    }

    private static double Parse(string text) => double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double value) ? value : 0;

    private static string CpuModel()
    {
        foreach (string line in (ProcFs.TryRead("/proc/cpuinfo") ?? "").Split('\n'))
            if (line.StartsWith("model name", StringComparison.Ordinal) && line.IndexOf(':') is > 0 and int colon)
                return line[(colon + 1)..].Trim();
        return "";
    }

    /// <summary>cgroup v2's memory.max, else v1's limit; "max" and v1's huge sentinel mean no limit.</summary>
    private static long? CgroupMemoryLimit()
    {
        string? text = ProcFs.TryRead("/sys/fs/cgroup/memory.max") ?? ProcFs.TryRead("/sys/fs/cgroup/memory/memory.limit_in_bytes");
        if (text is null || !long.TryParse(text.Trim(), CultureInfo.InvariantCulture, out long limit))
            return null;
        return limit >= long.MaxValue / 2 ? null : limit;
    }

    /// <summary>cgroup v2's cpu.max "quota period" as cores, else v1's quota over period.</summary>
    private static double? CgroupCpuLimit()
    {
        if (ProcFs.TryRead("/sys/fs/cgroup/cpu.max") is { } text)
        {
            string[] parts = text.Trim().Split(' ');
            if (parts.Length == 2 && long.TryParse(parts[0], CultureInfo.InvariantCulture, out long quota) && long.TryParse(parts[1], CultureInfo.InvariantCulture, out long period) && period > 0)
                return (double)quota / period;
            return null;
        }
        if (ProcFs.TryRead("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") is { } v1Quota && ProcFs.TryRead("/sys/fs/cgroup/cpu/cpu.cfs_period_us") is { } v1Period
            && long.TryParse(v1Quota.Trim(), CultureInfo.InvariantCulture, out long q) && q > 0 && long.TryParse(v1Period.Trim(), CultureInfo.InvariantCulture, out long p) && p > 0)
            return (double)q / p;
        return null;
    }

    private static string? Container()
    {
        if (Environment.GetEnvironmentVariable("KUBERNETES_SERVICE_HOST") is not null)
            return "kubernetes";
        if (File.Exists("/.dockerenv"))
            return "docker";
        if (File.Exists("/run/.containerenv"))
            return "podman";
        if (Environment.GetEnvironmentVariable("container") is { Length: > 0 } name)
            return name;
        string cgroup = ProcFs.TryRead("/proc/1/cgroup") ?? "";
        foreach (string marker in new[] { "docker", "kubepods", "containerd", "lxc" })
            if (cgroup.Contains(marker, StringComparison.Ordinal))
                return marker;
        return null;
    }

    private static long OpenDescriptors()
    {
        try
        {
            return Directory.Exists("/proc/self/fd") ? Directory.EnumerateFileSystemEntries("/proc/self/fd").LongCount() : 0;
        }
        catch (IOException)
        {
            return 0;
        }
    }

    private static long MaxDescriptors()
    {
        foreach (string line in (ProcFs.TryRead("/proc/self/limits") ?? "").Split('\n'))
        {
            if (!line.StartsWith("Max open files", StringComparison.Ordinal))
                continue;
            string[] parts = line["Max open files".Length..].Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length > 0 && long.TryParse(parts[0], CultureInfo.InvariantCulture, out long soft))
                return soft;
        }
        return 0;
    }
}
