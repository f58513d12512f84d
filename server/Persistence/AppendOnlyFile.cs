using System.Diagnostics;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.Threads;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// The append-only file, in Redis 7's multi-part layout: a manifest naming one base file and the
/// incremental files that follow it, all in the append directory.
///
/// Appending: a connection encodes its batch's writes while it still holds the shard, then copies
/// them here under one short lock (<see cref="Append"/>), so the file's order of two writes to one
/// key is the order they ran in. Whoever writes takes the whole buffer at once: under everysec and
/// no the connection waiting for its writes does it (group write, <see cref="TryWriteNow"/>),
/// under always the writer thread, which gathers a group and fdatasyncs it; the everysec fsync
/// runs on a thread of its own. A connection holds its replies until its writes
/// are safe as the policy promises (<see cref="AcknowledgedOffset"/>): with "always" until an
/// fdatasync covered them, otherwise until the kernel has them, so a crash of the process alone
/// never loses an acknowledged write, as with Redis, which writes before it replies. Every
/// connection whose writes arrived while the previous write or fdatasync ran is covered by the
/// next one (group commit), so throughput grows with the number of clients.
///
/// Failures: bytes not yet durable are kept in memory and the writer retries every second. A
/// failed write keeps every buffer written before it (under everysec and no those replies are
/// released: their bytes are in the file) and cuts off only the partial buffer, so the file ends
/// on a record boundary; a failed sync writes the unsynced buffers again over themselves, at the
/// same offsets, and syncs them again. Neither ever shortens the file below bytes already written,
/// so a crash during the outage loses no acknowledged write. Meanwhile write commands are refused
/// with MISCONF (<see cref="WriteError"/>), reads go on.
/// </summary>
public sealed partial class AppendOnlyFile : IDisposable
{
    private const int RetryIntervalMs = 1000;
    private const int EverySecIntervalMs = 1000;
    // Under everysec, also sync once this much is unsynced, which bounds the memory kept for retries.
    private const long MaxUnsyncedBytes = 64L * 1024 * 1024;
    // A connection appending past this waits for the writer: the disk is slower than the writes.
    private const long MaxBufferedBytes = 256L * 1024 * 1024;
    // Under everysec, written buffers stay in memory until an fsync covers them (a failed fsync
    // writes them again). While one fsync is slow (a stalled disk), writing on would keep every
    // byte written meanwhile: past this much waiting for the fsync the writer stops taking the
    // append buffer, which then fills to MaxBufferedBytes and makes appenders wait. So the AOF
    // holds at most MaxRetainedBytes + MaxBufferedBytes whatever the disk does.
    private const long MaxRetainedBytes = 2 * MaxUnsyncedBytes;
    private const int WriterWakeBytes = 1024 * 1024;
    private const int LeaderWaitMs = 1;

    private readonly DataServer _server;
    // Guards the append buffer and the writer's hand-offs; the writer sleeps on it (Monitor).
    private readonly object _gate = new();
    private AofRecordBuffer _active = new();
    private readonly Stack<AofRecordBuffer> _pool = new();
    private int _fileDatabase = -1;
    private long _appendedOffset;
    private bool _writerWaiting;
    private long _appendStalls;

    private volatile bool _enabled;
    private volatile string? _writeError;
    private long _durableOffset;
    private long _writtenOffset;
    private TaskCompletionSource _durabilityAdvanced = NewSignal();

    // Held by whoever writes the file: the writer thread for each pass, or a connection that
    // writes its group itself (TryWriteNow). Taken before _gate, never after.
    private readonly object _fileGate = new();

    // Owned by the holder of _fileGate.
    private Thread? _writer;
    private bool _stopRequested;
    private readonly List<PendingBuffer> _pending = [];
    private readonly List<PendingBuffer> _unsynced = [];
    // Set while MaxRetainedBytes wait for the fsync in flight; read by the writer's wait loop.
    private volatile bool _holdingBack;
    private DiskFile? _incr;
    private long _incrLength;     // where the next buffer is written (behind _writtenLength while rewriting after a failed sync)
    private long _writtenLength;  // the file's bytes of complete buffers: a failed write never cuts below this
    private long _syncedLength;   // the file's length as of the last point the policy counts as durable
    private long _fsyncedLength;  // the file's length at its last actual fdatasync
    private long _lastSyncTicks;
    private long _nextRetryTicks;
    private AofManifest _manifest = new();
    private AofRecordBuffer? _initialBase; // the snapshot taken when the AOF was turned on at run time

