using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Diagnostics.Views;

namespace Diagnostics.Server.Diagnostics.Monitor;

/// <summary>
/// The server's end of the monitor: takes each second's batch (ingest), keeps what the kernel and
/// the runtime saw since the monitor attached (totals by target and by thread, the server's own
/// counters at that moment for the side-by-side, the latest events and GC pauses, allocations by
/// type) and answers GET /api/monitor. Everything is bounded, whatever a batch holds: the event
/// and pause lists are rings, the tables are capped (rows beyond a cap are counted in
/// <see cref="MonitorReport.DroppedRows"/>, not kept) and the names kept are clipped, so a forged
/// or runaway monitor cannot grow the server. Batches arrive once a second from one monitor, so
/// one lock is enough.
/// </summary>
public sealed class MonitorLink(DataServer server)
{
    private const int RecentEventsKept = 200;
    private const int RecentPausesKept = 100;
    private const int TargetsKept = 4096;
    private const int TypesKept = 2048;
    private const int ThreadRowsKept = 4096;
    private const int ThreadCountersKept = 4096;
    private const int ExceptionTypesKept = 256;
    /// <summary>Longest path, socket or type name kept; the rest is cut.</summary>
    private const int NameCharsKept = 512;
    private const int MessageCharsKept = 1024;
    /// <summary>No batch for this long and the monitor counts as detached.</summary>
    public static readonly TimeSpan AttachedWithin = TimeSpan.FromSeconds(5);

    private readonly Lock _gate = new();
    private readonly Dictionary<(string Target, string Operation), Totals> _byTarget = [];
    private readonly Dictionary<(int ThreadId, string Operation), Totals> _byThread = [];
    private readonly Dictionary<int, ServerBaseline> _baseline = [];
    private readonly Queue<KernelIoEvent> _recentEvents = new();
    private readonly Queue<GcPause> _recentPauses = new();
    private readonly Dictionary<string, (long Bytes, long Ticks)> _allocations = new(StringComparer.Ordinal);
    private readonly Dictionary<string, (long Count, string Message)> _exceptions = new(StringComparer.Ordinal);
    private MonitorStatus? _status;
    private IReadOnlyList<ThreadKernelCounters> _threadCounters = [];
    private long _attachedSince;
    private long _lastBatch;
    private long _batches;
    private long _rejected;
    private long _contentions;
    private long _contentionMicros;
    private Dictionary<string, double>? _latestFigures;
    private long _droppedSoFar;
    private long _droppedRows;

    /// <summary>A push that failed the token check or named another process.</summary>
    public void Reject()
    {
        lock (_gate)
            _rejected++;
    }

    /// <summary>Takes one batch; a batch from a new monitor (another pid or start) begins a new attachment.</summary>
    public bool Ingest(MonitorBatch batch)
    {
        if (batch.Status.ServerPid != Environment.ProcessId)
        {
            Reject();
            return false;
        }
        lock (_gate)
        {
            if (_status is null || _status.MonitorPid != batch.Status.MonitorPid || _status.StartedUnixMs != batch.Status.StartedUnixMs)
            {
                BeginAttachment();
                _droppedSoFar = 0;
            }
            _status = batch.Status;
            _lastBatch = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            _batches++;
            _latestFigures = MonitorFigures.Of(batch, _droppedSoFar);
            _droppedSoFar = MonitorFigures.Dropped(batch);
            foreach (var io in batch.Io)
            {
                if (!Add(_byTarget, (Clip(io.Target, NameCharsKept), Clip(io.Operation, NameCharsKept)), io, TargetsKept))
                    _droppedRows++;
                if (!Add(_byThread, (io.ThreadId, Clip(io.Operation, NameCharsKept)), io, ThreadRowsKept))
                    _droppedRows++;
            }
            foreach (var e in batch.Events)
                Enqueue(_recentEvents, e with { Call = Clip(e.Call, NameCharsKept), Target = Clip(e.Target, NameCharsKept) }, RecentEventsKept);
            if (batch.Threads.Count > 0)
                _threadCounters = KeepThreadCounters(batch.Threads);
            if (batch.Runtime is { } runtime)
                AddRuntime(runtime);
        }
        return true;
    }

    private void BeginAttachment()
    {
        _attachedSince = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        _byTarget.Clear();
        _byThread.Clear();
        _recentEvents.Clear();
        _recentPauses.Clear();
        _allocations.Clear();
        _exceptions.Clear();
        _contentions = _contentionMicros = 0;
        _baseline.Clear();
        foreach (var (tid, figures) in ServerFigures())
            _baseline[tid] = figures;
    }

