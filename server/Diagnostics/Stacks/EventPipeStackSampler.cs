using System.Diagnostics;
using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;

namespace Diagnostics.Server.Diagnostics.Stacks;

/// <summary>The most recent sampled stack of one thread, leaf first.</summary>
internal sealed record SampledThread(int ThreadId, IReadOnlyList<string> Frames, bool FramesCut);

/// <summary>What one EventPipe capture produced, with what it cost.</summary>
internal sealed record SampledStacks(
    IReadOnlyList<SampledThread> Threads,
    TimeSpan SampleDuration,
    int SampleCount,
    long TraceBytes,
    TimeSpan SessionTime,
    TimeSpan ResolveTime);

/// <summary>
/// What dotnet-stack does, from inside the process: a short EventPipe session through the
/// runtime's diagnostics IPC with the sample profiler (every managed thread's stack, about once a
/// millisecond) and a rundown at the end (names of every method with code), written to a
/// .nettrace file, converted by TraceEvent into a TraceLog that resolves each sample's frames.
/// Only code addresses and method names travel: no heap, no locals, so no user data.
/// </summary>
internal static class EventPipeStackSampler
{
    private const string SampleProfilerProvider = "Microsoft-DotNETCore-SampleProfiler";

    // The rundown (Microsoft-Windows-DotNETRuntimeRundown, written when the session stops) is
    // what names the sampled code: Loader (modules), Jit (jitted methods, every code version
    // still alive, so methods compiled during the session too), NGen (ReadyToRun code, most of
    // the framework) and StopEnumeration (the DCEnd events). The client's default rundown also
    // asks for IL-to-native maps (0x20000), GC (0x1) and thread transfer (0x80000000): source
    // line mapping and activity tracking a stack report never reads, about a fifth of the trace.
    // The runtime provider (Microsoft-Windows-DotNETRuntime Loader|Jit at Verbose) is not
    // enabled either, as dotnet-stack does not: the rundown already names every method, and
    // enabling that provider also starts the managed NativeRuntimeEventSource (a reflection pass
    // over its manifest on the runtime's EventPipe thread) for no frame more.
    private const long RundownKeywords = 0x8 | 0x10 | 0x20 | 0x100;

    // The session's buffer is allocated lazily per thread up to this size; it only has to hold
    // a few milliseconds of samples and the rundown, which the reader drains as it comes.
    private const int CircularBufferMegabytes = 32;

    /// <summary>
    /// Samples every managed thread of <paramref name="processId"/> for <paramref name="sampleDuration"/>
    /// and resolves each thread's last sample. Throws on any failure (the caller reports why).
    /// Every file it writes lives in <paramref name="workDirectory"/>, which the caller deletes.
    /// </summary>
    public static async Task<SampledStacks> SampleAsync(
        int processId,
        string workDirectory,
        TimeSpan sampleDuration,
        long maxTraceBytes,
        int maxFramesPerThread,
        CancellationToken cancellationToken)
    {
        string traceFile = Path.Combine(workDirectory, "stacks.nettrace");
        var clock = Stopwatch.StartNew();
        long traceBytes = await RecordAsync(processId, traceFile, sampleDuration, maxTraceBytes, cancellationToken).ConfigureAwait(false);
        TimeSpan sessionTime = clock.Elapsed;

        cancellationToken.ThrowIfCancellationRequested();
        clock.Restart();
        // The conversion is CPU work of its own (tens to hundreds of ms): keep it off whatever
        // thread awaited us.
        (IReadOnlyList<SampledThread> threads, int sampleCount) = await Task.Run(
            () => Resolve(traceFile, Path.Combine(workDirectory, "stacks.etlx"), maxFramesPerThread),
            cancellationToken).ConfigureAwait(false);
        return new SampledStacks(threads, sampleDuration, sampleCount, traceBytes, sessionTime, clock.Elapsed);
    }