    public AppendOnlyFile(DataServer server)
    {
        _server = server;
    }

    public ILogger Log { get; set; } = NullLogger.Instance;

    /// <summary>True while writes are logged (appendonly yes and started).</summary>
    public bool Enabled => _enabled;

    /// <summary>Why writes are refused, or null while the disk works (MISCONF replies, INFO).</summary>
    public string? WriteError => _writeError;

    /// <summary>Logical offset (bytes ever appended) that is durable as the fsync policy defines it.</summary>
    public long DurableOffset => Volatile.Read(ref _durableOffset);

    /// <summary>Logical offset handed to the kernel: survives a crash of this process, not of the machine.</summary>
    public long WrittenOffset => Volatile.Read(ref _writtenOffset);

    /// <summary>How far replies may acknowledge writes: durable under "always", written otherwise.</summary>
    public long AcknowledgedOffset => Policy == FsyncPolicy.Always ? DurableOffset : WrittenOffset;

    /// <summary>Logical offset of everything appended so far; written under the lock, read without it.</summary>
    public long AppendedOffset => Volatile.Read(ref _appendedOffset);

    /// <summary>
    /// Completes the next time <see cref="WrittenOffset"/> or <see cref="DurableOffset"/> moves or
    /// the disk starts failing; read it before checking the offsets.
    /// </summary>
    public Task DurabilityAdvanced => Volatile.Read(ref _durabilityAdvanced).Task;

    public FsyncPolicy Policy => _server.Config.AppendFsync;

    // The append directory the open files are in, fixed when the AOF opens: CONFIG SET dir does not
    // move files under a running AOF. Writes go on to the open files, DEBUG RELOAD loads them, and
    // the next rewrite moves the AOF to the new place (Relocate), as Redis 7 does it.
    private volatile string _directory = "";
    private string Directory => _directory;
    private string BaseName => _server.Config.AppendFileName;

    /// <summary>
    /// Copies a connection's encoded writes into the shared buffer, with a SELECT in front of any
    /// run whose database differs from the file's. Called while the caller still holds the shards
    /// its writes touched. Returns the logical offset just past them.
    /// </summary>
    public long Append(AofRecordBuffer records)
    {
        lock (_gate)
        {
            while (_active.Length > MaxBufferedBytes && _writer is not null && !_stopRequested)
            {
                _appendStalls++;
                Monitor.Wait(_gate, 100);
            }
            long before = _active.Length;
            for (int i = 0; i < records.RunCount; i++)
            {
                var (database, start, end) = records.Run(i);
                if (database != _fileDatabase)
                {
                    _active.AppendRaw(AofRecordBuffer.SelectCommand(database));
                    _fileDatabase = database;
                }
                _active.AppendRaw(records.Span[start..end]);
            }
            Volatile.Write(ref _appendedOffset, _appendedOffset + _active.Length - before);
            // Under everysec and no the connections waiting for their writes write them
            // themselves (TryWriteNow); the writer thread is woken only when it has the job, or
            // when writes pile up with nobody waiting for them (the cron's expiry DELs).
            if (_writerWaiting && (Policy == FsyncPolicy.Always || _active.Length > WriterWakeBytes))
                Monitor.Pulse(_gate);
            return _appendedOffset;
        }
    }

    private void Wake()
    {
        lock (_gate)
            Monitor.Pulse(_gate);
    }

    private static TaskCompletionSource NewSignal() => new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Publishes a new durable offset and wakes every connection waiting on it.</summary>
    private void PublishDurable(long offset)
    {
        if (offset <= Volatile.Read(ref _durableOffset))
            return;
        if (offset > Volatile.Read(ref _writtenOffset))
            Volatile.Write(ref _writtenOffset, offset);
        Volatile.Write(ref _durableOffset, offset);
        WakeDurabilityWaiters();
    }

    /// <summary>Publishes a new written offset and wakes every connection waiting on it.</summary>
    private void PublishWritten(long offset)
    {
        if (offset <= Volatile.Read(ref _writtenOffset))
            return;
        Volatile.Write(ref _writtenOffset, offset);
        WakeDurabilityWaiters();
    }