    private void AddRuntime(RuntimeInterval runtime)
    {
        foreach (var pause in runtime.GcPauses)
            Enqueue(_recentPauses, pause, RecentPausesKept);
        foreach (var allocation in runtime.Allocations)
        {
            string type = Clip(allocation.TypeName, NameCharsKept);
            if (_allocations.Count >= TypesKept && !_allocations.ContainsKey(type))
            {
                _droppedRows++;
                continue;
            }
            var (bytes, ticks) = _allocations.GetValueOrDefault(type);
            _allocations[type] = (bytes + allocation.Bytes, ticks + allocation.Ticks);
        }
        foreach (var exception in runtime.Exceptions)
        {
            string type = Clip(exception.TypeName, NameCharsKept);
            if (_exceptions.Count >= ExceptionTypesKept && !_exceptions.ContainsKey(type))
            {
                _droppedRows++;
                continue;
            }
            var (count, _) = _exceptions.GetValueOrDefault(type);
            _exceptions[type] = (count + exception.Count, Clip(exception.LastMessage, MessageCharsKept));
        }
        _contentions += runtime.Contentions;
        _contentionMicros += runtime.ContentionMicros;
    }

    /// <summary>The latest /proc counters, at most <see cref="ThreadCountersKept"/> threads, names clipped.</summary>
    private List<ThreadKernelCounters> KeepThreadCounters(IReadOnlyList<ThreadKernelCounters> threads)
    {
        int kept = Math.Min(threads.Count, ThreadCountersKept);
        _droppedRows += threads.Count - kept;
        var rows = new List<ThreadKernelCounters>(kept);
        for (int i = 0; i < kept; i++)
            rows.Add(threads[i] with { Name = Clip(threads[i].Name, NameCharsKept) });
        return rows;
    }

    private static string Clip(string text, int chars) => text.Length <= chars ? text : text[..chars];

    /// <summary>The latest batch's per-second figures while attached, for the sampler's kernel and runtime series.</summary>
    public void WriteFigures(SampleWriter writer)
    {
        lock (_gate)
        {
            if (!IsAttached() || _latestFigures is null)
                return;
            foreach (var (name, value) in _latestFigures)
                writer.Gauge(name, value);
        }
    }

    private bool IsAttached() => _lastBatch != 0 && DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - _lastBatch <= AttachedWithin.TotalMilliseconds;

    public MonitorReport Report()
    {
        lock (_gate)
        {
            bool attached = IsAttached();
            string state = _lastBatch == 0
                ? "never attached: no monitor has pushed to this server since it started (run Diagnostics.Monitor as root on this host)"
                : attached ? "attached" : $"detached: no batch for {(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - _lastBatch) / 1000} s";
            return new MonitorReport
            {
                Attached = attached,
                State = state,
                AttachedSinceUnixMs = _attachedSince,
                LastBatchUnixMs = _lastBatch,
                Batches = _batches,
                RejectedBatches = _rejected,
                DroppedRows = _droppedRows,
                Status = _status,
                ByTarget = Rows(_byTarget, static key => (0, key.Target), static key => key.Operation),
                ByThread = Rows(_byThread, static key => (key.ThreadId, "*"), static key => key.Operation),
                Comparison = _status is null ? [] : Compare(),
                RecentEvents = [.. _recentEvents],
                ThreadCounters = _threadCounters,
                RecentGcPauses = [.. _recentPauses],
                TopAllocations = TopAllocations(20),
                Exceptions = Exceptions(),
                Contentions = _contentions,
                ContentionMicros = _contentionMicros,
            };
        }
    }

    /// <summary>Per thread, since attach: the server's accounting (now minus at attach) beside the kernel's totals.</summary>
    private List<IoComparison> Compare()
    {
        var kernel = new Dictionary<int, long[]>();
        foreach (var ((tid, operation), totals) in _byThread)
        {
            if (!kernel.TryGetValue(tid, out var row))
                kernel[tid] = row = new long[5];
            switch (operation)
            {
                case "write": row[0] += totals.FileBytes; break;
                case "read": row[1] += totals.FileBytes; break;
                case "fsync": row[2] += totals.Count; break;
                case "receive": row[3] += totals.Bytes; break;
                case "send": row[4] += totals.Bytes; break;
            }
        }
        var rows = new List<IoComparison>();
        foreach (var (tid, now) in ServerFigures())
        {
            var before = _baseline.GetValueOrDefault(tid);
            var seen = kernel.GetValueOrDefault(tid) ?? new long[5];
            kernel.Remove(tid);
            var row = new IoComparison(tid, now.Name, now.DiskWrite - before.DiskWrite, seen[0], now.DiskRead - before.DiskRead, seen[1],
                now.Fsyncs - before.Fsyncs, seen[2], now.NetIn - before.NetIn, seen[3], now.NetOut - before.NetOut, seen[4]);
            if (row.ServerDiskWriteBytes + row.KernelFileWriteBytes + row.ServerDiskReadBytes + row.KernelFileReadBytes + row.ServerFsyncs + row.KernelFsyncs
                + row.ServerNetInBytes + row.KernelReceiveBytes + row.ServerNetOutBytes + row.KernelSendBytes > 0)
                rows.Add(row);
        }
        foreach (var (tid, seen) in kernel)
            if (tid != 0)
                rows.Add(new IoComparison(tid, "(not known to the server)", 0, seen[0], 0, seen[1], 0, seen[2], 0, seen[3], 0, seen[4]));
        rows.Sort(static (a, b) => a.ThreadId.CompareTo(b.ThreadId));
        return rows;
    }

