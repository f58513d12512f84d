using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Engine;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Persistence;

// BGREWRITEAOF and automatic rewrites.
//
// Redis compacts by forking: the child sees a frozen copy of memory. A .NET process cannot fork,
// and freezing the live keyspace would stall every client for the length of the copy. Instead the
// rewrite compacts the files: at the cut, under the append lock, new writes start going to a new
// incremental file; everything before the cut is exactly the old base plus the old incremental
// files, so replaying those into a private keyspace on a background thread and writing that out
// gives a base consistent with the cut while the server goes on. The price is reading the old
// files back and holding a second copy of the data during the rewrite (charged, like all native
// memory, to the "aof rewrite" thread, so it shows in INFO threads); the fork's copy-on-write has
// the same worst case. Every step that changes which files count is one atomic manifest switch.
public sealed partial class AppendOnlyFile
{
    private enum RewriteStep { None, Cut, Finish, Failed }

    private RewriteStep _rewriteStep;
    private volatile bool _rewriteRunning;
    private volatile bool _rewriteCancel;
    private Thread? _rewriteThread;
    private string? _rewriteOutput;
    private List<AofFileInfo>? _rewriteFolded;
    private string? _rewriteTarget;   // where the new base goes: the append directory as dir names it at the cut
    private string? _moveTriedFor;    // the last directory a rewrite was started to move the AOF to (writer only)
    private DateTime _rewriteStarted;
    private long _rewriteBaseSize;
    private long _baseSize;
    private long _closedIncrSize;

    private volatile bool _lastRewriteOk = true;
    private long _rewrites;
    private long _rewriteFailuresInARow;
    private long _lastRewriteSeconds = -1;

    public bool RewriteInProgress => _rewriteRunning;

    private Memory.ThreadMemoryRecord? _rewriteMemory;

    /// <summary>
    /// Tracked memory the rewrite thread holds (its private keyspace and buffers; 0 once it is
    /// done). Like the copy-on-write pages of Redis's forked rewrite, maxmemory leaves it out:
    /// counting it would evict the live data to pay for a copy that is about to go.
    /// </summary>
    public long RewriteMemory => Math.Max(0, Volatile.Read(ref _rewriteMemory)?.LiveBytes ?? 0);
    public bool LastRewriteOk => _lastRewriteOk;
    public long Rewrites => Interlocked.Read(ref _rewrites);
    public long RewriteFailuresInARow => Interlocked.Read(ref _rewriteFailuresInARow);
    public long LastRewriteSeconds => Interlocked.Read(ref _lastRewriteSeconds);
    public long CurrentRewriteSeconds => _rewriteRunning ? (long)(DateTime.UtcNow - _rewriteStarted).TotalSeconds : -1;

    /// <summary>aof_current_size: the base plus every incremental file.</summary>
    public long CurrentSize => Volatile.Read(ref _baseSize) + Volatile.Read(ref _closedIncrSize) + Volatile.Read(ref _incrLength);
    public long BaseSize => Volatile.Read(ref _baseSize);

    /// <summary>BGREWRITEAOF: returns null when started, or Redis's error text.</summary>
    public string? StartRewrite()
    {
        if (!_enabled)
            return "ERR Background append only file rewriting needs appendonly yes: turn it on with CONFIG SET appendonly yes, which writes a full base file";
        lock (_gate)
        {
            if (_rewriteRunning || _rewriteStep != RewriteStep.None)
                return "ERR Background append only file rewriting already in progress";
            BeginRewriteLocked();
        }
        return null;
    }

    private void BeginRewriteLocked()
    {
        _rewriteRunning = true;
        _rewriteCancel = false;
        _rewriteStarted = DateTime.UtcNow;
        _rewriteStep = RewriteStep.Cut;
        Monitor.PulseAll(_gate);
    }

    private RewriteStep TakeRewriteStepLocked()
    {
        var step = _rewriteStep;
        _rewriteStep = RewriteStep.None;
        if (step == RewriteStep.Cut)
            _fileDatabase = -1; // the next append opens the new file: it must SELECT first
        return step;
    }

    private void RunRewriteStep(RewriteStep step)
    {
        switch (step)
        {
            case RewriteStep.Cut:
                Cut();
                break;
            case RewriteStep.Finish:
                Finish();
                break;
            case RewriteStep.Failed:
                FinishRewriteStats(ok: false);
                break;
        }
    }

