using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Diagnostics.Monitor.Aggregation;

namespace Diagnostics.Monitor.Windows;

/// <summary>
/// Turns the Windows kernel's FileIO and DiskIO events into completed I/O events of the server.
/// A FileIO operation is logged twice: its start (Create, Read, Write, Flush, Cleanup, Close,
/// with the issuing thread and the file) and its OperationEnd (status and bytes), the two tied by
/// the IRP address; they are paired here, the time between them is the operation's duration.
/// A DiskIO completion names its issuing thread and carries its own duration; it is the server's
/// when a server thread issued it, or when it moved a file the server used (writeback by the
/// lazy writer: thread 0). Everything the kernel logs for other processes is ignored.
/// <para>
/// A real-time session does not merge its per-CPU buffers in time order, so an end can arrive
/// before its start: such an end waits (bounded) for a reorder window. An end that no start
/// claims, a start whose end never came (evicted from the bounded table, or its IRP reused by
/// another operation), are counted in <see cref="Dropped"/>, never guessed. Operations already
/// in flight when tracing began end without a start during the first second: not losses.
/// </para>
/// Platform-neutral: fed neutral records by <see cref="EtwKernelSource"/> on Windows and by
/// recorded sequences in tests. Used by one thread; each call takes the aggregator's gate.
/// Allocates only on the first sight of an IRP slot, a file, a disk or a name.
/// </summary>
public sealed class EtwIoMatcher
{
    public const int PendingKept = 65_536;
    public const int EarlyEndsKept = 4_096;
    public const int NamesKept = 65_536;
    public const int ThreadsKept = 65_536;

    /// <summary>Call table of the aggregator: FileIO starts by <see cref="EtwFileIoKind"/>, then DiskIO by <see cref="EtwDiskIoKind"/>.</summary>
    public static readonly string[] CallNames =
        ["FileIo/Create", "FileIo/Read", "FileIo/Write", "FileIo/Flush", "FileIo/Cleanup", "FileIo/Close", "DiskIo/Read", "DiskIo/Write", "DiskIo/FlushBuffers"];

    private const byte FirstDiskCall = 6;

    private readonly int _serverPid;
    private readonly IoAggregator _aggregator;
    private readonly long _ticksPerSecond;
    private readonly long _unixMicrosAtTickZero;
    private readonly int _pendingCapacity;
    private readonly long _reorderWindowTicks;
    private readonly long _diskRequestTimeoutTicks;

    private readonly Dictionary<ulong, PendingFileIo> _pendingFileIo = [];
    private readonly Dictionary<ulong, EarlyEnd> _earlyEnds = [];
    private readonly Dictionary<ulong, PendingDiskIo> _pendingDiskIo = [];
    /// <summary>Server disk requests completed before their init event arrived: the init is not a loss.</summary>
    private readonly Dictionary<ulong, long> _diskCompletedEarly = [];
    private readonly HashSet<int> _serverThreads = [];

    /// <summary>File key -> path, from the name events of every process (a name is logged before the server's first I/O on it).</summary>
    private readonly Dictionary<ulong, string> _namesByKey = [];
    /// <summary>File object -> target, from the server's own Creates: exact for handles opened after attach.</summary>
    private readonly Dictionary<ulong, int> _openedByServer = [];
    /// <summary>File key -> target of the files the server did I/O on; also what makes writeback of them the server's.</summary>
    private readonly Dictionary<ulong, ServerFile> _serverFiles = [];
    private readonly Dictionary<int, int> _diskTargets = [];
    private readonly long[] _evictionScratch;

    private bool _started;
    private long _countUnmatchedFrom = long.MaxValue;
    private long _latest = long.MinValue;
    private long _lastSweep;

