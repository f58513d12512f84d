using System.Diagnostics.Tracing;
using System.Globalization;
using Diagnostics.Contracts;
using Diagnostics.Monitor.Attach;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace Diagnostics.Monitor.Runtime;

/// <summary>
/// An EventPipe session on the server through its diagnostics IPC (as dotnet-trace opens one):
/// the runtime provider's GC events (with allocation ticks, hence Verbose), contention, thread
/// pool adjustments and first-chance exceptions, read live with TraceEvent's EventPipeEventSource
/// and summed into <see cref="Aggregator"/>. Only type names, counts, times and exception
/// messages travel: no heap content.
/// The session is opened and read on a thread of its own, so <see cref="Start"/> never blocks on
/// the server and never throws: a server that cannot be traced (not .NET, diagnostics disabled,
/// gone) shows as "failed: why" in <see cref="Report"/>, as does a stream that breaks later.
/// On Linux the session goes only to a diagnostic socket <see cref="DiagnosticSocketFinder"/>
/// verified as the server's own; every other candidate is logged with why it was ignored.
/// </summary>
public sealed class EventPipeRuntimeSource(int serverPid, ILogger? log = null) : IEventSource
{
    // GC at Verbose is what brings GCAllocationTick (one every ~100 KB allocated); Threading
    // carries the thread pool's worker adjustments. Measured on the test server at some 700 GCs
    // a second: about 17,000 events a second (the GC's own bookkeeping, 3,500 allocation ticks),
    // none lost.
    private const ClrTraceEventParser.Keywords RuntimeKeywords = ClrTraceEventParser.Keywords.GC
        | ClrTraceEventParser.Keywords.Contention | ClrTraceEventParser.Keywords.Exception | ClrTraceEventParser.Keywords.Threading;

    // The runtime allocates the buffer lazily, per thread, up to this; the reader drains it live.
    private const int CircularBufferMegabytes = 64;

    private static readonly TimeSpan OpenTimeout = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan ReaderExitTimeout = TimeSpan.FromSeconds(2);

    private readonly Lock _gate = new();
    // Cancelled by Dispose: ends an open still waiting on the server.
    private readonly CancellationTokenSource _disposing = new();
    private EventPipeSession? _session;
    private EventPipeEventSource? _source;
    private Thread? _reader;
    private string _state = "starting";
    private bool _disposed;
    private long _events;
    private long _eventsAtLastReport;

    public string Name => "eventpipe";

    public RuntimeAggregator Aggregator { get; } = new();

    public void Start()
    {
        lock (_gate)
        {
            if (_reader is not null || _disposed)
                return;
            _reader = new Thread(OpenAndRead) { IsBackground = true, Name = "eventpipe reader" };
            _reader.Start();
        }
    }

    private void OpenAndRead()
    {
        EventPipeSession? session = null;
        try
        {
            string? socket = null;
            if (OperatingSystem.IsLinux())
            {
                var (found, whyNone, ignored) = DiagnosticSocketFinder.Find(serverPid);
                foreach (var (path, why) in ignored)
                    log?.LogWarning("Ignored diagnostic socket {Path}: {Why}", path, why);
                if (found is null)
                {
                    Ended($"failed: no EventPipe session on pid {serverPid.ToString(CultureInfo.InvariantCulture)}: {whyNone}");
                    return;
                }
                socket = found;
            }
            session = Open(socket);
            lock (_gate)
            {
                if (!_disposed)
                    _session = session;
            }
            if (_session != session)
            {
                // Disposed while opening: nobody else will end this session.
                EndSession(session);
                return;
            }
            // The constructor reads the stream's header: here too, not in Start.
            var source = new EventPipeEventSource(session.EventStream);
            Subscribe(source);
            lock (_gate)
            {
                _source = source;
                if (!_disposed)
                    _state = "running";
            }
            source.Process();
            // Only Dispose should end the stream; anything else means no more events.
            Ended("failed: the event stream ended (the server exited or ended the session)");
        }
        catch (Exception ex)
        {
            // Everything is caught: an exception escaping this thread would end the monitor.
            Ended(session is null
                ? OpenFailure(ex)
                : $"failed: the event stream broke: {ex.GetType().Name}: {ex.Message}");
        }
    }

    /// <summary>A session through <paramref name="socket"/> (verified), or through the client's own lookup by pid where there is none (Windows' named pipe).</summary>
    private EventPipeSession Open(string? socket)
    {
        using var limit = CancellationTokenSource.CreateLinkedTokenSource(_disposing.Token);
        limit.CancelAfter(OpenTimeout);
        // In connect mode the connector holds nothing to dispose: each request opens its own connection to the socket.
        var client = socket is null
            ? new DiagnosticsClient(serverPid)
            : DiagnosticsClientConnector.FromDiagnosticPort(socket + ",connect", limit.Token).GetAwaiter().GetResult().Instance;
        var providers = new[] { new EventPipeProvider(ClrTraceEventParser.ProviderName, EventLevel.Verbose, (long)RuntimeKeywords) };
        try
        {
            // No stacks: nothing here reads them, and the server would walk one for every event.
            return client.StartEventPipeSessionAsync(
                new EventPipeSessionConfiguration(providers, CircularBufferMegabytes, requestRundown: false, requestStackwalk: false),
                limit.Token).GetAwaiter().GetResult();
        }
        catch (Exception ex) when (ex is UnsupportedCommandException or ServerErrorException)
        {
            // Runtimes before .NET 9 cannot leave the stacks out and refuse the request.
            return client.StartEventPipeSessionAsync(
                new EventPipeSessionConfiguration(providers, CircularBufferMegabytes, requestRundown: false, requestStackwalk: true),
                limit.Token).GetAwaiter().GetResult();
        }
    }

