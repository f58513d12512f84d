using System.Diagnostics;
using System.Net.Http.Json;
using Diagnostics.Contracts;

namespace Diagnostics.Benchmarks;

/// <summary>
/// The real monitor attached to our server for a run: started as its own process (as root, as it
/// must be), waited for until the server reports it attached, read through GET /api/monitor, and
/// stopped with SIGTERM so it removes its tracefs instances.
/// </summary>
public sealed class MonitorAttachment : IDisposable
{
    private readonly Process _process;
    private readonly HttpClient _http;

    private MonitorAttachment(Process process, int httpPort)
    {
        _process = process;
        _http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{httpPort}/"), Timeout = TimeSpan.FromSeconds(10) };
    }

    public int Pid => _process.Id;

    public static MonitorAttachment Attach(ServerUnderTest server)
    {
        if (!File.ReadAllText("/proc/self/status").Contains("Uid:\t0\t", StringComparison.Ordinal))
            throw new HarnessException("the monitor suite attaches the monitor, which must run as root: run the harness with sudo");
        string dll = MonitorAssembly();
        var info = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string a in (string[])[dll, "--pid", server.Pid.ToString(System.Globalization.CultureInfo.InvariantCulture)])
            info.ArgumentList.Add(a);
        var process = Process.Start(info) ?? throw new HarnessException("could not start the monitor");
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var attachment = new MonitorAttachment(process, server.HttpPort ?? throw new HarnessException("our server has no HTTP port"));
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            var report = attachment.Report();
            if (report.Attached && report.Status?.MonitorPid == process.Id && SyscallSource(report) is { State: "running" })
                return attachment;
            if (process.HasExited || deadline.Elapsed > TimeSpan.FromSeconds(30))
            {
                attachment.Dispose();
                throw new HarnessException($"the monitor did not attach within 30 s (exit code {(process.HasExited ? process.ExitCode : "none yet")})");
            }
            Thread.Sleep(200);
        }
    }

    public MonitorReport Report() => _http.GetFromJsonAsync("api/monitor", ContractsJson.Default.MonitorReport).GetAwaiter().GetResult()
        ?? throw new HarnessException("GET /api/monitor answered nothing");

    /// <summary>The syscall source's events and every loss so far, as the last batch reported them.</summary>
    public (long Events, long Dropped) Counts()
    {
        var report = Report();
        long dropped = report.Status?.DroppedBatches ?? 0;
        foreach (var source in report.Status?.Sources ?? [])
            dropped += source.DroppedAtSource + source.DroppedInMonitor;
        return (SyscallSource(report)?.TotalEvents ?? 0, dropped);
    }

    public TimeSpan CpuTime() => ProcStat.CpuTime(_process.Id) ?? TimeSpan.Zero;

    private static MonitorSourceStatus? SyscallSource(MonitorReport report)
    {
        foreach (var source in report.Status?.Sources ?? [])
            if (source.Name == "tracefs-syscalls")
                return source;
        return null;
    }

    /// <summary>monitor/bin/CONFIG/net10.0, built beside this harness (its project reference builds it).</summary>
    private static string MonitorAssembly()
    {
        var output = new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar));
        string repository = output.Parent!.Parent!.Parent!.Parent!.Parent!.FullName;
        string path = Path.Combine(repository, "monitor", "bin", output.Parent.Name, output.Name, "Diagnostics.Monitor.dll");
        return File.Exists(path) ? path : throw new HarnessException($"the monitor is not built at {path}");
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            Process.Start("kill", ["-TERM", _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)])!.WaitForExit();
            if (!_process.WaitForExit(TimeSpan.FromSeconds(15)))
                _process.Kill();
        }
        _process.WaitForExit();
        _process.Dispose();
        _http.Dispose();
    }
}