    /// <param name="serverPid">The process whose I/O counts.</param>
    /// <param name="ticksPerSecond">Frequency of the records' timestamps (QPC: Stopwatch.Frequency on Windows).</param>
    /// <param name="unixMicrosAtTickZero">Wall clock, unix µs, at timestamp 0: turns a start into <see cref="IoEvent.UnixMicros"/>.</param>
    /// <param name="pendingCapacity">Starts kept waiting for their end (and disk inits for their completion).</param>
    public EtwIoMatcher(int serverPid, IoAggregator aggregator, long ticksPerSecond, long unixMicrosAtTickZero, int pendingCapacity = PendingKept)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(ticksPerSecond, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(pendingCapacity, 1);
        _serverPid = serverPid;
        _aggregator = aggregator;
        _ticksPerSecond = ticksPerSecond;
        _unixMicrosAtTickZero = unixMicrosAtTickZero;
        _pendingCapacity = pendingCapacity;
        // ETW flushes a real-time session's buffers about once a second: two seconds covers the
        // reordering between CPUs' buffers.
        _reorderWindowTicks = 2 * ticksPerSecond;
        // Storport times a request out well within two minutes and completes it with an error,
        // which is logged too: an init older than that lost its completion.
        _diskRequestTimeoutTicks = 120 * ticksPerSecond;
        _evictionScratch = new long[pendingCapacity];
    }

    /// <summary>Records offered, of every process (the session is machine-wide).</summary>
    public long Records { get; private set; }

    /// <summary>Ends no start claimed (the start lost, or evicted before its end came).</summary>
    public long UnmatchedEnds { get; private set; }

    /// <summary>Starts whose end never came: evicted from the full table, or their IRP reused by another operation.</summary>
    public long LostStarts { get; private set; }

    /// <summary>Every event the matcher could not turn into an I/O: the source's <see cref="Contracts.MonitorSourceStatus.DroppedInMonitor"/>.</summary>
    public long Dropped => UnmatchedEnds + LostStarts;

    /// <summary>Starts waiting for their end now.</summary>
    public int PendingOperations => _pendingFileIo.Count;

    public bool IsServerThread(int threadId) => threadId > 0 && _serverThreads.Contains(threadId);

    /// <summary>Whether an event logged by this process and thread is the server's (the process id is -1 when TraceEvent could not tell).</summary>
    public bool IsServerContext(int processId, int threadId) => processId == _serverPid || (processId == -1 && IsServerThread(threadId));

    /// <summary>Thread Start or DCStart (rundown): a thread of the server, or a thread id now used by another process.</summary>
    public void OnThreadStart(int processId, int threadId)
    {
        Records++;
        if (processId == _serverPid)
            RememberThread(threadId);
        else
            _serverThreads.Remove(threadId);
    }

    public void OnThreadStop(int processId, int threadId)
    {
        Records++;
        if (processId == _serverPid)
            _serverThreads.Remove(threadId);
    }

    public void OnFileName(in EtwFileName name)
    {
        lock (_aggregator.Gate)
        {
            Records++;
            if (name.Kind == EtwFileNameKind.Delete)
            {
                // The key can now be reused for another file: forget what it meant.
                _namesByKey.Remove(name.FileKey);
                _serverFiles.Remove(name.FileKey);
                return;
            }
            if (string.IsNullOrEmpty(name.Path))
                return;
            if (_namesByKey.Count >= NamesKept && !_namesByKey.ContainsKey(name.FileKey))
                _namesByKey.Clear();
            _namesByKey[name.FileKey] = name.Path;
            // A file the server already uses under a placeholder (or an older name) is named from now on.
            ref var file = ref CollectionsMarshal.GetValueRefOrNullRef(_serverFiles, name.FileKey);
            if (!Unsafe.IsNullRef(ref file))
                file = new ServerFile(Intern(name.Path), Named: true);
        }
    }