    private string OpenFailure(Exception ex)
    {
        string prefix = $"failed: no EventPipe session on pid {serverPid.ToString(CultureInfo.InvariantCulture)}: ";
        return ex switch
        {
            OperationCanceledException when !_disposing.IsCancellationRequested =>
                prefix + $"its diagnostics IPC did not answer within {OpenTimeout.TotalSeconds.ToString(CultureInfo.InvariantCulture)} s",
            // The client's own text blames /tmp and containers; the usual cause comes first.
            ServerNotAvailableException =>
                prefix + "no .NET diagnostics IPC endpoint (not a .NET process, or one started with DOTNET_EnableDiagnostics=0): " + ex.Message,
            _ => prefix + $"{ex.GetType().Name}: {ex.Message}",
        };
    }

    private void Ended(string failure)
    {
        lock (_gate)
            _state = _disposed ? "stopped" : failure;
    }

    private void Subscribe(EventPipeEventSource source)
    {
        // Every event counts towards the rate, the ones not summed here too: they are what the
        // session costs the server.
        source.AllEvents += _ => Interlocked.Increment(ref _events);
        ClrTraceEventParser clr = source.Clr;
        clr.GCSuspendEEStart += e => Aggregator.SuspendStarted(UnixMicros(e),
            forGc: e.Reason is GCSuspendEEReason.SuspendForGC or GCSuspendEEReason.SuspendForGCPrep);
        clr.GCStart += e => Aggregator.CollectionStarted(UnixMicros(e), e.Count, e.Depth, e.Reason.ToString(), e.Type.ToString(),
            background: e.Type == GCType.BackgroundGC);
        clr.GCStop += e => Aggregator.CollectionEnded(e.Count);
        clr.GCRestartEEStop += e => Aggregator.Restarted(UnixMicros(e));
        clr.GCAllocationTick += e => Aggregator.Allocated(e.TypeName is { Length: > 0 } name ? name : "(unknown type)", e.AllocationAmount64);
        clr.ContentionStop += e => Aggregator.Contended(e.DurationNs);
        clr.ThreadPoolWorkerThreadAdjustmentAdjustment += e => Aggregator.ThreadPoolAdjusted(e.NewWorkerThreadCount);
        clr.ExceptionStart += e => Aggregator.ExceptionThrown(e.ExceptionType, e.ExceptionMessage);
    }

    private static long UnixMicros(TraceEvent e) => (e.TimeStamp.ToUniversalTime() - DateTime.UnixEpoch).Ticks / TimeSpan.TicksPerMicrosecond;

    public MonitorSourceStatus Report(TimeSpan interval)
    {
        long total = Interlocked.Read(ref _events);
        double rate = (total - _eventsAtLastReport) / Math.Max(interval.TotalSeconds, 0.001);
        _eventsAtLastReport = total;
        string state;
        EventPipeEventSource? source;
        lock (_gate)
        {
            state = _state;
            source = _source;
        }
        return new MonitorSourceStatus
        {
            Name = Name,
            State = state,
            Detail = $"Microsoft-Windows-DotNETRuntime (GC with allocation ticks, contention, thread pool, exceptions) of pid {serverPid.ToString(CultureInfo.InvariantCulture)}",
            EventsPerSecond = rate,
            TotalEvents = total,
            // Buffers the runtime dropped because the reader fell behind (per sequence numbers).
            DroppedAtSource = source?.EventsLost ?? 0,
        };
    }

    /// <summary>Stops the session (the runtime then closes the stream) and waits, bounded, for the reader.</summary>
    public void Dispose()
    {
        EventPipeSession? session;
        Thread? reader;
        lock (_gate)
        {
            if (_disposed)
                return;
            _disposed = true;
            if (!_state.StartsWith("failed", StringComparison.Ordinal))
                _state = "stopped";
            session = _session;
            reader = _reader;
        }
        _disposing.Cancel();
        if (session is not null)
        {
            StopSession(session);
            if (reader is not null && !reader.Join(ReaderExitTimeout))
            {
                // The stream did not end (a server that stopped answering): closing our end of
                // it ends the read.
                session.Dispose();
            }
            session.Dispose();
        }
        bool readerExited = reader is null || reader.Join(ReaderExitTimeout);
        EventPipeEventSource? source;
        lock (_gate)
            source = _source;
        // Never under a reader still inside Process; an abandoned one is a background thread.
        if (readerExited)
            source?.Dispose();
    }

    private static void EndSession(EventPipeSession session)
    {
        StopSession(session);
        session.Dispose();
    }

    /// <summary>
    /// Asks the runtime to end the session, within <see cref="StopTimeout"/> (the synchronous Stop
    /// has no limit). Best effort: a server that is gone took the session with it, and one that
    /// does not answer ends it when it finds the stream closed by Dispose.
    /// </summary>
    private static void StopSession(EventPipeSession session)
    {
        using var limit = new CancellationTokenSource(StopTimeout);
        try
        {
            session.StopAsync(limit.Token).Wait(StopTimeout);
        }
        catch (Exception ex) when (ex is AggregateException or ServerNotAvailableException or IOException or OperationCanceledException or ObjectDisposedException)
        {
        }
    }
}