    /// <summary>The server's own per-thread disk and network counters, as they stand.</summary>
    private Dictionary<int, ServerBaseline> ServerFigures()
    {
        var figures = new Dictionary<int, ServerBaseline>();
        foreach (var thread in ThreadView.Build(server.Sampler.ThreadCpu))
            figures[thread.OsThreadId] = new ServerBaseline(thread.Name, 0, 0, 0, thread.NetInputBytes, thread.NetOutputBytes);
        foreach (var record in DiskIo.Snapshot())
        {
            long write = 0, read = 0, fsyncs = 0;
            foreach (var purpose in Enum.GetValues<DiskIoPurpose>())
            {
                var stats = record.Read(purpose);
                if (purpose is DiskIoPurpose.AofWrite or DiskIoPurpose.RewriteWrite or DiskIoPurpose.Manifest or DiskIoPurpose.SnapshotWrite)
                    write += stats.Bytes;
                else if (DiskIo.IsRead(purpose))
                    read += stats.Bytes;
                else if (purpose == DiskIoPurpose.AofFsync)
                    fsyncs += stats.Count;
            }
            var known = figures.GetValueOrDefault(record.OsThreadId, new ServerBaseline(record.Name, 0, 0, 0, 0, 0));
            figures[record.OsThreadId] = known with { DiskWrite = write, DiskRead = read, Fsyncs = fsyncs };
        }
        return figures;
    }

    private List<TypeAllocation> TopAllocations(int count)
    {
        var all = new List<TypeAllocation>(_allocations.Count);
        foreach (var (type, (bytes, ticks)) in _allocations)
            all.Add(new TypeAllocation(type, bytes, ticks));
        all.Sort(static (a, b) => b.Bytes.CompareTo(a.Bytes));
        return all.Count > count ? all.GetRange(0, count) : all;
    }

    private List<ExceptionCount> Exceptions()
    {
        var all = new List<ExceptionCount>(_exceptions.Count);
        foreach (var (type, (count, message)) in _exceptions)
            all.Add(new ExceptionCount(type, count, message));
        all.Sort(static (a, b) => b.Count.CompareTo(a.Count));
        return all;
    }

    private static List<KernelIoAggregate> Rows<TKey>(Dictionary<TKey, Totals> table, Func<TKey, (int ThreadId, string Target)> who, Func<TKey, string> operation)
        where TKey : notnull
    {
        var rows = new List<KernelIoAggregate>(table.Count);
        foreach (var (key, totals) in table)
        {
            var (tid, target) = who(key);
            rows.Add(new KernelIoAggregate(tid, target, totals.Kind, operation(key), totals.Calls, totals.Count, totals.Bytes, totals.Errors, totals.Micros, totals.Buckets));
        }
        rows.Sort(static (a, b) => b.Bytes != a.Bytes ? b.Bytes.CompareTo(a.Bytes) : b.Count.CompareTo(a.Count));
        return rows;
    }

    /// <summary>Adds a row's figures to its totals; false when the row is new and the table is full (not kept).</summary>
    private static bool Add<TKey>(Dictionary<TKey, Totals> table, TKey key, KernelIoAggregate io, int cap) where TKey : notnull
    {
        if (!table.TryGetValue(key, out var totals))
        {
            if (table.Count >= cap)
                return false;
            table[key] = totals = new Totals { Kind = Clip(io.TargetKind, NameCharsKept), Calls = Clip(io.Calls, NameCharsKept) };
        }
        totals.Count += io.Count;
        totals.Bytes += io.Bytes;
        if (io.TargetKind == "file")
            totals.FileBytes += io.Bytes;
        totals.Errors += io.Errors;
        totals.Micros += io.Micros;
        if (!totals.Calls.Contains(io.Calls, StringComparison.Ordinal))
            totals.Calls = Clip(MergeCalls(totals.Calls, io.Calls), NameCharsKept);
        for (int i = 0; i < totals.Buckets.Length && i < io.LatencyBuckets.Length; i++)
            totals.Buckets[i] += io.LatencyBuckets[i];
        return true;
    }

    private static string MergeCalls(string known, string more)
    {
        var calls = new SortedSet<string>(known.Split(',', StringSplitOptions.RemoveEmptyEntries), StringComparer.Ordinal);
        calls.UnionWith(more.Split(',', StringSplitOptions.RemoveEmptyEntries));
        return string.Join(',', calls);
    }

    private static void Enqueue<T>(Queue<T> queue, T item, int capacity)
    {
        if (queue.Count == capacity)
            queue.Dequeue();
        queue.Enqueue(item);
    }

    private sealed class Totals
    {
        public string Kind = "";
        public string Calls = "";
        public long Count;
        public long Bytes;
        public long FileBytes;
        public long Errors;
        public long Micros;
        public readonly long[] Buckets = new long[MicrosecondBuckets.Count];
    }

    private readonly record struct ServerBaseline(string Name, long DiskWrite, long DiskRead, long Fsyncs, long NetIn, long NetOut);
}