    public void OnFileIoStart(in EtwFileIoInit start)
    {
        lock (_aggregator.Gate)
        {
            Advance(start.Timestamp);
            if (!IsServerContext(start.ProcessId, start.ThreadId))
            {
                // One IRP is never in flight twice: a server operation still waiting under this
                // address lost its end.
                if (_pendingFileIo.Remove(start.Irp))
                    LostStarts++;
                if (start.Kind == EtwFileIoKind.Close)
                    _openedByServer.Remove(start.FileObject);
                return;
            }
            RememberThread(start.ThreadId);
            int target = start.Kind switch
            {
                EtwFileIoKind.Create => OpenedTarget(start.FileObject, start.Path),
                EtwFileIoKind.Other => -1,
                _ => FileTarget(start.FileObject, start.FileKey),
            };
            // The file object is freed after its Close: its address will name another open.
            if (start.Kind == EtwFileIoKind.Close)
                _openedByServer.Remove(start.FileObject);
            var pending = new PendingFileIo(start.Kind, start.ThreadId, target, start.FileObject, start.Timestamp);
            if (_earlyEnds.Remove(start.Irp, out var early))
            {
                if (early.Timestamp >= start.Timestamp)
                {
                    Complete(pending, early.NtStatus, early.ExtraInfo, early.Timestamp);
                    return;
                }
                // That end closed an earlier use of the address, whose start never came.
                CountUnmatchedEnd(early.Timestamp);
            }
            if (_pendingFileIo.Count >= _pendingCapacity && !_pendingFileIo.ContainsKey(start.Irp))
                LostStarts += EvictOldest(_pendingFileIo);
            ref var slot = ref CollectionsMarshal.GetValueRefOrAddDefault(_pendingFileIo, start.Irp, out bool superseded);
            if (superseded)
                LostStarts++;
            slot = pending;
        }
    }

    public void OnFileIoEnd(in EtwFileIoEnd end)
    {
        lock (_aggregator.Gate)
        {
            Advance(end.Timestamp);
            if (_pendingFileIo.Remove(end.Irp, out var pending))
            {
                if (end.Timestamp >= pending.Start)
                {
                    Complete(pending, end.NtStatus, end.ExtraInfo, end.Timestamp);
                    return;
                }
                // A late end of the address's previous use: the start waiting under it stays.
                _pendingFileIo[end.Irp] = pending;
                if (IsServerContext(end.ProcessId, end.ThreadId))
                    CountUnmatchedEnd(end.Timestamp);
                return;
            }
            // Most ends of other processes land here; the server's may be early, so they wait.
            if (!IsServerContext(end.ProcessId, end.ThreadId))
                return;
            if (_earlyEnds.Count >= EarlyEndsKept && !_earlyEnds.ContainsKey(end.Irp))
            {
                CountUnmatchedEnd(end.Timestamp);
                return;
            }
            ref var slot = ref CollectionsMarshal.GetValueRefOrAddDefault(_earlyEnds, end.Irp, out bool superseded);
            if (superseded)
                CountUnmatchedEnd(slot.Timestamp);
            slot = new EarlyEnd(end.NtStatus, end.ExtraInfo, end.Timestamp);
        }
    }

    public void OnDiskIoStart(in EtwDiskIoInit start)
    {
        lock (_aggregator.Gate)
        {
            Advance(start.Timestamp);
            if (!IsServerContext(start.ProcessId, start.ThreadId))
            {
                if (_pendingDiskIo.Remove(start.Irp))
                    LostStarts++;
                return;
            }
            // Its completion came first (another CPU's buffer) and was counted already.
            if (_diskCompletedEarly.Remove(start.Irp, out long completedStart) && Math.Abs(completedStart - start.Timestamp) <= _reorderWindowTicks)
                return;
            if (_pendingDiskIo.Count >= _pendingCapacity && !_pendingDiskIo.ContainsKey(start.Irp))
                LostStarts += EvictOldest(_pendingDiskIo);
            ref var slot = ref CollectionsMarshal.GetValueRefOrAddDefault(_pendingDiskIo, start.Irp, out bool superseded);
            if (superseded)
                LostStarts++;
            slot = new PendingDiskIo(start.ThreadId, start.Timestamp);
        }
    }