    private void WakeDurabilityWaiters()
    {
        var previous = Interlocked.Exchange(ref _durabilityAdvanced, NewSignal());
        previous.TrySetResult();
    }

    /// <summary>
    /// Records a failing disk: write commands are refused from now on, and connections holding
    /// replies re-check what they wait for (see ClientConnection.FlushAsync).
    /// </summary>
    private void SetWriteError(string error)
    {
        _lastWriteStatusOk = false;
        _writeError = error;
        WakeDurabilityWaiters();
    }

    // ---- the writer thread -----------------------------------------------------------------

    private readonly record struct PendingBuffer(AofRecordBuffer Buffer, long EndOffset);

    private void StartWriter()
    {
        _stopRequested = false;
        _syncerStop = false;
        _writer = new Thread(WriterLoop) { IsBackground = true, Name = "aof writer" };
        _writer.Start();
        _syncer = new Thread(SyncerLoop) { IsBackground = true, Name = "aof fsync" };
        _syncer.Start();
    }

    // ---- the everysec fsync thread ---------------------------------------------------------
    //
    // Under everysec the fdatasync runs on its own thread, as Redis's bio thread does it, so a
    // slow flush of a second's worth of writes never holds up the writes (and the replies waiting
    // for them) that keep coming meanwhile. "always" syncs on the writer: that sync is the point.

    private sealed record SyncRequest(DiskFile File, long Length, int Buffers, long EndOffset);
    private sealed record SyncOutcome(SyncRequest Request, DiskFileException? Error, long Micros);

    private readonly object _syncGate = new();
    private Thread? _syncer;
    private bool _syncerStop;
    private SyncRequest? _syncHandoff;   // under _syncGate: for the fsync thread
    private SyncOutcome? _syncDone;      // under _gate: for the writer
    private SyncRequest? _syncInFlight;  // writer only

    /// <summary>What the AOF threads show as their in-flight work (/api/inflight, the studio).</summary>
    public const string InFlightAofWrite = "aof write";
    public const string InFlightAofFsync = "aof fsync";

    private void SyncerLoop()
    {
        Memory.TrackedAllocator.NameCurrentThread("aof fsync");
        while (true)
        {
            SyncRequest request;
            lock (_syncGate)
            {
                while (_syncHandoff is null && !_syncerStop)
                    Monitor.Wait(_syncGate);
                if (_syncHandoff is null)
                    return;
                request = _syncHandoff;
                _syncHandoff = null;
            }
            long started = Stopwatch.GetTimestamp();
            DiskFileException? error = null;
            var slot = ThreadCounters.Current.InFlight;
            slot.Begin(InFlightAofFsync);
            try
            {
                request.File.Sync(DiskIoPurpose.AofFsync);
            }
            catch (DiskFileException ex)
            {
                error = ex;
            }
            finally
            {
                slot.End();
            }
            lock (_gate)
            {
                _syncDone = new SyncOutcome(request, error, (long)Stopwatch.GetElapsedTime(started).TotalMicroseconds);
                Monitor.PulseAll(_gate);
            }
        }
    }

    private void StopSyncer()
    {
        lock (_syncGate)
        {
            _syncerStop = true;
            Monitor.PulseAll(_syncGate);
        }
        _syncer?.Join();
        _syncer = null;
    }

    /// <summary>Writer: hands the fsync of everything written so far to the fsync thread.</summary>
    private void StartBackgroundSync()
    {
        var request = new SyncRequest(_incr!, _incrLength, _unsynced.Count, _unsynced[^1].EndOffset);
        _syncInFlight = request;
        _lastSyncTicks = Environment.TickCount64;
        lock (_syncGate)
        {
            _syncHandoff = request;
            Monitor.Pulse(_syncGate);
        }
    }

    /// <summary>Writer: takes the fsync thread's result, if there is one, and acts on it.</summary>
    private void CompleteBackgroundSync()
    {
        SyncOutcome? outcome;
        lock (_gate)
        {
            outcome = _syncDone;
            _syncDone = null;
        }
        if (outcome is null)
            return;
        _syncInFlight = null;
        _holdingBack = false;
        if (outcome.Error is not null)
        {
            OnDiskError(outcome.Error, syncFailed: true);
            return;
        }
        _lastSyncMicros = outcome.Micros;
        if (outcome.Micros > 2_000_000)
            _delayedFsyncs++;
        _syncedLength = _fsyncedLength = outcome.Request.Length;
        ReleaseUnsynced(outcome.Request.Buffers);
    }

