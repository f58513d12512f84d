using Diagnostics.Monitor.Aggregation;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// Pairs block_rq_issue with block_rq_complete by sector into device requests: reads, writes
/// and flushes with their time on the device. The request is the server's when a server thread
/// issued it; writeback the kernel issued later is thread 0. Requests in flight are bounded.
/// </summary>
public sealed class BlockDecoder
{
    public const int InFlightKept = 65_536;
    private readonly EventFormat _issue;
    private readonly EventFormat _complete;
    private readonly EventField _issueSector, _issueBytes, _issueFlags, _completeSector, _completeSectors, _completeError, _completeFlags, _pid;
    private readonly Dictionary<long, (long Time, int Tid, long Bytes)> _inFlight = [];
    private readonly Func<int, bool> _isServerThread;
    private readonly IoAggregator _aggregator;
    private readonly int _target;
    private readonly long _wallOffsetMicros;

    public BlockDecoder(EventFormat issue, EventFormat complete, string device, Func<int, bool> isServerThread, IoAggregator aggregator, long wallOffsetMicros)
    {
        _issue = issue;
        _complete = complete;
        _issueSector = issue.Field("sector");
        _issueBytes = issue.Field("bytes");
        _issueFlags = issue.Field("rwbs");
        _completeSector = complete.Field("sector");
        _completeSectors = complete.Field("nr_sector");
        _completeError = complete.Field("error");
        _completeFlags = complete.Field("rwbs");
        _pid = issue.Field("common_pid");
        _isServerThread = isServerThread;
        _aggregator = aggregator;
        _target = aggregator.Targets.Intern(device, TargetKind.Device);
        _wallOffsetMicros = wallOffsetMicros;
    }

    // Requests issued before tracing began complete without an issue: not losses. A second after
    // the first record, every request in flight was issued under our eyes.
    private long _countUnpairedFrom = long.MaxValue;

    public long Records { get; private set; }
    public long Unpaired { get; private set; }

    public static readonly string[] CallNames = ["block_rq"];

    public void OnRecord(long timestamp, ReadOnlySpan<byte> record)
    {
        if (Records++ == 0)
            _countUnpairedFrom = timestamp + 1_000_000_000;
        int id = BitConverter.ToUInt16(record);
        if (id == _issue.Id)
        {
            long sector = _issueSector.Read(record);
            if (_inFlight.Count >= InFlightKept && !_inFlight.ContainsKey(sector))
            {
                Unpaired++;
                return;
            }
            int tid = (int)_pid.Read(record);
            _inFlight[sector] = (timestamp, _isServerThread(tid) ? tid : 0, _issueBytes.Read(record));
        }
        else if (id == _complete.Id)
        {
            long sector = _completeSector.Read(record);
            if (!_inFlight.Remove(sector, out var issued))
            {
                if (timestamp >= _countUnpairedFrom)
                    Unpaired++;
                return;
            }
            string flags = _completeFlags.ReadText(record);
            var operation = flags.StartsWith('F') && !flags.Contains('W') && !flags.Contains('R') ? IoOperation.DiskFlush
                : flags.Contains('W') ? IoOperation.DiskWrite
                : flags.Contains('R') ? IoOperation.DiskRead
                : IoOperation.DiskFlush;
            long error = _completeError.Read(record);
            long bytes = Math.Max(issued.Bytes, _completeSectors.Read(record) * 512);
            _aggregator.Add(new IoEvent(issued.Time / 1000 + _wallOffsetMicros, issued.Tid, _target, operation, 0, error != 0 ? -Math.Abs(error) : bytes, timestamp - issued.Time));
        }
    }
}
