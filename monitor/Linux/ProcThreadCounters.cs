using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Monitor.Linux;

/// <summary>Every server thread's /proc/PID/task/TID/io and comm: the kernel's cumulative counters beside the traced events.</summary>
public static class ProcThreadCounters
{
    public static List<ThreadKernelCounters> Read(int pid)
    {
        var threads = new List<ThreadKernelCounters>();
        foreach (int tid in ServerThreads.Of(pid))
        {
            try
            {
                string directory = $"/proc/{pid}/task/{tid}/";
                string name = File.ReadAllText(directory + "comm").TrimEnd('\n');
                var figures = new Dictionary<string, long>(StringComparer.Ordinal);
                foreach (string line in File.ReadAllLines(directory + "io"))
                {
                    int colon = line.IndexOf(':');
                    if (colon > 0 && long.TryParse(line.AsSpan(colon + 1).Trim(), CultureInfo.InvariantCulture, out long value))
                        figures[line[..colon]] = value;
                }
                threads.Add(new ThreadKernelCounters(tid, name, new KernelIoCounters(
                    figures.GetValueOrDefault("rchar"), figures.GetValueOrDefault("wchar"), figures.GetValueOrDefault("syscr"), figures.GetValueOrDefault("syscw"),
                    figures.GetValueOrDefault("read_bytes"), figures.GetValueOrDefault("write_bytes"), figures.GetValueOrDefault("cancelled_write_bytes"))));
            }
            catch (IOException)
            {
                // The thread ended between the listing and the read.
            }
        }
        return threads;
    }
}