    public void OnDiskIoCompletion(in EtwDiskIoCompletion completion)
    {
        lock (_aggregator.Gate)
        {
            Advance(completion.Timestamp);
            int threadId;
            long start;
            if (_pendingDiskIo.Remove(completion.Irp, out var issued))
            {
                threadId = issued.ThreadId;
                start = issued.Start;
            }
            else
            {
                start = completion.Timestamp - NanosToTicks(completion.ElapsedNanos);
                if (IsServerThread(completion.IssuingThreadId))
                {
                    threadId = completion.IssuingThreadId;
                    if (_diskCompletedEarly.Count < EarlyEndsKept)
                        _diskCompletedEarly[completion.Irp] = start;
                }
                else if (completion.FileKey != 0 && _serverFiles.ContainsKey(completion.FileKey))
                    threadId = 0;
                else
                    return;
            }
            long nanos = completion.ElapsedNanos > 0 ? completion.ElapsedNanos : TicksToNanos(completion.Timestamp - start);
            var operation = completion.Kind switch
            {
                EtwDiskIoKind.Read => IoOperation.DiskRead,
                EtwDiskIoKind.Write => IoOperation.DiskWrite,
                _ => IoOperation.DiskFlush,
            };
            long result = completion.Kind == EtwDiskIoKind.Flush ? 0 : completion.TransferSize;
            _aggregator.Add(new IoEvent(UnixMicros(start), threadId, DiskTarget(completion.DiskNumber), operation,
                (byte)(FirstDiskCall + (byte)completion.Kind), result, nanos));
        }
    }

    /// <summary>
    /// Settles every end still waiting for its start as unmatched (ends of operations in flight
    /// at attach excepted): for the end of a recording, when no start can come any more.
    /// </summary>
    public void ExpireWaitingEnds()
    {
        lock (_aggregator.Gate)
            SweepEarlyEnds(long.MaxValue);
    }

    private void Complete(in PendingFileIo pending, int ntStatus, ulong extraInfo, long endTimestamp)
    {
        if (pending.Kind == EtwFileIoKind.Other)
            return;
        bool failed = ntStatus < 0;
        if (failed && pending.Kind == EtwFileIoKind.Create)
            _openedByServer.Remove(pending.FileObject);
        var operation = pending.Kind switch
        {
            EtwFileIoKind.Create => IoOperation.Open,
            EtwFileIoKind.Read => IoOperation.Read,
            EtwFileIoKind.Write => IoOperation.Write,
            EtwFileIoKind.Flush => IoOperation.Fsync,
            _ => IoOperation.Close,
        };
        // Bytes moved are the file system's ExtraInfo; a failure's result is its NTSTATUS, negative.
        long result = failed ? ntStatus
            : pending.Kind is EtwFileIoKind.Read or EtwFileIoKind.Write ? (extraInfo > long.MaxValue ? long.MaxValue : (long)extraInfo)
            : 0;
        _aggregator.Add(new IoEvent(UnixMicros(pending.Start), pending.ThreadId, pending.Target, operation, (byte)pending.Kind, result,
            TicksToNanos(endTimestamp - pending.Start)));
    }

    /// <summary>Counts a record and keeps the clock: the first record starts the in-flight grace, time sweeps what waited too long.</summary>
    private void Advance(long timestamp)
    {
        Records++;
        if (!_started)
        {
            _started = true;
            _countUnmatchedFrom = timestamp + _ticksPerSecond;
            _lastSweep = timestamp;
        }
        if (timestamp > _latest)
            _latest = timestamp;
        if (_latest - _lastSweep < _reorderWindowTicks)
            return;
        _lastSweep = _latest;
        SweepEarlyEnds(_latest - _reorderWindowTicks);
        foreach (var (irp, completedStart) in _diskCompletedEarly)
            if (completedStart < _latest - _reorderWindowTicks)
                _diskCompletedEarly.Remove(irp);
        foreach (var (irp, issued) in _pendingDiskIo)
            if (issued.Start < _latest - _diskRequestTimeoutTicks)
            {
                _pendingDiskIo.Remove(irp);
                LostStarts++;
            }
    }

    private void SweepEarlyEnds(long olderThan)
    {
        foreach (var (irp, early) in _earlyEnds)
            if (early.Timestamp < olderThan)
            {
                _earlyEnds.Remove(irp);
                CountUnmatchedEnd(early.Timestamp);
            }
    }

    private void CountUnmatchedEnd(long timestamp)
    {
        // An operation in flight when tracing began ends without a start: not a loss.
        if (timestamp >= _countUnmatchedFrom)
            UnmatchedEnds++;
    }

    private void RememberThread(int threadId)
    {
        if (threadId > 0 && _serverThreads.Count < ThreadsKept)
            _serverThreads.Add(threadId);
    }

