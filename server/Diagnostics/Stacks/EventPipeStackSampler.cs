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
    /// <remarks>
    /// Runs on threads of its own, blocking, from the session's start to the resolution: a debug
    /// package is asked for when the server is in trouble, often with the thread pool starved, and
    /// an async capture (timers, file writes, continuations: all pool work) then took 15 s instead
    /// of 0.4 s, sampling all along. The returned task completes on the capture thread, so the
    /// caller's continuation stays off the pool too.
    /// </remarks>
    public static Task<SampledStacks> SampleAsync(
        int processId,
        string workDirectory,
        TimeSpan sampleDuration,
        long maxTraceBytes,
        int maxFramesPerThread,
        CancellationToken cancellationToken)
    {
        var done = new TaskCompletionSource<SampledStacks>();
        var capture = new Thread(() =>
        {
            try
            {
                done.SetResult(Sample(processId, workDirectory, sampleDuration, maxTraceBytes, maxFramesPerThread, cancellationToken));
            }
            catch (Exception e)
            {
                done.SetException(e);
            }
        }) { IsBackground = true, Name = "stack capture" };
        capture.Start();
        return done.Task;
    }

    private static SampledStacks Sample(int processId, string workDirectory, TimeSpan sampleDuration, long maxTraceBytes, int maxFramesPerThread, CancellationToken cancellationToken)
    {
        string traceFile = Path.Combine(workDirectory, "stacks.nettrace");
        var clock = Stopwatch.StartNew();
        long traceBytes = Record(processId, traceFile, sampleDuration, maxTraceBytes, cancellationToken);
        TimeSpan sessionTime = clock.Elapsed;

        cancellationToken.ThrowIfCancellationRequested();
        clock.Restart();
        (IReadOnlyList<SampledThread> threads, int sampleCount) = Resolve(traceFile, Path.Combine(workDirectory, "stacks.etlx"), maxFramesPerThread);
        return new SampledStacks(threads, sampleDuration, sampleCount, traceBytes, sessionTime, clock.Elapsed);
    }

    private static long Record(int processId, string traceFile, TimeSpan sampleDuration, long maxTraceBytes, CancellationToken cancellationToken)
    {
        var client = new DiagnosticsClient(processId);
        var configuration = new EventPipeSessionConfiguration(
            [new EventPipeProvider(SampleProfilerProvider, EventLevel.Informational)],
            CircularBufferMegabytes, RundownKeywords, requestStackwalk: true);
        using EventPipeSession session = client.StartEventPipeSession(configuration);
        // Cancelling (the caller's time limit) closes the session, which ends a blocked read.
        using var closeOnCancel = cancellationToken.Register(static state => ((EventPipeSession)state!).Dispose(), session);
        using var file = new FileStream(traceFile, FileMode.CreateNew, FileAccess.Write, FileShare.None, 64 * 1024);

        // Read from the start, on a thread of its own: the runtime blocks its session writer when
        // the pipe is full.
        long copied = 0;
        Exception? copyFailure = null;
        var reader = new Thread(() =>
        {
            try
            {
                copied = CopyBounded(session.EventStream, file, maxTraceBytes);
            }
            catch (Exception e)
            {
                copyFailure = e;
            }
        }) { IsBackground = true, Name = "stack capture reader" };
        reader.Start();
        // A reader that ends early failed: say so now rather than after Stop.
        if (!reader.Join(sampleDuration))
        {
            cancellationToken.ThrowIfCancellationRequested();
            // Stop ends the sampling, makes the runtime write the rundown, then end the stream.
            session.Stop();
            reader.Join();
        }
        cancellationToken.ThrowIfCancellationRequested();
        if (copyFailure is not null)
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(copyFailure);
        return copied;
    }

    private static long CopyBounded(Stream source, Stream destination, long maxBytes)
    {
        byte[] buffer = new byte[64 * 1024];
        long total = 0;
        while (true)
        {
            int read = source.Read(buffer);
            if (read == 0)
                return total;
            total += read;
            if (total > maxBytes)
                throw new InvalidDataException($"the trace grew past {maxBytes} bytes; capture abandoned to bound memory and disk");
            destination.Write(buffer.AsSpan(0, read));
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