    /// <summary>Writer: waits for an fsync in flight (before syncing itself, switching or cutting files).</summary>
    private void AwaitBackgroundSync()
    {
        if (_syncInFlight is null)
            return;
        lock (_gate)
        {
            while (_syncDone is null)
                Monitor.Wait(_gate);
        }
        CompleteBackgroundSync();
    }

    private void WriterLoop()
    {
        Memory.TrackedAllocator.NameCurrentThread("aof writer");
        _lastSyncTicks = Environment.TickCount64;
        while (true)
        {
            lock (_gate)
            {
                while (!HasWorkLocked())
                {
                    _writerWaiting = true;
                    bool signalled = Monitor.Wait(_gate, WaitTimeoutMs());
                    _writerWaiting = false;
                    if (!signalled)
                        break; // time-driven work: the everysec sync, a retry, the auto-rewrite check
                }
            }
            if (Policy == FsyncPolicy.Always && !_stopRequested)
                GatherGroup();
            bool exit;
            lock (_fileGate)
                exit = WriterStep();
            if (exit)
                break;
        }
        lock (_fileGate)
        {
            AwaitBackgroundSync();
            StopSyncer();
            CloseIncr();
        }
    }

    /// <summary>One pass of the writer with the file held: write, sync, switch files. True when it should exit.</summary>
    private bool WriterStep()
    {
        bool stop;
        RewriteStep step;
        lock (_gate)
        {
            TakeActiveLocked();
            stop = _stopRequested;
            step = TakeRewriteStepLocked();
            Monitor.PulseAll(_gate); // appenders waiting for room
        }

        CompleteBackgroundSync();
        if (_initialBase is not null && !WriteInitialBase())
            return false;
        bool retryDue = _writeError is null || Environment.TickCount64 >= _nextRetryTicks;
        bool syncRequested = Interlocked.Exchange(ref _syncRequested, 0) != 0;
        if (retryDue)
            FlushPending(forceSync: stop || syncRequested || step == RewriteStep.Cut || Policy == FsyncPolicy.Always);
        if (step != RewriteStep.None)
            RunRewriteStep(step);
        if (stop)
        {
            if (_writeError is null && SyncBeforeExit())
                return true;
            // Stopping with the disk failing: keep trying a little, then give up loudly.
            if (Environment.TickCount64 > _stopDeadline)
            {
                Log.LogError("Exiting with {Bytes} bytes of the AOF not written: {Error}", PendingBytes(), _writeError);
                return true;
            }
            Thread.Sleep(100);
        }
        MaybeStartAutoRewrite();
        return false;
    }

    /// <summary>
    /// Under everysec and no, a connection whose replies wait for the kernel to have its writes
    /// writes them itself when nobody else is writing, with everything appended so far (group
    /// write, leader style): the replies then leave on its own thread, where handing the write to
    /// the writer thread would cost a wake-up there and a thread-pool hop back for every batch.
    /// Under always the writer thread keeps the job, since the sync and its gathering pause are
    /// the point. Returns false when someone else is writing or the writer must (errors, a file
    /// switch, the first base): the caller then waits as usual.
    /// </summary>
    public bool TryWriteNow()
    {
        // Waiting a moment for another connection's write (tens of microseconds) costs less than
        // parking this connection and resuming it from the thread pool; a write that takes
        // longer than that is left to finish while this connection waits asynchronously.
        if (Policy == FsyncPolicy.Always || !Monitor.TryEnter(_fileGate, LeaderWaitMs))
            return false;
        try
        {
            if (_incr is null || _writeError is not null || _initialBase is not null || _writer is null || _holdingBack)
                return false;
            lock (_gate)
            {
                if (_rewriteStep != RewriteStep.None || _stopRequested)
                    return false;
                TakeActiveLocked();
                Monitor.PulseAll(_gate);
            }
            FlushPending(forceSync: false);
            MaybeStartAutoRewrite(); // the writer thread may sleep for a while: check the growth here too
            return true;
        }
        finally
        {
            Monitor.Exit(_fileGate);
        }
    }

