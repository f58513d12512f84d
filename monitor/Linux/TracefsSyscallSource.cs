using System.Diagnostics;
using Diagnostics.Contracts;
using Diagnostics.Monitor.Aggregation;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// The server's I/O system calls as the kernel records them: the syscalls tracepoints of
/// <see cref="TracedSyscall.All"/>, enter and exit, in an instance of our own filtered to the
/// server's threads (set_event_pid, with event-fork for threads started later), read from the
/// binary per-CPU buffers and paired into events with their descriptors named.
/// </summary>
public sealed class TracefsSyscallSource(int serverPid, string tracefsRoot, int bufferKilobytesPerCpu = 8192) : IKernelIoSource
{
    private TracefsInstance? _instance;
    private TracefsBufferReader? _reader;
    private SyscallDecoder? _decoder;
    private long _eventsAtLastReport;
    private string _state = "starting";
    private int _threadsAddedLate;

    public string Name => "tracefs-syscalls";
    public IoAggregator Aggregator { get; } = new(TracedSyscall.Names());

    public void Start()
    {
        _instance = TracefsInstance.Create(tracefsRoot, "syscalls");
        try
        {
            _instance.Write("tracing_on", "0");
            _instance.Write("trace_clock", "mono");
            _instance.Write("buffer_size_kb", bufferKilobytesPerCpu.ToString(System.Globalization.CultureInfo.InvariantCulture));
            var formats = new List<(EventFormat, EventFormat)>();
            foreach (var call in TracedSyscall.All)
                formats.Add((_instance.Format("syscalls", "sys_enter_" + call.Name), _instance.Format("syscalls", "sys_exit_" + call.Name)));
            // The trace clock is CLOCK_MONOTONIC, as Stopwatch is on Linux: one offset gives wall time.
            long wallOffsetMicros = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() * 1000 - Stopwatch.GetTimestamp() * 1_000_000 / Stopwatch.Frequency;
            _decoder = new SyscallDecoder(formats, new DescriptorNames(serverPid, Aggregator.Targets), Aggregator, wallOffsetMicros);
            _instance.TraceOnly(ServerThreads.Of(serverPid));
            foreach (var (enter, exit) in formats)
            {
                _instance.Enable(enter);
                _instance.Enable(exit);
            }
            _reader = new TracefsBufferReader(_instance, _decoder.OnRecord, Aggregator.Gate, "tracefs syscalls");
            _reader.Start();
            _instance.Write("tracing_on", "1");
            _threadsAddedLate += _instance.FollowThreads(ServerThreads.Of(serverPid));
            _state = "running";
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidDataException)
        {
            _state = "failed: " + ex.Message;
            throw;
        }
    }

    public MonitorSourceStatus Report(TimeSpan interval)
    {
        if (_instance is not null && _reader?.Failure is null)
            _threadsAddedLate += _instance.FollowThreads(ServerThreads.Of(serverPid));
        long total = _decoder?.Records ?? 0;
        double rate = (total - _eventsAtLastReport) / Math.Max(interval.TotalSeconds, 0.001);
        _eventsAtLastReport = total;
        string state = _reader?.Failure is { } failure ? "failed: " + failure : _state;
        return new MonitorSourceStatus
        {
            Name = Name,
            State = state,
            Detail = _instance is null ? "" : $"{_instance.Path}, {TracedSyscall.All.Length} calls, threads of pid {serverPid}{(_threadsAddedLate > 0 ? $" ({_threadsAddedLate} found outside the filter and added)" : "")}",
            EventsPerSecond = rate,
            TotalEvents = total,
            DroppedAtSource = (_instance?.LostEvents() ?? 0) + (_reader?.MissedInPages ?? 0),
            DroppedInMonitor = (_decoder?.Unpaired ?? 0) + Aggregator.Targets.Overflowed,
        };
    }

    public void Dispose()
    {
        _instance?.Write("tracing_on", "0");
        _reader?.Dispose();
        _instance?.Dispose();
        _state = "stopped";
    }
}
