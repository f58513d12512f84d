using System.Diagnostics;
using Diagnostics.Contracts;
using Diagnostics.Monitor.Attach;
using Diagnostics.Monitor.Linux;
using Diagnostics.Monitor.Runtime;
using Diagnostics.Monitor.Streaming;
using Diagnostics.Monitor.Windows;

namespace Diagnostics.Monitor;

/// <summary>
/// The monitor's life: find the server, start the sources on it, cut and push a batch every
/// interval, and when the server goes, stop the sources (leaving nothing in the kernel) and look
/// for it again: a server followed by port or pidfile may restart under a new pid. It gives up
/// when a server named by pid exits, or a followed one stays away longer than --give-up-after.
/// </summary>
public sealed class MonitorService(MonitorOptions options, ILogger<MonitorService> log, IHostApplicationLifetime lifetime) : BackgroundService
{
    private readonly long _startedUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    // The monitor refuses to start unelevated, and a process's elevation does not change.
    private readonly bool _elevated = Elevation.IsElevated();
    private readonly Dictionary<string, string> _lastStates = new(StringComparer.Ordinal);

    protected override async Task ExecuteAsync(CancellationToken stopping)
    {
        try
        {
            await RunAsync(stopping);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            log.LogCritical(ex, "The monitor failed");
            Environment.ExitCode = 1;
        }
        finally
        {
            lifetime.StopApplication();
        }
    }

    private async Task RunAsync(CancellationToken stopping)
    {
        string? tracefs = null;
        if (OperatingSystem.IsLinux())
        {
            tracefs = TracefsInstance.FindOrMountRoot();
            foreach (string stale in TracefsInstance.RemoveStale(tracefs))
                log.LogWarning("Removed the tracefs instance {Instance} left by a monitor that is no longer running", stale);
        }
        var locator = new ServerLocator(options, log);
        var goneSince = Stopwatch.StartNew();
        string lastWhy = "";
        while (!stopping.IsCancellationRequested)
        {
            var (server, why) = locator.Locate();
            if (server is null)
            {
                if (options.Pid is not null || goneSince.Elapsed > options.GiveUpAfter)
                {
                    log.LogInformation("Server gone for good ({Why}); exiting", why);
                    return;
                }
                if (why != lastWhy)
                    log.LogInformation("Waiting for the server: {Why}", why);
                lastWhy = why;
                await Task.Delay(500, stopping);
                continue;
            }
            lastWhy = "";
            await AttachAsync(server, tracefs, stopping);
            goneSince.Restart();
        }
    }

    private async Task AttachAsync(MonitorAnnouncement server, string? tracefs, CancellationToken stopping)
    {
        var sources = new List<IEventSource>();
        IKernelIoSource? kernel = null;
        IKernelIoSource? block = null;
        EventPipeRuntimeSource? runtime = null;
        using var ingest = new IngestClient(server);
        var interval = Stopwatch.StartNew();
        long intervalStart = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        try
        {
            if (OperatingSystem.IsLinux())
            {
                kernel = new TracefsSyscallSource(server.Pid, tracefs!, options.BufferKilobytesPerCpu);
                if (options.Block)
                    block = new TracefsBlockSource(server.Pid, tracefs!, server.DataDirectory);
            }
            else if (OperatingSystem.IsWindows())
                kernel = new EtwKernelSource(server.Pid, log);
            if (options.Runtime)
                runtime = new EventPipeRuntimeSource(server.Pid, log);
            foreach (var source in (IEventSource?[])[kernel, block, runtime])
            {
                if (source is null)
                    continue;
                sources.Add(source);
                try
                {
                    source.Start();
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidOperationException or InvalidDataException)
                {
                    log.LogError("Source {Source} could not start: {Error}", source.Name, ex.Message);
                }
            }
            log.LogInformation("Attached to server pid {Pid}, pushing to {Url}", server.Pid, server.IngestUrl);
            interval.Restart();
            intervalStart = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            using var timer = new PeriodicTimer(options.Interval);
            string? lastError = null;
            while (await timer.WaitForNextTickAsync(stopping))
            {
                bool alive = ProcessLiveness.IsRunning(server.Pid);
                long end = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
                ingest.Enqueue(Cut(server.Pid, sources, kernel, block, runtime, interval.Elapsed, intervalStart, end, ingest.DroppedBatches));
                interval.Restart();
                intervalStart = end;
                if (ingest.LastError != lastError)
                {
                    if (ingest.LastError is not null)
                        log.LogWarning("Pushing to {Url} fails: {Error}", server.IngestUrl, ingest.LastError);
                    else
                        log.LogInformation("Pushing to {Url} works again", server.IngestUrl);
                    lastError = ingest.LastError;
                }
                if (!alive)
                {
                    log.LogInformation("Server pid {Pid} exited", server.Pid);
                    return;
                }
            }
        }
        catch (OperationCanceledException)
        {
            // Asked to stop: the last interval's batch is pushed below before the sources go.
            ingest.Enqueue(Cut(server.Pid, sources, kernel, block, runtime, interval.Elapsed, intervalStart, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), ingest.DroppedBatches));
        }
        finally
        {
            foreach (var source in sources)
                source.Dispose();
        }
    }

    private MonitorBatch Cut(int pid, List<IEventSource> sources, IKernelIoSource? kernel, IKernelIoSource? block, EventPipeRuntimeSource? runtime,
        TimeSpan interval, long start, long end, long droppedBatches)
    {
        var statuses = new List<MonitorSourceStatus>(sources.Count);
        foreach (var source in sources)
        {
            var status = source.Report(interval);
            statuses.Add(status);
            // Sources may start or fail on their own threads: say so once, when it changes.
            if (_lastStates.GetValueOrDefault(source.Name) != status.State)
            {
                if (status.State.StartsWith("failed", StringComparison.Ordinal))
                    log.LogError("Source {Source}: {State}", source.Name, status.State);
                else
                    log.LogInformation("Source {Source}: {State}", source.Name, status.State);
                _lastStates[source.Name] = status.State;
            }
        }
        var io = new List<KernelIoAggregate>();
        var events = new List<KernelIoEvent>();
        foreach (var source in (IKernelIoSource?[])[kernel, block])
        {
            if (source is null)
                continue;
            var (sums, sample) = source.Aggregator.Cut();
            io.AddRange(sums);
            events.AddRange(sample);
        }
        return new MonitorBatch
        {
            Status = new MonitorStatus
            {
                MonitorPid = Environment.ProcessId,
                ServerPid = pid,
                Host = Environment.MachineName,
                Platform = System.Runtime.InteropServices.RuntimeInformation.OSDescription,
                Version = typeof(MonitorService).Assembly.GetName().Version?.ToString() ?? "",
                Elevated = _elevated,
                StartedUnixMs = _startedUnixMs,
                Sources = statuses,
                DroppedBatches = droppedBatches,
            },
            StartUnixMs = start,
            EndUnixMs = end,
            Io = io,
            Events = events,
            Threads = OperatingSystem.IsLinux() ? ProcThreadCounters.Read(pid) : [],
            Runtime = runtime?.Aggregator.Cut(),
        };
    }
}
