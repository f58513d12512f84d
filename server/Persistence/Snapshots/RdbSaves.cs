using System.Diagnostics;
using System.Globalization;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.Threads;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Diagnostics.Server.Persistence.Snapshots;

/// <summary>
/// RDB snapshots on disk (Redis's rdb.c save side and serverCron's schedule): SAVE, BGSAVE,
/// the save schedule, LASTSAVE, loading dbfilename at start, and INFO persistence's rdb_* fields.
/// Without fork, a snapshot is an <see cref="RdbSnapshot"/>: a cut that holds every shard for a
/// moment, each shard serialized before it next changes, the file streamed by the "rdb save"
/// thread (its memory and disk writes charged to it, or to the command that took a shard first).
/// One save runs at a time. The file is written as temp-PID.rdb (created new, never through a
/// link someone left there), synced, renamed over dbfilename, and the directory synced.
/// </summary>
public sealed class RdbSaves : IDisposable
{
    private readonly DataServer _server;
    private readonly Lock _gate = new();
    private readonly Timer _schedule;
    private Thread? _thread;
    private RdbSnapshot? _current;
    private long _currentStartedMs;
    private bool _currentIsBackground;

    private long _lastSaveUnixSeconds = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
    private long _lastTryUnixSeconds;
    private long _changesAtLastSave;
    private volatile bool _lastBackgroundOk = true;
    private long _lastBackgroundSeconds = -1;
    private long _saves;
    private string? _lastError;
    private SaveRecord? _lastRecord;

    public RdbSaves(DataServer server)
    {
        _server = server;
        _schedule = new Timer(_ => CheckSchedule(), null, Timeout.Infinite, Timeout.Infinite);
    }

    public ILogger Log { get; set; } = NullLogger.Instance;

    /// <summary>What the last finished save did, for INFO and the debug package.</summary>
    public sealed record SaveRecord(bool Background, bool Ok, string? Error, long Keys, long Bytes, double CutHeldMs,
        double CaptureMs, int ShardsCapturedByCommands, double CaptureByCommandsMs, double TotalMs, long FinishedUnixMs);

    public long LastSaveUnixSeconds => Interlocked.Read(ref _lastSaveUnixSeconds);
    public bool BackgroundSaveInProgress { get { lock (_gate) return _current is not null && _currentIsBackground; } }
    public long ChangesSinceLastSave => ThreadCounters.ChangesTotal() - Interlocked.Read(ref _changesAtLastSave);
    public bool LastBackgroundOk => _lastBackgroundOk;
    public string? LastError => Volatile.Read(ref _lastError);
    public SaveRecord? LastRecord => Volatile.Read(ref _lastRecord);
    public long Saves => Interlocked.Read(ref _saves);
    public long RdbLoadedKeys { get; private set; }
    public long RdbExpiredAtLoad { get; private set; }

    public string FilePath => Path.Combine(_server.Config.Dir, _server.Config.DbFilename);

    /// <summary>Checks the schedule once a second, as serverCron does.</summary>
    public void StartSchedule() => _schedule.Change(1000, 1000);

    /// <summary>
    /// MISCONF: the schedule is on, the last background save failed, and stop-writes-on-bgsave-error
    /// says writes must stop until a save succeeds (Redis's writeCommandsDeniedByDiskError).
    /// </summary>
    public bool DeniesWrites => !_lastBackgroundOk && _server.Config.StopWritesOnBgsaveError && !_server.Config.SaveSchedule.IsEmpty;

    public const string MisconfError = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";

    /// <summary>SAVE: the snapshot is written before this returns; null, or the error reply.</summary>
    public string? Save()
    {
        RdbSnapshot snapshot;
        lock (_gate)
        {
            if (_current is not null)
                return "ERR Background save already in progress";
            snapshot = Cut(background: false);
        }
        return Finish(snapshot, background: false) ? null : "ERR";
    }