    private long _stopDeadline;
    private long _lastSyncMicros;

    /// <summary>
    /// Group commit's gathering pause: the clients released by the last fdatasync are sending their
    /// next writes right now; syncing at the first byte would cover only the fastest of them and
    /// leave the rest for another full sync. While writes keep arriving, and for at most the last
    /// sync's duration (2 ms at most), the writer yields its core to the connections producing
    /// them, then syncs them all at once (PostgreSQL's commit_delay, made adaptive). With a single
    /// client nothing arrives meanwhile, so the pause ends at the first look. Lock-free: it only
    /// watches the appended offset. (A timed wait cannot do this: Monitor waits in whole
    /// milliseconds, longer than the whole budget.)
    /// </summary>
    private void GatherGroup()
    {
        long budgetMicros = Math.Min(_lastSyncMicros, 2000);
        if (budgetMicros <= 0)
            return;
        long deadline = Stopwatch.GetTimestamp() + budgetMicros * Stopwatch.Frequency / 1_000_000;
        long seen = AppendedOffset;
        while (Stopwatch.GetTimestamp() < deadline && !_stopRequested)
        {
            Thread.Yield();
            long now = AppendedOffset;
            if (now == seen)
                break; // quiet: nobody else is about to write
            seen = now;
        }
    }

    /// <summary>Whatever the policy, nothing written is left unsynced when the writer stops.</summary>
    private bool SyncBeforeExit()
    {
        if (_incr is null || _incrLength == _fsyncedLength)
            return true;
        try
        {
            _incr.Sync(DiskIoPurpose.AofFsync);
            _fsyncedLength = _incrLength;
            return true;
        }
        catch (DiskFileException ex)
        {
            OnDiskError(ex, syncFailed: true);
            return false;
        }
    }

    private bool HasWorkLocked()
        => (!_active.IsEmpty && !_holdingBack) || _stopRequested || _rewriteStep != RewriteStep.None || _initialBase is not null || _syncDone is not null
           || Volatile.Read(ref _syncRequested) != 0
           // An fsync in flight reports back itself (_syncDone); counting its time as due work would
           // spin the writer for as long as a slow fsync lasts.
           || (_unsynced.Count > 0 && _syncInFlight is null && Environment.TickCount64 - _lastSyncTicks >= EverySecIntervalMs)
           || (_writeError is not null && Environment.TickCount64 >= _nextRetryTicks);

    private int WaitTimeoutMs()
    {
        long now = Environment.TickCount64;
        long until = long.MaxValue;
        if (_unsynced.Count > 0 && _syncInFlight is null)
            until = Math.Min(until, _lastSyncTicks + EverySecIntervalMs);
        if (_writeError is not null)
            until = Math.Min(until, _nextRetryTicks);
        if (until == long.MaxValue)
            return 1000; // also the auto-rewrite check's pace when idle
        return (int)Math.Clamp(until - now, 0, 1000);
    }

    private void TakeActiveLocked()
    {
        if (_active.IsEmpty || _holdingBack)
            return;
        Interlocked.Add(ref _inFlightBufferBytes, _active.CapacityBytes);
        _pending.Add(new PendingBuffer(_active, _appendedOffset));
        _active = _pool.Count > 0 ? _pool.Pop() : new AofRecordBuffer();
    }

    private void Recycle(AofRecordBuffer buffer)
    {
        Interlocked.Add(ref _inFlightBufferBytes, -buffer.CapacityBytes);
        buffer.Clear();
        lock (_gate)
        {
            if (_pool.Count < 4)
            {
                _pool.Push(buffer);
                return;
            }
        }
        buffer.Dispose();
    }

    private long PendingBytes()
    {
        long total = 0;
        foreach (var p in _pending)
            total += p.Buffer.Length;
        foreach (var p in _unsynced)
            total += p.Buffer.Length;
        return total;
    }