    private static async Task<long> RecordAsync(int processId, string traceFile, TimeSpan sampleDuration, long maxTraceBytes, CancellationToken cancellationToken)
    {
        var client = new DiagnosticsClient(processId);
        var configuration = new EventPipeSessionConfiguration(
            [new EventPipeProvider(SampleProfilerProvider, EventLevel.Informational)],
            CircularBufferMegabytes, RundownKeywords, requestStackwalk: true);
        using EventPipeSession session = await client.StartEventPipeSessionAsync(configuration, cancellationToken).ConfigureAwait(false);
        await using var file = new FileStream(traceFile, FileMode.CreateNew, FileAccess.Write, FileShare.None, 64 * 1024, useAsync: true);

        // Read from the start: the runtime blocks its session writer when the pipe is full.
        Task<long> copy = CopyBoundedAsync(session.EventStream, file, maxTraceBytes, cancellationToken);
        await Task.WhenAny(copy, Task.Delay(sampleDuration, cancellationToken)).ConfigureAwait(false);
        if (copy.IsCompleted)
            await copy.ConfigureAwait(false); // surfaces a read failure now rather than after Stop
        cancellationToken.ThrowIfCancellationRequested();

        // Stop ends the sampling, makes the runtime write the rundown, then end the stream.
        await session.StopAsync(cancellationToken).ConfigureAwait(false);
        return await copy.ConfigureAwait(false);
    }

    private static async Task<long> CopyBoundedAsync(Stream source, Stream destination, long maxBytes, CancellationToken cancellationToken)
    {
        byte[] buffer = new byte[64 * 1024];
        long total = 0;
        while (true)
        {
            int read = await source.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
            if (read == 0)
                return total;
            total += read;
            if (total > maxBytes)
                throw new InvalidDataException($"the trace grew past {maxBytes} bytes; capture abandoned to bound memory and disk");
            await destination.WriteAsync(buffer.AsMemory(0, read), cancellationToken).ConfigureAwait(false);
        }
    }

    private static (IReadOnlyList<SampledThread>, int) Resolve(string traceFile, string etlxFile, int maxFramesPerThread)
    {
        TraceLog.CreateFromEventPipeDataFile(traceFile, etlxFile, new TraceLogOptions { ContinueOnError = true, ConversionLog = TextWriter.Null });
        using var log = new TraceLog(etlxFile);

        // Events come in time order: the last sample seen for a thread is its most recent one.
        var lastSample = new Dictionary<int, TraceCallStack?>();
        int sampleCount = 0;
        foreach (TraceEvent sample in log.Events)
        {
            if (sample.ProviderName != SampleProfilerProvider)
                continue;
            sampleCount++;
            lastSample[sample.ThreadID] = sample.CallStack();
        }

        var threads = new List<SampledThread>(lastSample.Count);
        foreach ((int threadId, TraceCallStack? stack) in lastSample)
        {
            (List<string> frames, bool cut) = Frames(stack, maxFramesPerThread);
            threads.Add(new SampledThread(threadId, frames, cut));
        }
        threads.Sort(static (a, b) => a.ThreadId.CompareTo(b.ThreadId));
        return (threads, sampleCount);
    }

    /// <summary>
    /// Frames leaf first as dotnet-stack prints them: "module!Namespace.Type.Method(args)", a run of
    /// frames without a managed method (runtime or OS code) folded into one "[Native Frames]".
    /// </summary>
    private static (List<string>, bool) Frames(TraceCallStack? stack, int maxFrames)
    {
        var frames = new List<string>();
        for (; stack is not null; stack = stack.Caller)
        {
            if (frames.Count == maxFrames)
                return (frames, true);
            TraceCodeAddress address = stack.CodeAddress;
            string method = address.FullMethodName;
            if (string.IsNullOrEmpty(method))
            {
                if (frames.Count == 0 || frames[^1] != NativeFrames)
                    frames.Add(NativeFrames);
                continue;
            }
            string module = address.ModuleName;
            frames.Add(string.IsNullOrEmpty(module) ? method : module + "!" + method);
        }
        return (frames, false);
    }

    private const string NativeFrames = "[Native Frames]";
}
