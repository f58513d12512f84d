using System.Diagnostics;
using Diagnostics.Contracts;
using Diagnostics.Monitor.Aggregation;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// Requests on the disk under the server's data directory (block_rq_issue and block_rq_complete,
/// filtered in the kernel by device), in an instance of its own: device events happen in any
/// context, often not the server's, so they cannot share the syscall instance's pid filter.
/// </summary>
public sealed class TracefsBlockSource(int serverPid, string tracefsRoot, string dataDirectory) : IKernelIoSource
{
    private TracefsInstance? _instance;
    private TracefsBufferReader? _reader;
    private BlockDecoder? _decoder;
    private long _eventsAtLastReport;
    private string _state = "starting";
    private string _detail = "";

    public string Name => "tracefs-block";
    public IoAggregator Aggregator { get; } = new(BlockDecoder.CallNames);

    public void Start()
    {
        var device = BlockDevice.Under(dataDirectory);
        if (device is null)
        {
            _state = "idle";
            _detail = $"{dataDirectory} is on no block device (tmpfs, overlay or network): no device requests to trace";
            return;
        }
        var (name, dev) = device.Value;
        _instance = TracefsInstance.Create(tracefsRoot, "block");
        _instance.Write("tracing_on", "0");
        _instance.Write("trace_clock", "mono");
        _instance.Write("buffer_size_kb", "2048");
        var issue = _instance.Format("block", "block_rq_issue");
        var complete = _instance.Format("block", "block_rq_complete");
        long wallOffsetMicros = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() * 1000 - Stopwatch.GetTimestamp() * 1_000_000 / Stopwatch.Frequency;
        _decoder = new BlockDecoder(issue, complete, name, tid => ServerThreads.IsThreadOf(serverPid, tid), Aggregator, wallOffsetMicros);
        string filter = "dev == " + dev.ToString(System.Globalization.CultureInfo.InvariantCulture);
        _instance.Enable(issue, filter);
        _instance.Enable(complete, filter);
        _reader = new TracefsBufferReader(_instance, _decoder.OnRecord, Aggregator.Gate, "tracefs block");
        _reader.Start();
        _instance.Write("tracing_on", "1");
        _state = "running";
        _detail = $"{_instance.Path}, device {name} under {dataDirectory}";
    }

    public MonitorSourceStatus Report(TimeSpan interval)
    {
        long total = _decoder?.Records ?? 0;
        double rate = (total - _eventsAtLastReport) / Math.Max(interval.TotalSeconds, 0.001);
        _eventsAtLastReport = total;
        return new MonitorSourceStatus
        {
            Name = Name,
            State = _reader?.Failure is { } failure ? "failed: " + failure : _state,
            Detail = _detail,
            EventsPerSecond = rate,
            TotalEvents = total,
            DroppedAtSource = (_instance?.LostEvents() ?? 0) + (_reader?.MissedInPages ?? 0),
            DroppedInMonitor = _decoder?.Unpaired ?? 0,
        };
    }

    public void Dispose()
    {
        _reader?.Dispose();
        _instance?.Dispose();
        _state = "stopped";
    }
}
