using System.Diagnostics.Tracing;
using Diagnostics.Contracts;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers;

namespace Diagnostics.Monitor.Runtime;

/// <summary>
/// An EventPipe session on the server through its diagnostics IPC (as dotnet-trace opens one):
/// the runtime provider's GC events (with allocation ticks, hence Verbose), contention, thread
/// pool and exceptions, read live with TraceEvent's EventPipeEventSource on a thread of its own.
/// Only type names, counts and times travel: no heap content.
/// </summary>
public sealed class EventPipeRuntimeSource(int serverPid) : IEventSource
{
    private const long Keywords = (long)(ClrTraceEventParser.Keywords.GC | ClrTraceEventParser.Keywords.Contention
        | ClrTraceEventParser.Keywords.Exception | ClrTraceEventParser.Keywords.Threading);
    private EventPipeSession? _session;
    private EventPipeEventSource? _source;
    private Thread? _reader;
    private long _events;
    private long _eventsAtLastReport;
    private volatile string _state = "starting";

    public string Name => "eventpipe";
    public RuntimeAggregator Aggregator { get; } = new();

    public void Start()
    {
        try
        {
            var client = new DiagnosticsClient(serverPid);
            _session = client.StartEventPipeSession(
                [new EventPipeProvider(ClrTraceEventParser.ProviderName, EventLevel.Verbose, Keywords)],
                requestRundown: false, circularBufferMB: 64);
        }
        catch (Exception ex) when (ex is ServerNotAvailableException or UnsupportedCommandException or IOException or UnauthorizedAccessException or TimeoutException or ServerErrorException)
        {
            _state = $"failed: no EventPipe session on pid {serverPid}: {ex.Message}";
            throw new InvalidOperationException(_state, ex);
        }
        _source = new EventPipeEventSource(_session.EventStream);
        Subscribe(_source.Clr);
        _reader = new Thread(Read) { IsBackground = true, Name = "eventpipe reader" };
        _reader.Start();
        _state = "running";
    }

    private void Subscribe(ClrTraceEventParser clr)
    {
        clr.GCSuspendEEStart += e => { Count(); Aggregator.SuspendStarted(UnixMicros(e)); };
        clr.GCStart += e => { Count(); Aggregator.CollectionStarted(UnixMicros(e), e.Count, e.Depth, e.Reason.ToString(), e.Type.ToString()); };
        clr.GCRestartEEStop += e => { Count(); Aggregator.Restarted(UnixMicros(e)); };
        clr.GCAllocationTick += e => { Count(); Aggregator.Allocated(e.TypeName is { Length: > 0 } name ? name : "(unknown type)", e.AllocationAmount64); };
        clr.ContentionStop += e => { Count(); Aggregator.Contended(e.DurationNs); };
        clr.ThreadPoolWorkerThreadAdjustmentAdjustment += e => { Count(); Aggregator.ThreadPoolAdjusted(e.NewWorkerThreadCount); };
        clr.ExceptionStart += e => { Count(); Aggregator.ExceptionThrown(e.ExceptionType, e.ExceptionMessage); };
    }

    private void Count() => Interlocked.Increment(ref _events);

    private static long UnixMicros(TraceEvent e) => (e.TimeStamp.ToUniversalTime() - DateTime.UnixEpoch).Ticks / 10;

    private void Read()
    {
        try
        {
            _source!.Process();
            if (_state == "running")
                _state = "stopped: the server ended the session";
        }
        catch (Exception ex) when (ex is IOException or EndOfStreamException or ObjectDisposedException or InvalidOperationException or FormatException)
        {
            if (_state == "running")
                _state = "failed: " + ex.Message;
        }
    }

    public MonitorSourceStatus Report(TimeSpan interval)
    {
        long total = Interlocked.Read(ref _events);
        double rate = (total - _eventsAtLastReport) / Math.Max(interval.TotalSeconds, 0.001);
        _eventsAtLastReport = total;
        return new MonitorSourceStatus
        {
            Name = Name,
            State = _state,
            Detail = $"Microsoft-Windows-DotNETRuntime (GC, allocation ticks, contention, thread pool, exceptions) of pid {serverPid}",
            EventsPerSecond = rate,
            TotalEvents = total,
            DroppedAtSource = _source?.EventsLost ?? 0,
        };
    }

    public void Dispose()
    {
        if (_state == "running")
            _state = "stopped";
        try
        {
            _session?.Stop();
        }
        catch (Exception ex) when (ex is ServerNotAvailableException or IOException or TimeoutException or ServerErrorException or ObjectDisposedException)
        {
            // The server is gone: its end of the session went with it.
        }
        _reader?.Join(TimeSpan.FromSeconds(5));
        _source?.Dispose();
        _session?.Dispose();
    }
}