    /// <summary>
    /// Writer thread, right after writing and syncing everything before the cut: opens the next
    /// incremental file and persists a manifest that lists it, then starts the compaction of
    /// every file before it.
    /// </summary>
    private void Cut()
    {
        if (_writeError is not null || _incr is null)
        {
            Log.LogWarning("Background AOF rewrite not started: {Error}", _writeError ?? "the AOF is not open");
            FinishRewriteStats(ok: false);
            return;
        }
        string target = _server.Config.AppendDirectory;
        if (target != Directory)
        {
            try
            {
                System.IO.Directory.CreateDirectory(target);
                // Another path to the same directory (a symlink, a bind mount) is no move: copying
                // the files onto themselves would empty them.
                if (SameDirectory(Directory, target))
                    target = Directory;
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                Log.LogWarning("Background AOF rewrite not started: can't prepare the append only directory {Directory} to move the AOF to: {Error}", target, ex.Message);
                FinishRewriteStats(ok: false);
                return;
            }
        }
        var folded = new List<AofFileInfo>(_manifest.LoadOrder());
        var next = _manifest.Clone();
        long sequence = next.CurrentIncrSequence + 1;
        string name = AofManifest.IncrFileName(BaseName, sequence);
        DiskFile? created = null;
        try
        {
            created = DiskFile.Create(Path.Combine(Directory, name));
            next.Incrementals.Add(new AofFileInfo(name, sequence, AofFileType.Incremental));
            next.CurrentIncrSequence = sequence;
            next.Persist(Directory, BaseName);
        }
        catch (DiskFileException ex)
        {
            created?.Dispose();
            TryDelete(Path.Combine(Directory, name));
            Log.LogWarning("Background AOF rewrite not started: can't open a new incremental file: {Error}", ex.Message);
            FinishRewriteStats(ok: false);
            return;
        }
        CloseIncr();
        _incr = created;
        _incrLength = _writtenLength = _syncedLength = _fsyncedLength = 0;
        _manifest = next;
        RefreshSizes();

        _rewriteFolded = folded;
        _rewriteTarget = target;
        string source = Directory;
        _rewriteThread = new Thread(() => Compact(folded, source, target)) { IsBackground = true, Name = "aof rewrite" };
        _rewriteThread.Start();
        Log.LogInformation("Background append only file rewriting started: compacting {Files} file(s); new writes go to {Incr}", folded.Count, name);
    }

    /// <summary>
    /// The rewrite thread: replays the folded files (in <paramref name="source"/>) into a private
    /// keyspace and writes it out as a base file in <paramref name="target"/>.
    /// </summary>
    private void Compact(List<AofFileInfo> folded, string source, string target)
    {
        Memory.TrackedAllocator.NameCurrentThread("aof rewrite");
        Volatile.Write(ref _rewriteMemory, Memory.TrackedAllocator.CurrentThread);
        string temp = TempRewriteFile(target);
        var config = _server.Config;
        bool ok = false;
        try
        {
            using (var keyspace = new Keyspace(1, config.Databases, ExecutionMode.Inline, config.Hz, runCron: false))
            {
                var sourceFiles = new AofManifest();
                foreach (var file in folded)
                {
                    if (file.Type == AofFileType.Base)
                        sourceFiles.Base = file;
                    else
                        sourceFiles.Incrementals.Add(file);
                }
                AofLoader.Load(_server, keyspace, source, sourceFiles, DiskIoPurpose.RewriteRead, Log, allowTruncatedTail: false, () => _rewriteCancel);
                WriteBase(keyspace, temp);
            }
            ok = !_rewriteCancel;
        }
        catch (OperationCanceledException)
        {
        }
        catch (Exception ex) when (ex is DiskFileException or AofFormatException or IOException)
        {
            Log.LogWarning("Background AOF rewrite failed: {Error}", ex.Message);
        }
        if (!ok)
            TryDelete(temp);
        lock (_gate)
        {
            if (_rewriteCancel)
            {
                _rewriteRunning = false;
                return;
            }
            _rewriteOutput = ok ? temp : null;
            _rewriteStep = ok ? RewriteStep.Finish : RewriteStep.Failed;
            Monitor.PulseAll(_gate);
        }
    }

    // Whether the base the rewrite wrote is an RDB (aof-use-rdb-preamble at the time it wrote it).
    private bool _rewriteBaseIsRdb;