    /// <summary>
    /// Evicts the oldest eighth of a full table in one pass (one sort of a preallocated array),
    /// so that a table kept full by lost ends costs a sort per eighth of its size, not per start.
    /// </summary>
    private int EvictOldest<T>(Dictionary<ulong, T> table) where T : struct, IStarted
    {
        int count = 0;
        foreach (var (_, entry) in table)
            _evictionScratch[count++] = entry.Start;
        var starts = _evictionScratch.AsSpan(0, count);
        starts.Sort();
        int evict = Math.Max(1, count / 8);
        long newestEvicted = starts[evict - 1];
        int evicted = 0;
        foreach (var (irp, entry) in table)
            if (entry.Start <= newestEvicted && evicted < evict)
            {
                table.Remove(irp);
                evicted++;
            }
        return evicted;
    }

    private int OpenedTarget(ulong fileObject, string? path)
    {
        int target = string.IsNullOrEmpty(path) ? Intern(UnknownFileName(fileObject)) : Intern(path);
        if (_openedByServer.Count >= NamesKept && !_openedByServer.ContainsKey(fileObject))
            _openedByServer.Clear();
        _openedByServer[fileObject] = target;
        return target;
    }

    /// <summary>The target of an I/O on an open file: its Create's path, else its key's name, else a placeholder until a name comes.</summary>
    private int FileTarget(ulong fileObject, ulong fileKey)
    {
        ulong key = fileKey != 0 ? fileKey : fileObject;
        if (_serverFiles.Count >= NamesKept && !_serverFiles.ContainsKey(key))
            _serverFiles.Clear();
        ref var file = ref CollectionsMarshal.GetValueRefOrAddDefault(_serverFiles, key, out bool known);
        if (known && file.Named)
            return file.Target;
        if (_openedByServer.TryGetValue(fileObject, out int opened))
            file = new ServerFile(opened, Named: true);
        else if (_namesByKey.TryGetValue(key, out string? path))
            file = new ServerFile(Intern(path), Named: true);
        else if (!known)
            file = new ServerFile(Intern(UnknownFileName(fileObject)), Named: false);
        return file.Target;
    }

    private int DiskTarget(int diskNumber)
    {
        if (!_diskTargets.TryGetValue(diskNumber, out int target))
            _diskTargets[diskNumber] = target = _aggregator.Targets.Intern("disk " + diskNumber.ToString(CultureInfo.InvariantCulture), TargetKind.Device);
        return target;
    }

    private int Intern(string path) => _aggregator.Targets.Intern(path, KindOf(path));

    private static TargetKind KindOf(string path) =>
        path.StartsWith(@"\Device\NamedPipe", StringComparison.OrdinalIgnoreCase) ? TargetKind.Pipe
        : path.StartsWith(@"\Device\Afd", StringComparison.OrdinalIgnoreCase) ? TargetKind.Socket
        : TargetKind.File;

    private static string UnknownFileName(ulong fileObject) => "file object 0x" + fileObject.ToString("x", CultureInfo.InvariantCulture);

    private long UnixMicros(long timestamp) => _unixMicrosAtTickZero + Scale(timestamp, 1_000_000);

    private long TicksToNanos(long ticks) => Scale(ticks, 1_000_000_000);

    private long NanosToTicks(long nanos) => nanos / 1_000_000_000 * _ticksPerSecond + nanos % 1_000_000_000 * _ticksPerSecond / 1_000_000_000;

    /// <summary>ticks * unitsPerSecond / frequency without overflowing for large tick counts.</summary>
    private long Scale(long ticks, long unitsPerSecond) => ticks / _ticksPerSecond * unitsPerSecond + ticks % _ticksPerSecond * unitsPerSecond / _ticksPerSecond;

    private interface IStarted
    {
        long Start { get; }
    }

    private readonly record struct PendingFileIo(EtwFileIoKind Kind, int ThreadId, int Target, ulong FileObject, long Start) : IStarted;

    private readonly record struct PendingDiskIo(int ThreadId, long Start) : IStarted;

    private readonly record struct EarlyEnd(int NtStatus, ulong ExtraInfo, long Timestamp);

    private readonly record struct ServerFile(int Target, bool Named);
}
