using System.Buffers.Text;
using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Server.Diagnostics.Kernel;

/// <summary>
/// What Linux's /proc says about this process, its threads and the machine. Every reader returns
/// "nothing" rather than throwing when a file is missing or a thread has just exited, so a view
/// built from them degrades instead of failing. Read at most once a second, off the data path.
/// </summary>
public static class ProcFs
{
    /// <summary>Kernel clock ticks per second for /proc's utime and stime (USER_HZ, 100 on every Linux ABI .NET runs on).</summary>
    public const double TicksPerSecond = 100;

    public static bool Available => OperatingSystem.IsLinux() && Directory.Exists("/proc/self/task");

    /// <summary>The OS ids of this process's threads.</summary>
    public static List<int> ThreadIds()
    {
        var ids = new List<int>();
        if (!Available)
            return ids;
        try
        {
            foreach (string path in Directory.EnumerateDirectories("/proc/self/task"))
                if (int.TryParse(Path.GetFileName(path), NumberStyles.None, CultureInfo.InvariantCulture, out int tid))
                    ids.Add(tid);
        }
        catch (IOException)
        {
        }
        return ids;
    }

    /// <summary>A thread's name (comm, at most 15 characters) and CPU seconds in user and kernel mode.</summary>
    public static bool TryReadThreadStat(int tid, out string name, out double userSeconds, out double systemSeconds)
    {
        name = "";
        userSeconds = systemSeconds = 0;
        string? text = TryRead($"/proc/self/task/{tid}/stat");
        if (text is null)
            return false;
        // "tid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
        int open = text.IndexOf('(');
        int close = text.LastIndexOf(')');
        if (open < 0 || close < open)
            return false;
        name = text[(open + 1)..close];
        string[] fields = text[(close + 2)..].Split(' ');
        // After comm: state(0) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(11) stime(12).
        if (fields.Length < 13
            || !long.TryParse(fields[11], CultureInfo.InvariantCulture, out long utime)
            || !long.TryParse(fields[12], CultureInfo.InvariantCulture, out long stime))
            return false;
        userSeconds = utime / TicksPerSecond;
        systemSeconds = stime / TicksPerSecond;
        return true;
    }

    /// <summary>A thread's kernel I/O counters (/proc/self/task/TID/io), or null where the kernel does not keep them.</summary>
    public static KernelIoCounters? ReadThreadIo(int tid)
    {
        string? text = TryRead($"/proc/self/task/{tid}/io");
        if (text is null)
            return null;
        long rchar = 0, wchar = 0, syscr = 0, syscw = 0, readBytes = 0, writeBytes = 0, cancelled = 0;
        foreach (string line in text.Split('\n'))
        {
            int colon = line.IndexOf(':');
            if (colon < 0 || !long.TryParse(line.AsSpan(colon + 1).Trim(), CultureInfo.InvariantCulture, out long value))
                continue;
            switch (line[..colon])
            {
                case "rchar": rchar = value; break;
                case "wchar": wchar = value; break;
                case "syscr": syscr = value; break;
                case "syscw": syscw = value; break;
                case "read_bytes": readBytes = value; break;
                case "write_bytes": writeBytes = value; break;
                case "cancelled_write_bytes": cancelled = value; break;
            }
        }
        return new KernelIoCounters(rchar, wchar, syscr, syscw, readBytes, writeBytes, cancelled);
    }

    /// <summary>The machine's CPU time so far (all CPUs, in ticks): busy and total, from /proc/stat's first line.</summary>
    public static bool TryReadMachineCpu(out long busyTicks, out long totalTicks)
    {
        busyTicks = totalTicks = 0;
        string? text = TryRead("/proc/stat");
        if (text is null)
            return false;
        int end = text.IndexOf('\n');
        string[] fields = text[..(end < 0 ? text.Length : end)].Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (fields.Length < 5 || fields[0] != "cpu")
            return false;
        long idle = 0;
        for (int i = 1; i < fields.Length; i++)
        {
            if (!long.TryParse(fields[i], CultureInfo.InvariantCulture, out long value))
                return false;
            // user nice system idle(4) iowait(5) irq softirq steal guest guest_nice: guest time is already in user.
            if (i >= 9)
                break;
            totalTicks += value;
            if (i is 4 or 5)
                idle += value;
        }
        busyTicks = totalTicks - idle;
        return true;
    }

    /// <summary>Resident set size from /proc/self/statm, or the working set where there is no /proc.</summary>
    public static long ResidentBytes()
    {
        // "size resident shared text lib data dt" in pages, read into the stack: INFO memory and
        // the sampler ask for it, and a File.ReadAllText here cost kilobytes of garbage a call.
        Span<byte> statm = stackalloc byte[128];
        int length = TryReadInto("/proc/self/statm", statm);
        if (length > 0)
        {
            var fields = statm[..length];
            int space = fields.IndexOf((byte)' ');
            if (space > 0)
            {
                fields = fields[(space + 1)..];
                int end = fields.IndexOfAny((byte)' ', (byte)'\n');
                if (Utf8Parser.TryParse(end < 0 ? fields : fields[..end], out long pages, out _))
                    return pages * Environment.SystemPageSize;
            }
        }
        return Environment.WorkingSet;
    }

    /// <summary>The start of a small /proc file into <paramref name="buffer"/>: the bytes read, or 0 when it cannot be read.</summary>
    public static int TryReadInto(string path, Span<byte> buffer)
    {
        try
        {
            using var handle = File.OpenHandle(path);
            return RandomAccess.Read(handle, buffer, 0);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return 0;
        }
    }

    /// <summary>A "Name:   123 kB" line of /proc/meminfo in bytes, or null.</summary>
    public static long? MemInfoBytes(string field)
    {
        string? text = TryRead("/proc/meminfo");
        if (text is null)
            return null;
        foreach (string line in text.Split('\n'))
        {
            if (!line.StartsWith(field, StringComparison.Ordinal) || line.Length <= field.Length || line[field.Length] != ':')
                continue;
            string[] parts = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length >= 2 && long.TryParse(parts[1], CultureInfo.InvariantCulture, out long kb))
                return kb * 1024;
        }
        return null;
    }

    /// <summary>The whole of a small /proc or /sys file, or null when it cannot be read.</summary>
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