    private void WriteBase(Keyspace keyspace, string path)
    {
        _rewriteBaseIsRdb = _server.Config.AofUseRdbPreamble;
        if (_rewriteBaseIsRdb)
        {
            WriteRdbBase(keyspace, path);
            return;
        }
        using var file = DiskFile.Create(path);
        using var buffer = new AofRecordBuffer();
        long offset = 0, syncedAt = 0;
        bool incrementalSync = _server.Config.AofRewriteIncrementalFsync;
        void Drain(AofRecordBuffer drained)
        {
            if (_rewriteCancel)
                throw new OperationCanceledException();
            file.Write(drained.Span, offset, DiskIoPurpose.RewriteWrite);
            offset += drained.Length;
            drained.Clear();
            // Syncing as it goes keeps the final fsync short and the page cache from filling with one file.
            if (incrementalSync && offset - syncedAt >= 4 * 1024 * 1024)
            {
                file.Sync(DiskIoPurpose.RewriteWrite);
                syncedAt = offset;
            }
        }
        // The function libraries first, as Redis's rewrite writes them: FUNCTION LOAD of each one's code.
        foreach (var library in _server.Scripts.Functions.Libraries)
        {
            buffer.BeginCommand(0, 3);
            buffer.Argument("FUNCTION"u8);
            buffer.Argument("LOAD"u8);
            buffer.Argument(library.Code);
            buffer.EndCommand();
        }
        KeyspaceDumper.Dump(keyspace, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), buffer, Drain);
        Drain(buffer);
        file.Sync(DiskIoPurpose.RewriteWrite);
    }

    /// <summary>
    /// The base as an RDB (aof-use-rdb-preamble yes, Redis's default): the private keyspace is this
    /// thread's alone, so it is serialized as it stands, with the function libraries and aof-base 1.
    /// </summary>
    private void WriteRdbBase(Keyspace keyspace, string path)
    {
        using var file = DiskFile.Create(path);
        long offset = 0, syncedAt = 0;
        bool incrementalSync = _server.Config.AofRewriteIncrementalFsync;
        using var snapshot = Snapshots.RdbSnapshot.TakeHolding(keyspace, Snapshots.RdbSaves.WriteOptions(_server), Snapshots.RdbSaves.FunctionCodes(_server));
        string? error = snapshot.WriteTo(bytes =>
        {
            if (_rewriteCancel)
                throw new OperationCanceledException();
            file.Write(bytes, offset, DiskIoPurpose.RewriteWrite);
            offset += bytes.Length;
            if (incrementalSync && offset - syncedAt >= 4 * 1024 * 1024)
            {
                file.Sync(DiskIoPurpose.RewriteWrite);
                syncedAt = offset;
            }
        }, aofBase: true);
        if (error is not null)
            throw new IOException(error);
        file.Sync(DiskIoPurpose.RewriteWrite);
    }

    /// <summary>Writer thread: installs the compacted base in place of the files it folded.</summary>
    private void Finish()
    {
        string temp = _rewriteOutput!;
        var folded = _rewriteFolded!;
        if (_rewriteTarget != Directory)
        {
            Relocate(temp, _rewriteTarget!, folded);
            return;
        }
        try
        {
            var remaining = new List<AofFileInfo>();
            foreach (var incr in _manifest.Incrementals)
                if (!folded.Contains(incr))
                    remaining.Add(incr);
            _manifest = InstallBase(_manifest, temp, remaining, _rewriteBaseIsRdb);
            RefreshSizes();
            _rewriteBaseSize = CurrentSize;
            FinishRewriteStats(ok: true);
            Log.LogInformation("Background AOF rewrite finished successfully: base {Base} ({Size})", _manifest.Base!.Name, AofLoader.FormatBytes(_baseSize));
        }
        catch (DiskFileException ex)
        {
            TryDelete(temp);
            Log.LogWarning("Background AOF rewrite failed while switching files: {Error}", ex.Message);
            FinishRewriteStats(ok: false);
        }
    }

    /// <summary>
    /// Renames <paramref name="temp"/> to the next base name and persists a manifest of that base
    /// plus <paramref name="incrementals"/>; the replaced files are listed as history in the
    /// switch, then deleted, then dropped from the manifest. A crash anywhere leaves a manifest
    /// whose files all exist.
    /// </summary>
    private AofManifest InstallBase(AofManifest current, string temp, List<AofFileInfo> incrementals, bool rdb = false)
    {
        long baseSequence = current.CurrentBaseSequence + 1;
        string baseName = AofManifest.BaseFileName(BaseName, baseSequence, rdb);
        long renameStarted = System.Diagnostics.Stopwatch.GetTimestamp();
        File.Move(temp, Path.Combine(Directory, baseName), overwrite: true);
        _server.LatencyMonitor.RecordSince(LatencyEvents.AofRename, renameStarted);
        var next = new AofManifest
        {
            Base = new AofFileInfo(baseName, baseSequence, AofFileType.Base),
            CurrentBaseSequence = baseSequence,
            CurrentIncrSequence = Math.Max(current.CurrentIncrSequence, incrementals.Count > 0 ? incrementals[^1].Sequence : 0),
        };
        next.Incrementals.AddRange(incrementals);
        foreach (var old in current.LoadOrder())
            if (!incrementals.Contains(old))
                next.History.Add(old with { Type = AofFileType.History });
        next.History.AddRange(current.History);
        next.Persist(Directory, BaseName);
        foreach (var old in next.History)
            TryDelete(Path.Combine(Directory, old.Name));
        next.History.Clear();
        next.Persist(Directory, BaseName);
        return next;
    }

    /// <summary>
    /// Writer thread: finishes a rewrite that moves the AOF to the append directory dir named at the
    /// cut (CONFIG SET dir while the AOF was on). The new base is already in the new directory;
    /// everything appended so far is written and synced in the old one, the incremental files
    /// since the cut are copied over, a manifest of the new base and those copies is persisted
    /// there, and appends continue in the copy of the last one. The old directory is left as it
    /// is: a complete, loadable AOF as of the move (what a restart on the old dir loads). A failure
    /// leaves the AOF where it was, whole; the next rewrite tries again.
    /// </summary>
    private void Relocate(string temp, string target, List<AofFileInfo> folded)
    {
        string source = Directory;
        var created = new List<string>();
        DiskFile? incr = null;
        try
        {
            FlushPending(forceSync: true);
            if (_writeError is not null)
                throw new DiskFileException(_writeError);
            var remaining = new List<AofFileInfo>();
            foreach (var file in _manifest.Incrementals)
                if (!folded.Contains(file))
                    remaining.Add(file);
            if (remaining.Count == 0)
                throw new DiskFileException("no incremental file since the cut to append to");
            foreach (var file in remaining)
            {
                string copy = Path.Combine(target, file.Name);
                created.Add(copy);
                CopyFile(Path.Combine(source, file.Name), copy);
            }
            long baseSequence = _manifest.CurrentBaseSequence + 1;
            string baseName = AofManifest.BaseFileName(BaseName, baseSequence, _rewriteBaseIsRdb);
            string basePath = Path.Combine(target, baseName);
            created.Add(basePath);
            File.Move(temp, basePath, overwrite: true);
            incr = DiskFile.OpenWrite(Path.Combine(target, remaining[^1].Name), create: false);
            var next = new AofManifest
            {
                Base = new AofFileInfo(baseName, baseSequence, AofFileType.Base),
                CurrentBaseSequence = baseSequence,
                CurrentIncrSequence = _manifest.CurrentIncrSequence,
            };
            next.Incrementals.AddRange(remaining);
            next.Persist(target, BaseName);
            created.Clear(); // from here on the new directory is the AOF

            CloseIncr();
            _incr = incr;
            incr = null;
            _incrLength = _writtenLength = _syncedLength = _fsyncedLength = _incr.Length;
            _manifest = next;
            _directory = target;
            RefreshSizes();
            _rewriteBaseSize = CurrentSize;
            FinishRewriteStats(ok: true);
            Log.LogInformation("Background AOF rewrite finished successfully: the AOF moved to {Target} (base {Base}, {Size}); the files in {Source} stay as they were at the move",
                target, baseName, AofLoader.FormatBytes(_baseSize), source);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            incr?.Dispose();
            TryDelete(temp);
            foreach (string path in created)
                TryDelete(path);
            Log.LogWarning("Background AOF rewrite failed moving the AOF to {Target}: {Error}. It stays in {Source}.", target, ex.Message, source);
            FinishRewriteStats(ok: false);
        }
    }

    /// <summary>
    /// True when both paths name one directory: a probe file created in one shows in the other.
    /// Throws when the probe cannot be made (then nobody can tell, and nothing moves).
    /// </summary>
    private static bool SameDirectory(string a, string b)
    {
        string name = $"temp-dirprobe-{Environment.ProcessId}-{Guid.NewGuid():N}";
        string probe = Path.Combine(a, name);
        try
        {
            using (File.Create(probe))
            {
            }
            return File.Exists(Path.Combine(b, name));
        }
        finally
        {
            TryDelete(probe);
        }
    }

    /// <summary>Copies a closed or quiescent AOF file to <paramref name="destination"/> and syncs the copy.</summary>
    private static void CopyFile(string path, string destination)
    {
        using var from = DiskFile.OpenRead(path);
        using var to = DiskFile.Create(destination);
        var buffer = new byte[1024 * 1024];
        long offset = 0;
        int read;
        while ((read = from.Read(buffer, offset, DiskIoPurpose.RewriteRead)) > 0)
        {
            to.Write(buffer.AsSpan(0, read), offset, DiskIoPurpose.RewriteWrite);
            offset += read;
        }
        to.Sync(DiskIoPurpose.RewriteWrite);
    }

    private void FinishRewriteStats(bool ok)
    {
        _lastRewriteOk = ok;
        if (ok)
        {
            Interlocked.Increment(ref _rewrites);
            Interlocked.Exchange(ref _rewriteFailuresInARow, 0);
        }
        else
        {
            Interlocked.Increment(ref _rewriteFailuresInARow);
        }
        Interlocked.Exchange(ref _lastRewriteSeconds, (long)(DateTime.UtcNow - _rewriteStarted).TotalSeconds);
        _rewriteThread = null;
        _rewriteOutput = null;
        _rewriteFolded = null;
        _rewriteTarget = null;
        _rewriteRunning = false;
    }

    private void CancelRewrite()
    {
        _rewriteCancel = true;
        _rewriteThread?.Join();
        lock (_gate)
        {
            if (_rewriteStep is RewriteStep.Finish or RewriteStep.Failed)
            {
                if (_rewriteOutput is not null)
                    TryDelete(_rewriteOutput);
                _rewriteStep = RewriteStep.None;
            }
            _rewriteRunning = false;
        }
    }

    /// <summary>Redis's rule: rewrite once the files grew auto-aof-rewrite-percentage past their size after the last rewrite.</summary>
    private void MaybeStartAutoRewrite()
    {
        var config = _server.Config;
        int percentage = config.AutoAofRewritePercentage;
        if (_rewriteRunning || _writeError is not null || _incr is null)
            return;
        // dir changed: the rewrite that moves the AOF there starts now rather than at the next
        // growth, so the files follow the setting (a restart on the new dir finds them). Once per
        // change: a failed move is tried again by BGREWRITEAOF or the next automatic rewrite.
        string wanted = config.AppendDirectory;
        if (wanted != Directory && wanted != _moveTriedFor)
        {
            _moveTriedFor = wanted;
            Log.LogInformation("dir changed: rewriting the AOF to move it from {Source} to {Target}", Directory, wanted);
            lock (_gate)
            {
                if (_rewriteStep == RewriteStep.None)
                    BeginRewriteLocked();
            }
            return;
        }
        if (percentage == 0)
            return;
        long current = CurrentSize;
        if (current < config.AutoAofRewriteMinSize)
            return;
        long baseline = Math.Max(1, _rewriteBaseSize);
        long growth = current * 100 / baseline - 100;
        if (growth < percentage)
            return;
        Log.LogInformation("Starting automatic rewriting of AOF on {Growth}% growth", growth);
        lock (_gate)
        {
            if (_rewriteStep == RewriteStep.None)
                BeginRewriteLocked();
        }
    }

    /// <summary>Re-reads the sizes of the base and the closed incremental files (after a file switch).</summary>
    private void RefreshSizes()
    {
        long closed = 0;
        long baseSize = 0;
        foreach (var file in _manifest.LoadOrder())
        {
            var info = new FileInfo(Path.Combine(Directory, file.Name));
            long length = info.Exists ? info.Length : 0;
            if (file.Type == AofFileType.Base)
                baseSize = length;
            else if (file != _manifest.Incrementals[^1])
                closed += length;
        }
        Volatile.Write(ref _baseSize, baseSize);
        Volatile.Write(ref _closedIncrSize, closed);
    }
}
