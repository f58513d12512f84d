using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// The kernel saw a server thread write to files far more than the server accounted for: a
/// writer outside the accounting (a log file on disk, a library, a dump) that the studio's disk
/// figures do not show. Only with a monitor attached.
/// </summary>
public sealed class UnaccountedWritesRule : IDoctorRule
{
    /// <summary>Below this the difference is timing between the two counts, not a writer.</summary>
    private const long MinimumBytes = 1 << 20;

    public string Id => "unaccounted-writes";
    public string Area => "disk";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.Monitor is not { Attached: true } monitor)
            yield break;
        foreach (var row in monitor.Comparison)
        {
            long unaccounted = row.KernelFileWriteBytes - row.ServerDiskWriteBytes;
            if (unaccounted < MinimumBytes || unaccounted < row.KernelFileWriteBytes / 10)
                continue;
            string files = TopFiles(monitor, row.ThreadId);
            yield return new Finding
            {
                Rule = Id,
                Area = Area,
                Severity = FindingSeverity.Warning,
                Title = $"Writes the server did not account for: thread {row.ThreadId} ({row.ThreadName})",
                Seen = $"Since the monitor attached the kernel saw thread {row.ThreadId} write {row.KernelFileWriteBytes:N0} bytes to files; the server accounted {row.ServerDiskWriteBytes:N0}. Files it wrote: {files}.",
                Advice = "Something in the process writes to disk outside the server's accounting (a log file, a library): the Disk I/O page's kernel view names the files. Move it off the data disk or account for it.",
                Evidence = new()
                {
                    ["thread"] = row.ThreadId.ToString(CultureInfo.InvariantCulture),
                    ["kernel_write_bytes"] = row.KernelFileWriteBytes.ToString(CultureInfo.InvariantCulture),
                    ["server_write_bytes"] = row.ServerDiskWriteBytes.ToString(CultureInfo.InvariantCulture),
                },
                Chart = MetricNames.DiskWriteBytesPerSecond,
            };
        }
    }

    private static string TopFiles(MonitorReport monitor, int threadId)
    {
        var events = new HashSet<string>(StringComparer.Ordinal);
        foreach (var e in monitor.RecentEvents)
            if (e.ThreadId == threadId && e.Call.Contains("write", StringComparison.Ordinal) && e.Target.StartsWith('/'))
                events.Add(e.Target);
        return events.Count == 0 ? "(none in the latest events)" : string.Join(", ", events);
    }
}
