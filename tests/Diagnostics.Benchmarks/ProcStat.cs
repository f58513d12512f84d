using System.Globalization;
using System.Runtime.InteropServices;

namespace Diagnostics.Benchmarks;

/// <summary>
/// CPU time of processes from Linux's /proc/&lt;pid&gt;/stat: one process (all its threads, also
/// exited ones), or process trees (a browser's renderer, GPU and utility processes).
/// </summary>
public static class ProcStat
{
    /// <summary>utime + stime of one process; null when it is gone or /proc cannot be read.</summary>
    public static TimeSpan? CpuTime(int pid) => Read(pid) is { } stat ? Seconds(stat.Ticks) : null;

    /// <summary>
    /// utime + stime of every child of <paramref name="parent"/> named <paramref name="name"/>
    /// (comm) and all their living descendants, from one pass over /proc.
    /// </summary>
    public static TimeSpan TreeCpuTime(int parent, string name)
    {
        var stats = new Dictionary<int, Stat>();
        var children = new Dictionary<int, List<int>>();
        foreach (string dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), NumberStyles.None, CultureInfo.InvariantCulture, out int pid) || Read(pid) is not { } stat)
                continue;
            stats[pid] = stat;
            if (!children.TryGetValue(stat.ParentPid, out var list))
                children[stat.ParentPid] = list = [];
            list.Add(pid);
        }
        long total = 0;
        var pending = new Stack<int>();
        foreach (int child in children.GetValueOrDefault(parent) ?? [])
        {
            if (stats[child].Name == name)
                pending.Push(child);
        }
        while (pending.Count > 0)
        {
            int pid = pending.Pop();
            total += stats[pid].Ticks;
            foreach (int child in children.GetValueOrDefault(pid) ?? [])
                pending.Push(child);
        }
        return Seconds(total);
    }

    private readonly record struct Stat(string Name, int ParentPid, long Ticks);

    private static Stat? Read(int pid)
    {
        string text;
        try
        {
            text = File.ReadAllText($"/proc/{pid}/stat");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
        // The command name (field 2) is in parentheses and may hold spaces; fields count on from
        // the last ')': state is field 3, ppid field 4, utime field 14, stime field 15.
        int open = text.IndexOf('('), close = text.LastIndexOf(')');
        string[] fields = text[(close + 2)..].Split(' ');
        long ticks = long.Parse(fields[14 - 3], CultureInfo.InvariantCulture) + long.Parse(fields[15 - 3], CultureInfo.InvariantCulture);
        return new Stat(text[(open + 1)..close], int.Parse(fields[4 - 3], CultureInfo.InvariantCulture), ticks);
    }

    private static TimeSpan Seconds(long ticks) => TimeSpan.FromSeconds(ticks / (double)ClockTicksPerSecond);

    private static readonly long ClockTicksPerSecond = ReadClockTicksPerSecond();

    private static long ReadClockTicksPerSecond()
    {
        const int scClockTicks = 2; // _SC_CLK_TCK in glibc and musl
        long ticks = sysconf(scClockTicks);
        return ticks > 0 ? ticks : 100;
    }

    // C's long: 64 bits on 64-bit Linux, hence nint.
    [DllImport("libc")]
    private static extern nint sysconf(int name);
}