    /// <summary>
    /// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE], with every shard held (the caller's): writes the
    /// snapshot unless told not to, empties the keyspace unless told not to, and loads the file
    /// back (keys it holds replace those in memory). Null, or the error reply.
    /// </summary>
    public string? ReloadHoldingAllShards(bool save, bool flush)
    {
        if (save)
        {
            RdbSnapshot snapshot;
            lock (_gate)
            {
                if (_current is not null)
                    return "ERR Background save already in progress";
                _lastTryUnixSeconds = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
                snapshot = RdbSnapshot.TakeHolding(_server.Keyspace, WriteOptions(_server), FunctionCodes(_server));
                _cutChanges = ThreadCounters.ChangesTotal();
                _current = snapshot;
                _currentStartedMs = Environment.TickCount64;
                _currentIsBackground = false;
            }
            if (!Finish(snapshot, background: false))
                return "ERR";
        }
        if (flush)
            _server.Keyspace.ClearAll();
        try
        {
            (RdbLoadedKeys, RdbExpiredAtLoad) = RdbFileLoader.Load(_server, FilePath);
        }
        catch (Exception ex) when (ex is RdbFormatException or AofFormatException or DiskFileException)
        {
            Log.LogWarning("DEBUG RELOAD could not load {File}: {Error}", FilePath, ex.Message);
            return "ERR Error trying to load the RDB dump";
        }
        return null;
    }

    /// <summary>
    /// BGSAVE [SCHEDULE]: takes the cut here (the snapshot holds every write acknowledged before)
    /// and writes it on the "rdb save" thread. Returns the status reply, or an error starting "ERR".
    /// </summary>
    public string BackgroundSave(bool schedule)
    {
        lock (_gate)
        {
            if (_current is not null)
                return "ERR Background save already in progress";
            if (_server.Aof.RewriteInProgress)
            {
                // Redis cannot run two children; this server could, but the disk is better spent on one.
                if (!schedule)
                    return "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.";
                _scheduledAfterRewrite = true;
                return "Background saving scheduled";
            }
            StartBackgroundLocked();
        }
        return "Background saving started";
    }

    private bool _scheduledAfterRewrite;

    private void StartBackgroundLocked()
    {
        var snapshot = Cut(background: true);
        _thread = new Thread(() =>
        {
            Memory.TrackedAllocator.NameCurrentThread("rdb save");
            Finish(snapshot, background: true);
        })
        { IsBackground = true, Name = "rdb save" };
        _thread.Start();
    }

    private RdbSnapshot Cut(bool background)
    {
        _lastTryUnixSeconds = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        long changes = 0;
        var snapshot = RdbSnapshot.Cut(_server.Keyspace, WriteOptions(_server), FunctionCodes(_server),
            () => changes = ThreadCounters.ChangesTotal());
        _cutChanges = changes;
        _current = snapshot;
        _currentStartedMs = Environment.TickCount64;
        _currentIsBackground = background;
        return snapshot;
    }

    private long _cutChanges;

    /// <summary>The writer options the configuration asks for.</summary>
    public static RdbWriteOptions WriteOptions(DataServer server) => RdbWriteOptions.From(server.Config);

    public static IReadOnlyList<byte[]> FunctionCodes(DataServer server)
    {
        var libraries = server.Scripts.Functions.Libraries;
        var codes = new byte[libraries.Count][];
        for (int i = 0; i < codes.Length; i++)
            codes[i] = libraries[i].Code;
        return codes;
    }

