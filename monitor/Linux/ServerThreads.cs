using System.Globalization;

namespace Diagnostics.Monitor.Linux;

/// <summary>The threads of a process, from /proc/PID/task.</summary>
public static class ServerThreads
{
    public static List<int> Of(int pid)
    {
        var threads = new List<int>();
        try
        {
            foreach (string directory in Directory.GetDirectories($"/proc/{pid}/task"))
                if (int.TryParse(Path.GetFileName(directory), NumberStyles.None, CultureInfo.InvariantCulture, out int tid))
                    threads.Add(tid);
        }
        catch (DirectoryNotFoundException)
        {
        }
        return threads;
    }

    public static bool IsThreadOf(int pid, int tid) => tid > 0 && Directory.Exists($"/proc/{pid}/task/{tid}");
}