    /// <summary>
    /// Writes every pending buffer and syncs as the policy (or <paramref name="forceSync"/>) asks.
    /// On failure: keep everything not durable, refuse writes, retry in a second (<see cref="OnDiskError"/>).
    /// </summary>
    private void FlushPending(bool forceSync)
    {
        if (_incr is null)
            return;
        if (!forceSync && _syncInFlight is not null && _incrLength - _syncedLength >= MaxRetainedBytes)
        {
            if (!_holdingBack)
                Log.LogWarning("Asynchronous AOF fsync is taking too long (disk is busy?): holding back writes until it completes.");
            _holdingBack = true;
            return;
        }
        int written = 0;
        bool syncing = false;
        // Marked as in-flight work on the writer's own thread only: a connection writing here
        // (TryWriteNow) is inside its command's slot, which this must not overwrite.
        var slot = Thread.CurrentThread == _writer ? ThreadCounters.Current.InFlight : null;
        try
        {
            slot?.Begin(InFlightAofWrite);
            try
            {
                for (; written < _pending.Count; written++)
                {
                    var pending = _pending[written];
                    long writeStarted = Stopwatch.GetTimestamp();
                    _incr.Write(pending.Buffer.Span, _incrLength, DiskIoPurpose.AofWrite);
                    RecordWriteLatency(Stopwatch.GetTimestamp() - writeStarted);
                    _incrLength += pending.Buffer.Length;
                    _writtenLength = Math.Max(_writtenLength, _incrLength);
                    _unsynced.Add(pending);
                }
            }
            finally
            {
                slot?.End();
            }
            _pending.Clear();
            if (written > 0 && Policy != FsyncPolicy.Always)
                PublishWritten(_unsynced[^1].EndOffset); // under always the sync below publishes, once durable
            written = 0;

            var policy = Policy;
            long unsyncedBytes = _incrLength - _syncedLength;
            bool everysecDue = policy == FsyncPolicy.EverySec
                && (Environment.TickCount64 - _lastSyncTicks >= EverySecIntervalMs || unsyncedBytes > MaxUnsyncedBytes);
            if (everysecDue && !forceSync && _syncInFlight is null && _unsynced.Count > 0)
                StartBackgroundSync();
            if (forceSync || policy == FsyncPolicy.Always)
                AwaitBackgroundSync();
            bool sync = _unsynced.Count > 0 && (forceSync || policy == FsyncPolicy.Always);
            if (sync)
            {
                syncing = true;
                long started = Stopwatch.GetTimestamp();
                slot?.Begin(InFlightAofFsync);
                try
                {
                    _incr.Sync(DiskIoPurpose.AofFsync);
                }
                finally
                {
                    slot?.End();
                }
                if (policy == FsyncPolicy.Always)
                    _server.LatencyMonitor.RecordSince(LatencyEvents.AofFsyncAlways, started);
                _lastSyncMicros = (long)Stopwatch.GetElapsedTime(started).TotalMicroseconds;
                if (_lastSyncMicros > 2_000_000)
                    _delayedFsyncs++; // Redis's aof_delayed_fsync: an fsync slow enough to hold writes back
                _lastSyncTicks = Environment.TickCount64;
                _syncedLength = _fsyncedLength = _incrLength;
                ReleaseUnsynced();
            }
            else if (policy == FsyncPolicy.No && _unsynced.Count > 0 && _syncInFlight is null)
            {
                // "no" promises nothing past the write: what the kernel took is as durable as it gets.
                _syncedLength = _incrLength;
                ReleaseUnsynced();
            }
            if (_writeError is not null)
            {
                Log.LogWarning("AOF write error looks solved. The server can write again.");
                _writeError = null;
                _lastWriteStatusOk = true;
            }
        }
        catch (DiskFileException ex)
        {
            // The buffers written before the failure moved to _unsynced (and back in front of
            // _pending if a sync failed): leaving them in _pending too would write them twice on
            // the retry (an INCR applied twice on load), and twice more after every later failure.
            _pending.RemoveRange(0, written);
            OnDiskError(ex, syncFailed: syncing);
        }
    }

    /// <summary>
    /// Redis's latency events for an AOF write: "aof-write" always, and one more saying what else
    /// was using the disk: the everysec fdatasync on its thread, a rewrite (Redis: a child
    /// process), or nothing.
    /// </summary>
    private void RecordWriteLatency(long ticks)
    {
        var monitor = _server.LatencyMonitor;
        monitor.Record(_syncInFlight is not null ? LatencyEvents.AofWritePendingFsync
            : _rewriteRunning ? LatencyEvents.AofWriteActiveChild
            : LatencyEvents.AofWriteAlone, ticks);
        monitor.Record(LatencyEvents.AofWrite, ticks);
    }