    private bool Finish(RdbSnapshot snapshot, bool background)
    {
        long started = Stopwatch.GetTimestamp();
        string? error;
        try
        {
            error = WriteFile(snapshot);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or DiskFileException)
        {
            error = ex.Message;
        }
        finally
        {
            snapshot.Dispose();
        }
        double totalMs = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
        var record = new SaveRecord(background, error is null, error, snapshot.KeysWritten, snapshot.BytesWritten, snapshot.CutHeld.TotalMilliseconds,
            snapshot.CaptureTime.TotalMilliseconds, snapshot.CapturedByOthers, snapshot.CaptureTimeByOthers.TotalMilliseconds, totalMs,
            DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        Volatile.Write(ref _lastRecord, record);
        bool runScheduled;
        lock (_gate)
        {
            if (error is null)
            {
                Interlocked.Exchange(ref _lastSaveUnixSeconds, DateTimeOffset.UtcNow.ToUnixTimeSeconds());
                Interlocked.Exchange(ref _changesAtLastSave, _cutChanges);
                Interlocked.Increment(ref _saves);
                Volatile.Write(ref _lastError, null);
                Log.LogInformation("{Kind} saved on disk: {Keys} keys, {Size}, cut held the shards {Cut} ms, {Captured} of {Shards} shards serialized by commands ({CaptureByCommands} ms)",
                    background ? "Background RDB" : "DB", snapshot.KeysWritten, AofLoader.FormatBytes(snapshot.BytesWritten),
                    record.CutHeldMs.ToString("0.###", CultureInfo.InvariantCulture), record.ShardsCapturedByCommands, _server.Keyspace.ShardCount,
                    record.CaptureByCommandsMs.ToString("0.###", CultureInfo.InvariantCulture));
            }
            else
            {
                Volatile.Write(ref _lastError, error);
                Log.LogWarning("{Kind} saving failed: {Error}", background ? "Background" : "DB", error);
            }
            if (background)
            {
                _lastBackgroundOk = error is null;
                _lastBackgroundSeconds = (long)(Environment.TickCount64 - _currentStartedMs) / 1000;
            }
            else if (error is not null)
            {
                // A failed SAVE counts as a failed snapshot too: Redis sets lastbgsave_status on either.
                _lastBackgroundOk = false;
            }
            _current = null;
            runScheduled = _scheduledAfterRewrite && !_server.Aof.RewriteInProgress;
            if (runScheduled)
                _scheduledAfterRewrite = false;
        }
        if (runScheduled)
            BackgroundSave(schedule: true);
        return error is null;
    }

    /// <summary>Streams the snapshot into temp-PID.rdb beside dbfilename, syncs it and renames it into place.</summary>
    private string? WriteFile(RdbSnapshot snapshot)
    {
        string directory = _server.Config.Dir;
        string target = Path.Combine(directory, _server.Config.DbFilename);
        string temp = Path.Combine(directory, $"temp-{Environment.ProcessId}.rdb");
        // Whatever is there (a leftover, or a link someone placed) goes: the file is created new.
        File.Delete(temp);
        try
        {
            string? error;
            using (var file = DiskFile.CreateNew(temp))
            {
                long offset = 0;
                error = snapshot.WriteTo(bytes =>
                {
                    file.Write(bytes, offset, DiskIoPurpose.SnapshotWrite);
                    offset += bytes.Length;
                }, aofBase: false);
                if (error is null)
                    file.Sync(DiskIoPurpose.SnapshotWrite);
            }
            if (error is null)
            {
                File.Move(temp, target, overwrite: true);
                DiskFile.SyncDirectory(directory);
            }
            return error;
        }
        finally
        {
            // A failed save leaves nothing behind, as Redis unlinks its temp file.
            File.Delete(temp);
        }
    }

    private void CheckSchedule()
    {
        try
        {
            var schedule = _server.Config.SaveSchedule;
            if (schedule.IsEmpty)
                return;
            long now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
            long changes = ChangesSinceLastSave;
            lock (_gate)
            {
                if (_current is not null || _server.Aof.RewriteInProgress)
                    return;
                if (!schedule.IsDue(changes, now - LastSaveUnixSeconds, now - _lastTryUnixSeconds, !_lastBackgroundOk))
                    return;
                Log.LogInformation("{Point}. Saving...", schedule.DescribeDue(changes, now - LastSaveUnixSeconds));
                StartBackgroundLocked();
            }
        }
        catch (Exception ex)
        {
            Log.LogError(ex, "The save schedule's check failed");
        }
    }

    /// <summary>INFO persistence's rdb_* fields for a save in progress: (keys processed, keys total, seconds running).</summary>
    public (long Processed, long Total, long Seconds)? Progress
    {
        get
        {
            lock (_gate)
                return _current is { } current ? (current.KeysWritten, current.KeysAtCut, (Environment.TickCount64 - _currentStartedMs) / 1000) : null;
        }
    }

    public long LastBackgroundSeconds => Interlocked.Read(ref _lastBackgroundSeconds);

    /// <summary>
    /// At start, with the AOF off: loads dbfilename when it exists. Keys already past their time
    /// are dropped, as a master loading its dump does. Throws <see cref="RdbFormatException"/> for
    /// a file that cannot be loaded: the server must then not start.
    /// </summary>
    public void LoadAtStart()
    {
        string path = FilePath;
        if (!File.Exists(path))
            return;
        var clock = Stopwatch.StartNew();
        long loaded = 0, expired = 0;
        _server.Keyspace.RunExclusive(() => (loaded, expired) = RdbFileLoader.Load(_server, path));
        RdbLoadedKeys = loaded;
        RdbExpiredAtLoad = expired;
        Log.LogInformation("DB loaded from disk: {Seconds} seconds ({Keys} keys, {Expired} expired keys dropped)",
            clock.Elapsed.TotalSeconds.ToString("0.000", CultureInfo.InvariantCulture), loaded, expired);
    }

    public void Dispose()
    {
        _schedule.Dispose();
        _thread?.Join(TimeSpan.FromSeconds(30));
    }
}
