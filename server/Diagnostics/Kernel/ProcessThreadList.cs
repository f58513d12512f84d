using System.Diagnostics;

namespace Diagnostics.Server.Diagnostics.Kernel;

/// <summary>One thread of this process as the operating system sees it.</summary>
/// <param name="Id">The OS thread id (the tid on Linux), the id EventPipe samples carry.</param>
/// <param name="Name">The OS-level name (Linux comm: a managed Thread.Name cut to 15 bytes), or null.</param>
/// <param name="State">The scheduler state ("S (sleeping)", "R (running)"...), or null.</param>
internal readonly record struct ThreadListEntry(int Id, string? Name, string? State);

/// <summary>
/// The threads of this process from the OS, without touching any of them: /proc/self/task on
/// Linux (names and states), the process's thread list elsewhere (ids and states only).
/// </summary>
internal static class ProcessThreadList
{
    private const string TaskDirectory = "/proc/self/task";

    public static bool HasProcTasks => Directory.Exists(TaskDirectory);

    /// <summary>Every thread of this process, by id; never throws (an unreadable thread is skipped).</summary>
    public static IReadOnlyList<ThreadListEntry> List()
    {
        var threads = new List<ThreadListEntry>();
        try
        {
            if (HasProcTasks)
            {
                foreach (int id in ProcFs.ThreadIds())
                    threads.Add(new ThreadListEntry(id, ReadName(id), ReadState(id)));
            }
            else
            {
                using var process = Process.GetCurrentProcess();
                foreach (ProcessThread thread in process.Threads)
                {
                    using (thread)
                        threads.Add(new ThreadListEntry(thread.Id, null, thread.ThreadState.ToString()));
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidOperationException or NotSupportedException or PlatformNotSupportedException)
        {
            // A partial list is still worth reporting.
        }
        threads.Sort(static (a, b) => a.Id.CompareTo(b.Id));
        return threads;
    }

    /// <summary>The OS name of thread <paramref name="id"/> of this process, or null where the OS keeps none.</summary>
    public static string? ReadName(int id)
    {
        string? comm = ReadTaskFile(id, "comm");
        return string.IsNullOrWhiteSpace(comm) ? null : comm.TrimEnd('\n');
    }

    /// <summary>The "State:" line of /proc/self/task/id/status ("S (sleeping)"), or null.</summary>
    public static string? ReadState(int id)
    {
        string? status = ReadTaskFile(id, "status");
        if (status is null)
            return null;
        foreach (string line in status.Split('\n'))
        {
            if (line.StartsWith("State:", StringComparison.Ordinal))
                return line["State:".Length..].Trim();
        }
        return null;
    }

    // Null when the thread ended meanwhile, or this is not Linux.
    private static string? ReadTaskFile(int id, string file) => ProcFs.TryRead($"{TaskDirectory}/{id}/{file}");
}