    /// <summary>Frees the first <paramref name="count"/> written buffers (all by default), now durable.</summary>
    private void ReleaseUnsynced(int count = -1)
    {
        if (count < 0)
            count = _unsynced.Count;
        if (count == 0)
            return;
        long end = _unsynced[count - 1].EndOffset;
        for (int i = 0; i < count; i++)
            Recycle(_unsynced[i].Buffer);
        _unsynced.RemoveRange(0, count);
        PublishDurable(end);
    }

    /// <summary>
    /// A write or sync failed: refuse writes, retry in a second, and keep both the bytes in memory
    /// and every complete buffer in the file. After a failed write the buffers written before it are
    /// in the file, so (under everysec and no) their replies go out now, as Redis, which keeps
    /// what write(2) took; only the partial buffer is cut off, so the file ends on a record
    /// boundary. After a failed sync what was written may not be durable: the unsynced buffers are
    /// written again at the same offsets (identical bytes, nothing doubled) and synced again.
    /// </summary>
    private void OnDiskError(DiskFileException ex, bool syncFailed)
    {
        // The buffers this pass wrote completely, before the failure: in the file, hence acknowledged.
        long writtenThrough = !syncFailed && _unsynced.Count > 0 ? _unsynced[^1].EndOffset : 0;
        // An fsync still running would race the cut below; its result counts first.
        AwaitBackgroundSync();
        if (_writeError != ex.Message)
            Log.LogWarning("Error writing to the AOF file {File}: {Error}. Write commands are refused until it works again.", _incr?.Name, ex.Message);
        SetWriteError(ex.Message);
        _nextRetryTicks = Environment.TickCount64 + RetryIntervalMs;
        if (syncFailed)
        {
            // Write them again from the last durable point, over the same bytes.
            _pending.InsertRange(0, _unsynced);
            _unsynced.Clear();
            _incrLength = _syncedLength;
            return;
        }
        if (writtenThrough > 0 && Policy != FsyncPolicy.Always)
            PublishWritten(writtenThrough);
        // The partial buffer: its bytes past the complete ones are cut off. Where that fails, the
        // retry writes the whole buffer again at the same offset, over them.
        long keep = Math.Max(_incrLength, _writtenLength);
        try
        {
            _incr?.Truncate(keep);
        }
        catch (DiskFileException truncateError)
        {
            Log.LogWarning("Could not cut the partial write off the AOF file at {Length} bytes: {Error}", keep, truncateError.Message);
        }
    }

    private void CloseIncr()
    {
        AwaitBackgroundSync();
        _incr?.Dispose();
        _incr = null;
    }

    // ---- statistics for INFO ----------------------------------------------------------------

    private long _delayedFsyncs;
    private volatile bool _lastWriteStatusOk = true;

    public bool LastWriteStatusOk => _lastWriteStatusOk;
    public long DelayedFsyncs => Interlocked.Read(ref _delayedFsyncs);
    public long AppendStalls
    {
        get { lock (_gate) return _appendStalls; }
    }

    /// <summary>Bytes appended but not yet written to the file (aof_buffer_length).</summary>
    public long BufferedBytes
    {
        get { lock (_gate) return _active.Length; }
    }

    // Capacity of the buffers taken from appends and not yet recycled (waiting to be written, or
    // written and kept until synced): they move between lists off the lock, so they are summed here.
    private long _inFlightBufferBytes;

    /// <summary>
    /// Tracked memory the append buffers hold (mem_aof_buffer): the one taking appends, those
    /// waiting to be written or synced, and the spares. maxmemory leaves it out, as Redis does.
    /// </summary>
    public long BufferMemory
    {
        get
        {
            lock (_gate)
            {
                long total = _active.CapacityBytes + Volatile.Read(ref _inFlightBufferBytes);
                foreach (var pooled in _pool)
                    total += pooled.CapacityBytes;
                return total;
            }
        }
    }

    public void Dispose()
    {
        Stop(TimeSpan.FromSeconds(5));
        lock (_gate)
        {
            _active.Dispose();
            while (_pool.Count > 0)
                _pool.Pop().Dispose();
        }
    }
}
