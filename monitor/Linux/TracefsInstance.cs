using System.Globalization;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// A tracefs instance of the monitor's own (instances/diagnostics-monitor-PID-PURPOSE): its own
/// ring buffers, event switches, pid filter and clock, so that nothing the monitor does touches
/// the system's main trace or anyone else's instance. Removed on dispose; one left by a monitor
/// that was killed is removed by the next monitor's <see cref="RemoveStale"/>.
/// </summary>
public sealed class TracefsInstance : IDisposable
{
    public const string Prefix = "diagnostics-monitor-";
    private bool _disposed;

    private TracefsInstance(string root, string path)
    {
        Root = root;
        Path = path;
    }

    public string Root { get; }
    public string Path { get; }
    public string EventsDirectory => System.IO.Path.Combine(Path, "events");

    /// <summary>Where tracefs is mounted, mounting it at /sys/kernel/tracing when nothing is.</summary>
    public static string FindOrMountRoot()
    {
        foreach (string candidate in (string[])["/sys/kernel/tracing", "/sys/kernel/debug/tracing"])
            if (Directory.Exists(System.IO.Path.Combine(candidate, "instances")))
                return candidate;
        const string target = "/sys/kernel/tracing";
        if (Libc.mount("nodev", target, "tracefs", 0, 0) != 0)
        {
            int errno = System.Runtime.InteropServices.Marshal.GetLastPInvokeError();
            throw new InvalidOperationException($"tracefs is not mounted and mounting it at {target} failed: {Libc.ErrorText(errno)} (is the kernel built with CONFIG_FTRACE?)");
        }
        return target;
    }

    /// <summary>Creates this monitor's instance for <paramref name="purpose"/>, replacing one of the same name.</summary>
    public static TracefsInstance Create(string root, string purpose)
    {
        string path = System.IO.Path.Combine(root, "instances", $"{Prefix}{Environment.ProcessId}-{purpose}");
        if (Directory.Exists(path))
            Remove(path);
        Directory.CreateDirectory(path);
        return new TracefsInstance(root, path);
    }

    /// <summary>Removes the instances of monitors that are no longer running (killed, crashed); returns their names.</summary>
    public static List<string> RemoveStale(string root)
    {
        var removed = new List<string>();
        string instances = System.IO.Path.Combine(root, "instances");
        if (!Directory.Exists(instances))
            return removed;
        foreach (string path in Directory.GetDirectories(instances, Prefix + "*"))
        {
            string name = System.IO.Path.GetFileName(path);
            string pidText = name[Prefix.Length..].Split('-')[0];
            if (int.TryParse(pidText, NumberStyles.None, CultureInfo.InvariantCulture, out int pid) && pid != Environment.ProcessId && IsMonitor(pid))
                continue;
            if (pid == Environment.ProcessId)
                continue;
            Remove(path);
            removed.Add(name);
        }
        return removed;
    }

    private static bool IsMonitor(int pid)
    {
        try
        {
            return File.ReadAllText($"/proc/{pid}/cmdline").Contains("Diagnostics.Monitor", StringComparison.Ordinal);
        }
        catch (IOException)
        {
            return false;
        }
    }

    public void Write(string file, string text) => File.WriteAllText(System.IO.Path.Combine(Path, file), text);

    public string Read(string file) => File.ReadAllText(System.IO.Path.Combine(Path, file));

    public EventFormat Format(string system, string name) => EventFormat.Load(EventsDirectory, system, name);

    public void Enable(EventFormat format, string? filter = null)
    {
        string directory = System.IO.Path.Combine(EventsDirectory, format.System, format.Name);
        if (filter is not null)
            File.WriteAllText(System.IO.Path.Combine(directory, "filter"), filter);
        File.WriteAllText(System.IO.Path.Combine(directory, "enable"), "1");
    }

    /// <summary>Only these threads' events are recorded, and (event-fork) the threads they start from now on.</summary>
    public void TraceOnly(IEnumerable<int> threadIds)
    {
        Write("options/event-fork", "1");
        Write("set_event_pid", string.Join(' ', threadIds));
    }

    /// <summary>
    /// Adds to set_event_pid the threads it lacks. event-fork only follows threads started by a
    /// traced thread: one started between reading /proc/PID/task and writing the filter, and
    /// every thread it starts in turn, would otherwise stay untraced for good. Returns how many
    /// were added.
    /// </summary>
    public int FollowThreads(List<int> threadIds)
    {
        var traced = new HashSet<int>();
        foreach (string line in File.ReadAllLines(System.IO.Path.Combine(Path, "set_event_pid")))
            if (int.TryParse(line, NumberStyles.None, CultureInfo.InvariantCulture, out int tid))
                traced.Add(tid);
        int added = 0;
        foreach (int tid in threadIds)
        {
            if (traced.Contains(tid))
                continue;
            // Appending adds to the filter; a plain write would replace it.
            try
            {
                using var filter = new FileStream(System.IO.Path.Combine(Path, "set_event_pid"), FileMode.Append, FileAccess.Write);
                filter.Write(System.Text.Encoding.ASCII.GetBytes(tid.ToString(CultureInfo.InvariantCulture)));
                added++;
            }
            catch (IOException)
            {
                // The thread ended before it could be added: the kernel refuses a pid it cannot find.
            }
        }
        return added;
    }

    /// <summary>The per-CPU files the ring buffers are read from, by CPU number.</summary>
    public List<(int Cpu, string Path)> CpuBuffers()
    {
        var buffers = new List<(int, string)>();
        foreach (string directory in Directory.GetDirectories(System.IO.Path.Combine(Path, "per_cpu"), "cpu*"))
            if (int.TryParse(System.IO.Path.GetFileName(directory).AsSpan(3), NumberStyles.None, CultureInfo.InvariantCulture, out int cpu))
                buffers.Add((cpu, System.IO.Path.Combine(directory, "trace_pipe_raw")));
        buffers.Sort(static (a, b) => a.Item1.CompareTo(b.Item1));
        return buffers;
    }

    /// <summary>Events the kernel could not keep (the buffer full) across all CPUs, from per_cpu/cpuN/stats.</summary>
    public long LostEvents()
    {
        long lost = 0;
        foreach (string directory in Directory.GetDirectories(System.IO.Path.Combine(Path, "per_cpu"), "cpu*"))
        {
            foreach (string line in File.ReadAllLines(System.IO.Path.Combine(directory, "stats")))
            {
                int colon = line.IndexOf(':');
                if (colon < 0)
                    continue;
                string key = line[..colon];
                if (key is "overrun" or "dropped events" && long.TryParse(line.AsSpan(colon + 1).Trim(), CultureInfo.InvariantCulture, out long n))
                    lost += n;
            }
        }
        return lost;
    }

    public void Dispose()
    {
        if (_disposed)
            return;
        _disposed = true;
        Remove(Path);
    }

    /// <summary>Stops an instance's recording and removes it; the kernel refuses while a buffer file is still open, so it retries briefly.</summary>
    private static void Remove(string path)
    {
        TryWrite(System.IO.Path.Combine(path, "tracing_on"), "0");
        TryWrite(System.IO.Path.Combine(path, "events", "enable"), "0");
        for (int attempt = 0; ; attempt++)
        {
            try
            {
                Directory.Delete(path);
                return;
            }
            catch (IOException) when (attempt < 50)
            {
                Thread.Sleep(20);
            }
        }
    }

    private static void TryWrite(string file, string text)
    {
        try
        {
            File.WriteAllText(file, text);
        }
        catch (IOException)
        {
        }
    }
}
