using System.Diagnostics;
using System.Globalization;
using System.Text;
using Diagnostics.Server.Diagnostics.Kernel;

namespace Diagnostics.Server.Diagnostics.Stacks;

/// <summary>How one capture runs; the defaults are what the server uses, tests narrow them.</summary>
internal sealed record ManagedStacksOptions
{
    /// <summary>The process sampled: always this one, except in tests of the failure path.</summary>
    public int ProcessId { get; init; } = Environment.ProcessId;

    /// <summary>Where the capture makes its private work directory (deleted before returning).</summary>
    public string TempRoot { get; init; } = Path.GetTempPath();

    /// <summary>
    /// How long the sample profiler runs before the session is stopped. It samples every managed
    /// thread about once a millisecond, each time with a brief runtime suspension, so one tick
    /// is all a report needs and more only costs the server: dotnet-stack's 10 ms.
    /// </summary>
    public TimeSpan SampleDuration { get; init; } = TimeSpan.FromMilliseconds(10);

    /// <summary>The whole capture, waiting for a capture already running included.</summary>
    public TimeSpan Timeout { get; init; } = TimeSpan.FromSeconds(20);

    /// <summary>A trace larger than this is abandoned: it bounds disk, and the memory of its resolution.</summary>
    public long MaxTraceBytes { get; init; } = 64L * 1024 * 1024;

    public int MaxFramesPerThread { get; init; } = 256;
}

/// <summary>
/// The managed call stacks of all threads of this process, for the debug package, the best way
/// the platform allows without pausing the server, without elevation, and without user data (a
/// dump would carry keys and values): an EventPipe sample through the process's own diagnostics
/// IPC (<see cref="EventPipeStackSampler"/>). When that is impossible (IPC disabled by
/// DOTNET_EnableDiagnostics=0, a failure, the time limit) the report says why and falls back to
/// the OS thread list and the capturing thread's own stack. It never throws.
/// </summary>
public static class ManagedStacks
{
    // One capture at a time: concurrent debug requests wait for the running one rather than
    // stacking sample profiler sessions on the server.
    private static readonly SemaphoreSlim s_oneAtATime = new(1, 1);

    private const string WorkDirectoryPrefix = "diagnostics-stacks-";

    /// <summary>A readable report of every thread's managed stack, innermost frame first.</summary>
    public static Task<string> CaptureAsync(CancellationToken cancellationToken)
        => CaptureAsync(new ManagedStacksOptions(), cancellationToken);

    internal static async Task<string> CaptureAsync(ManagedStacksOptions options, CancellationToken cancellationToken)
    {
        DateTime startedAt = DateTime.UtcNow;
        var clock = Stopwatch.StartNew();
        using var limit = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        limit.CancelAfter(options.Timeout);
        string? workDirectory = null;
        bool entered = false;
        try
        {
            await s_oneAtATime.WaitAsync(limit.Token).ConfigureAwait(false);
            entered = true;
            workDirectory = CreateWorkDirectory(options.TempRoot);
            SampledStacks stacks = await EventPipeStackSampler.SampleAsync(
                options.ProcessId, workDirectory, options.SampleDuration, options.MaxTraceBytes,
                options.MaxFramesPerThread, limit.Token).ConfigureAwait(false);
            if (stacks.SampleCount == 0)
            {
                // The sampler thread got no tick in (a starved machine): one longer try.
                DeleteWorkDirectoryContents(workDirectory);
                stacks = await EventPipeStackSampler.SampleAsync(
                    options.ProcessId, workDirectory, options.SampleDuration * 10, options.MaxTraceBytes,
                    options.MaxFramesPerThread, limit.Token).ConfigureAwait(false);
            }
            return SampledReport(options, startedAt, clock.Elapsed, stacks);
        }
        catch (Exception e)
        {
            string reason = e is OperationCanceledException
                ? cancellationToken.IsCancellationRequested
                    ? "the caller cancelled the capture"
                    : $"the capture did not finish within {Milliseconds(options.Timeout)}"
                : $"{e.GetType().Name}: {e.Message}";
            return FallbackReport(options, startedAt, clock.Elapsed, reason);
        }
        finally
        {
            if (workDirectory is not null)
                DeleteWorkDirectory(workDirectory);
            if (entered)
                s_oneAtATime.Release();
        }
    }

