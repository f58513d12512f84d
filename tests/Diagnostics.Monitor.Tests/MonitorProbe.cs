using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>Reads GET /api/monitor and waits for the monitor to attach.</summary>
public static class MonitorProbe
{
    public static MonitorReport Report(ApiClient api) => api.Get("/api/monitor", ContractsJson.Default.MonitorReport);

    /// <summary>Waits until the server reports the monitor attached with its syscall source running.</summary>
    public static MonitorReport WaitAttached(ApiClient api, MonitorProcess monitor, string source = "tracefs-syscalls")
    {
        MonitorReport report = null!;
        Poll.Until(() => (report = Report(api)).Attached && report.Status!.MonitorPid == monitor.Pid && report.Status.Sources.Any(s => s.Name == source && s.State == "running") || monitor.HasExited,
            $"the monitor to attach with {source} running", 30_000);
        Assert.False(monitor.HasExited, "the monitor exited:\n" + monitor.Output);
        return report;
    }

    /// <summary>The sources and the targets seen, for a failure message that shows where the events went.</summary>
    public static string Describe(MonitorReport report)
    {
        var text = new System.Text.StringBuilder();
        foreach (var source in report.Status?.Sources ?? [])
            text.Append("source ").Append(source.Name).Append(": ").Append(source.State).Append(", ").Append(source.Detail)
                .Append(", events ").Append(source.TotalEvents).Append(", dropped ").Append(source.DroppedAtSource).Append('+').Append(source.DroppedInMonitor).Append('\n');
        foreach (var row in report.ByTarget)
            text.Append(row.Target).Append(' ').Append(row.Operation).Append(": ").Append(row.Count).Append(" calls, ").Append(row.Bytes).Append(" bytes\n");
        return text.ToString();
    }

    public static MonitorSourceStatus Source(MonitorReport report, string name) =>
        report.Status!.Sources.FirstOrDefault(s => s.Name == name) ?? throw new InvalidOperationException($"no source {name} in {string.Join(", ", report.Status.Sources.Select(s => s.Name))}");
}