    private static string CreateWorkDirectory(string tempRoot)
    {
        string path = Path.Combine(tempRoot, WorkDirectoryPrefix + Path.GetRandomFileName());
        // Owner-only: the trace holds nothing but method names, still nobody else's business.
        if (OperatingSystem.IsWindows())
            Directory.CreateDirectory(path);
        else
            Directory.CreateDirectory(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return path;
    }

    private static void DeleteWorkDirectoryContents(string path)
    {
        foreach (string file in Directory.EnumerateFiles(path))
            File.Delete(file);
    }

    private static void DeleteWorkDirectory(string path)
    {
        try
        {
            Directory.Delete(path, recursive: true);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Nothing else to do: the report has been made, the directory name says what it was.
        }
    }

    private static string SampledReport(ManagedStacksOptions options, DateTime startedAt, TimeSpan took, SampledStacks stacks)
    {
        IReadOnlyList<ThreadListEntry> osThreads = ProcessThreadList.List();
        var byId = new Dictionary<int, ThreadListEntry>(osThreads.Count);
        foreach (ThreadListEntry thread in osThreads)
            byId[thread.Id] = thread;

        var report = new StringBuilder();
        report.Append(CultureInfo.InvariantCulture,
            $"# Managed stacks of all threads of process {options.ProcessId}, captured {startedAt:yyyy-MM-ddTHH:mm:ss.fffZ}\n");
        report.Append(CultureInfo.InvariantCulture,
            $"# Method: an EventPipe session on the process's own diagnostics IPC (Microsoft-DotNETCore-SampleProfiler for {Milliseconds(stacks.SampleDuration)}, then a method rundown), resolved with TraceEvent; no memory is read, so no user data.\n");
        report.Append(CultureInfo.InvariantCulture,
            $"# Took {Milliseconds(took)}: session {Milliseconds(stacks.SessionTime)} ({stacks.TraceBytes} trace bytes, {stacks.SampleCount} samples), resolution {Milliseconds(stacks.ResolveTime)}.\n");
        report.Append(CultureInfo.InvariantCulture,
            $"# {stacks.Threads.Count} threads with a managed sample, {osThreads.Count} OS threads. Each stack is the thread's most recent sample, innermost frame first; [Native Frames] is runtime or OS code.\n");

        var sampled = new HashSet<int>();
        foreach (SampledThread thread in stacks.Threads)
        {
            sampled.Add(thread.ThreadId);
            report.Append('\n');
            AppendThreadLine(report, thread.ThreadId, byId.TryGetValue(thread.ThreadId, out ThreadListEntry os) ? os : null);
            report.Append(":\n");
            if (thread.Frames.Count == 0)
                report.Append("  (no frames)\n");
            foreach (string frame in thread.Frames)
                report.Append("  ").Append(frame).Append('\n');
            if (thread.FramesCut)
                report.Append(CultureInfo.InvariantCulture, $"  ... (cut after {options.MaxFramesPerThread} frames)\n");
        }

        if (options.ProcessId == Environment.ProcessId)
        {
            bool header = false;
            foreach (ThreadListEntry thread in osThreads)
            {
                if (sampled.Contains(thread.Id))
                    continue;
                if (!header)
                {
                    report.Append("\n# Threads without a managed sample (native-only threads the runtime does not sample, or started after the capture):\n");
                    header = true;
                }
                AppendThreadLine(report, thread.Id, thread);
                report.Append('\n');
            }
        }
        return report.ToString();
    }

    private static string FallbackReport(ManagedStacksOptions options, DateTime startedAt, TimeSpan took, string reason)
    {
        var report = new StringBuilder();
        report.Append(CultureInfo.InvariantCulture,
            $"# Managed stacks of all threads of process {options.ProcessId}: NOT captured ({startedAt:yyyy-MM-ddTHH:mm:ss.fffZ}, gave up after {Milliseconds(took)})\n");
        report.Append("# Tried: an EventPipe session on the process's own diagnostics IPC (Microsoft-DotNETCore-SampleProfiler and a method rundown, as dotnet-stack does).\n");
        report.Append("# Why it failed: ").Append(reason.ReplaceLineEndings(" ")).Append('\n');
        if (DiagnosticsIpcDisabledBy() is { } setting)
            report.Append("# The diagnostics IPC is disabled by ").Append(setting).Append(": start the server without it to get managed stacks.\n");

        IReadOnlyList<ThreadListEntry> threads = ProcessThreadList.List();
        report.Append(CultureInfo.InvariantCulture,
            $"# Fallback: the {threads.Count} threads the OS lists ({(ProcessThreadList.HasProcTasks ? "/proc/self/task: names and states" : "process thread list: ids and states")}), and the capturing thread's own stack.\n\n");
        foreach (ThreadListEntry thread in threads)
        {
            AppendThreadLine(report, thread.Id, thread);
            report.Append('\n');
        }
        report.Append("\n# Stack of the capturing thread (System.Diagnostics.StackTrace):\n");
        report.Append(new StackTrace(fNeedFileInfo: false).ToString());
        return report.ToString();
    }

    private static void AppendThreadLine(StringBuilder report, int id, ThreadListEntry? os)
    {
        report.Append(CultureInfo.InvariantCulture, $"Thread {id} (0x{id:X})");
        if (os?.Name is { } name)
            report.Append(" \"").Append(name).Append('"');
        if (os?.State is { } state)
            report.Append(" [").Append(state).Append(']');
    }

    /// <summary>The setting that turns the runtime's diagnostics IPC off in this process, or null.</summary>
    private static string? DiagnosticsIpcDisabledBy()
    {
        foreach (string name in (string[])["DOTNET_EnableDiagnostics", "COMPlus_EnableDiagnostics", "DOTNET_EnableDiagnostics_IPC"])
        {
            if (Environment.GetEnvironmentVariable(name) == "0")
                return name + "=0";
        }
        return null;
    }

    private static string Milliseconds(TimeSpan time)
        => time.TotalMilliseconds.ToString("0", CultureInfo.InvariantCulture) + " ms";
}
