using System.Globalization;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Engine;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Persistence;

// Starting, loading, turning on and off at run time, reloading and stopping.
public sealed partial class AppendOnlyFile
{
    private int _syncRequested;

    /// <summary>Keys and commands the last load applied, and how long it took (INFO).</summary>
    public AofLoader.Summary? LastLoad { get; private set; }

    /// <summary>True while the server loads the AOF at start (INFO loading:1).</summary>
    public bool Loading { get; private set; }

    /// <summary>
    /// At start: when appendonly is yes, loads the files into the keyspace, then opens the last
    /// incremental file for appending. Throws <see cref="AofFormatException"/> for files that cannot
    /// be loaded; the server must then not start.
    /// </summary>
    public void Start()
    {
        _server.Config.AppendOnlyChanging = ChangeEnabled;
        // Written but unsynced bytes become due at once when the policy turns to always.
        _server.Config.AppendFsyncChanged += () => Interlocked.Exchange(ref _syncRequested, 1);
        _server.Config.AppendFsyncChanged += Wake;
        if (!_server.Config.AppendOnly)
            return;
        _directory = _server.Config.AppendDirectory;
        System.IO.Directory.CreateDirectory(Directory);
        var manifest = AofManifest.Load(Directory, BaseName) ?? CreateOrUpgrade();
        CompleteUpgrade(manifest);
        Loading = true;
        try
        {
            _server.Keyspace.RunExclusive(() => LastLoad = AofLoader.Load(_server, _server.Keyspace, Directory, manifest,
                DiskIoPurpose.LoadRead, Log, _server.Config.AofLoadTruncated));
        }
        finally
        {
            Loading = false;
        }
        var summary = LastLoad!.Value;
        Log.LogInformation("DB loaded from append only file: {Seconds} seconds ({Commands} commands, {Keys} keys, {Size})",
            summary.Elapsed.TotalSeconds.ToString("0.000", CultureInfo.InvariantCulture), summary.Commands, summary.KeysLoaded, AofLoader.FormatBytes(summary.Bytes));
        RemoveLeftovers(manifest);
        OpenForAppend(manifest);
        _enabled = true;
        StartWriter();
    }

    /// <summary>
    /// What a crash mid-rewrite can leave behind and no manifest uses: a half-written temp base, a
    /// manifest written but not yet renamed into place, and replaced files still listed as
    /// history. All are deleted (the manifest in use never pointed at the temp files, and history
    /// files were already replaced).
    /// </summary>
    private void RemoveLeftovers(AofManifest manifest)
    {
        foreach (var temp in System.IO.Directory.GetFiles(Directory, "temp-rewriteaof-bg-*.aof"))
        {
            Log.LogInformation("Removing {File}, left by an interrupted rewrite", Path.GetFileName(temp));
            TryDelete(temp);
        }
        string tempManifest = Path.Combine(Directory, AofManifest.TempManifestName(BaseName));
        if (File.Exists(tempManifest))
        {
            Log.LogInformation("Removing {File}, a manifest update interrupted before it was renamed into place", Path.GetFileName(tempManifest));
            TryDelete(tempManifest);
        }
        if (manifest.History.Count == 0)
            return;
        foreach (var old in manifest.History)
            TryDelete(Path.Combine(Directory, old.Name));
        manifest.History.Clear();
        manifest.Persist(Directory, BaseName);
    }

    /// <summary>
    /// No manifest: either a Redis 6 style single file in dir (moved into the append directory as
    /// the base, the upgrade Redis 7 performs) or nothing at all (an empty base is created).
    /// The manifest is persisted before the legacy file moves, so a crash in between is completed
    /// by <see cref="CompleteUpgrade"/> on the next start instead of losing the file.
    /// </summary>
    private AofManifest CreateOrUpgrade()
    {
        var manifest = new AofManifest();
        string legacy = Path.Combine(_server.Config.Dir, BaseName);
        if (File.Exists(legacy))
        {
            manifest.Base = new AofFileInfo(BaseName, 1, AofFileType.Base);
            manifest.CurrentBaseSequence = 1;
            manifest.Persist(Directory, BaseName);
            Log.LogInformation("Upgrading the single append only file {File} to the multi part layout in {Directory}", BaseName, _server.Config.AppendDirName);
            return manifest;
        }
        string baseName = AofManifest.BaseFileName(BaseName, 1);
        using (var empty = DiskFile.Create(Path.Combine(Directory, baseName)))
            empty.Sync(DiskIoPurpose.RewriteWrite);
        manifest.Base = new AofFileInfo(baseName, 1, AofFileType.Base);
        manifest.CurrentBaseSequence = 1;
        Log.LogInformation("Creating AOF base file {File} on server start", baseName);
        return manifest;
    }

    private void CompleteUpgrade(AofManifest manifest)
    {
        if (manifest.Base is not { } baseFile)
            return;
        string inDirectory = Path.Combine(Directory, baseFile.Name);
        string legacy = Path.Combine(_server.Config.Dir, baseFile.Name);
        if (!File.Exists(inDirectory) && baseFile.Name == BaseName && File.Exists(legacy))
        {
            File.Move(legacy, inDirectory);
            DiskFile.SyncDirectory(Directory);
            DiskFile.SyncDirectory(_server.Config.Dir);
        }
    }

    /// <summary>Opens the last incremental file for appending, creating one (and persisting the manifest) if there is none.</summary>
    private void OpenForAppend(AofManifest manifest)
    {
        if (manifest.Incrementals.Count == 0)
        {
            long sequence = manifest.CurrentIncrSequence + 1;
            string name = AofManifest.IncrFileName(BaseName, sequence);
            var created = DiskFile.Create(Path.Combine(Directory, name));
            manifest.Incrementals.Add(new AofFileInfo(name, sequence, AofFileType.Incremental));
            manifest.CurrentIncrSequence = sequence;
            try
            {
                manifest.Persist(Directory, BaseName);
            }
            catch
            {
                created.Dispose();
                throw;
            }
            _incr = created;
            Log.LogInformation("Creating AOF incr file {File} on server start", name);
        }
        else
        {
            _incr = DiskFile.OpenWrite(Path.Combine(Directory, manifest.Incrementals[^1].Name), create: false);
        }
        _incrLength = _writtenLength = _syncedLength = _fsyncedLength = _incr.Length;
        _manifest = manifest;
        lock (_gate)
            _fileDatabase = -1; // appends continue after whatever database the file ended in: SELECT again
        RefreshSizes();
        _rewriteBaseSize = CurrentSize;
    }

    /// <summary>CONFIG SET appendonly: returns null when done, or the reason it could not be.</summary>
    private string? ChangeEnabled(bool on)
    {
        if (on)
            return TurnOn();
        TurnOff();
        return null;
    }

    /// <summary>
    /// Turns the AOF on at run time: with every shard held, the keyspace is written to memory as
    /// base-file commands and logging starts at that same instant; the writer then writes that
    /// snapshot as a new base and starts a new incremental file. The pause is the time to copy the
    /// dataset in memory; Redis forks instead, which this process cannot do.
    /// </summary>
    private string? TurnOn()
    {
        if (_enabled)
            return null;
        _directory = _server.Config.AppendDirectory;
        try
        {
            System.IO.Directory.CreateDirectory(Directory);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return $"Can't create the append only directory: {ex.Message}";
        }
        var snapshot = new AofRecordBuffer();
        long keys = 0;
        _server.Keyspace.RunExclusive(() =>
        {
            keys = KeyspaceDumper.Dump(_server.Keyspace, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), snapshot);
            lock (_gate)
            {
                _fileDatabase = -1;
                _active.Clear();
            }
            _enabled = true;
        });
        Log.LogInformation("Background append only file rewriting started: {Keys} keys ({Size}) snapshotted to start the AOF", keys, AofLoader.FormatBytes(snapshot.Length));
        _initialBase = snapshot;
        _rewriteStarted = DateTime.UtcNow;
        _rewriteRunning = true;
        StartWriter();
        return null;
    }

    /// <summary>Writes the snapshot taken by <see cref="TurnOn"/> as the new base, then opens a new incremental file.</summary>
    private bool WriteInitialBase()
    {
        var snapshot = _initialBase!;
        if (_writeError is not null && Environment.TickCount64 < _nextRetryTicks)
            return false;
        string temp = TempRewriteFile(Directory);
        try
        {
            var manifest = AofManifest.Load(Directory, BaseName) ?? new AofManifest();
            using (var file = DiskFile.Create(temp))
            {
                file.Write(snapshot.Span, 0, DiskIoPurpose.RewriteWrite);
                file.Sync(DiskIoPurpose.RewriteWrite);
            }
            long incrSequence = manifest.CurrentIncrSequence + 1;
            string incrName = AofManifest.IncrFileName(BaseName, incrSequence);
            var incr = DiskFile.Create(Path.Combine(Directory, incrName));
            var next = InstallBase(manifest, temp, [new AofFileInfo(incrName, incrSequence, AofFileType.Incremental)]);
            _incr = incr;
            _incrLength = _writtenLength = _syncedLength = _fsyncedLength = 0;
            _manifest = next;
            snapshot.Dispose();
            _initialBase = null;
            RefreshSizes();
            _rewriteBaseSize = CurrentSize;
            FinishRewriteStats(ok: true);
            if (_writeError is not null)
            {
                Log.LogWarning("AOF write error looks solved. The server can write again.");
                _writeError = null;
                _lastWriteStatusOk = true;
            }
            return true;
        }
        catch (DiskFileException ex)
        {
            TryDelete(temp);
            if (_writeError != ex.Message)
                Log.LogWarning("Error writing the AOF base file: {Error}. Write commands are refused until it works.", ex.Message);
            SetWriteError(ex.Message);
            _nextRetryTicks = Environment.TickCount64 + RetryIntervalMs;
            return false;
        }
    }

    /// <summary>Turns the AOF off: nothing more is logged; what was logged is written and synced, and the file closed.</summary>
    private void TurnOff()
    {
        if (!_enabled)
            return;
        // With every shard held no batch is between logging a write and appending it.
        _server.Keyspace.RunExclusive(() => _enabled = false);
        Stop(TimeSpan.FromSeconds(30));
        _initialBase?.Dispose();
        _initialBase = null;
        Log.LogInformation("AOF turned off: the files stay in {Directory} and are loaded again only if appendonly is yes at start", _server.Config.AppendDirName);
    }

    /// <summary>
    /// Writes and syncs everything appended so far, whatever the policy (SHUTDOWN, SIGTERM, DEBUG
    /// RELOAD). Returns false if the disk refused within <paramref name="timeout"/>.
    /// </summary>
    public bool FlushAndSync(TimeSpan timeout)
    {
        if (_writer is null)
            return true;
        long target = AppendedOffset;
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            var advanced = DurabilityAdvanced;
            if (DurableOffset >= target)
                return true;
            Interlocked.Exchange(ref _syncRequested, 1);
            Wake();
            var left = deadline - DateTime.UtcNow;
            if (left <= TimeSpan.Zero || !advanced.Wait(left))
                return DurableOffset >= target;
        }
    }

    /// <summary>
    /// Stops the writer after it has written and synced everything appended (it keeps retrying a
    /// failing disk until <paramref name="timeout"/>), and abandons a rewrite in progress.
    /// </summary>
    public void Stop(TimeSpan timeout)
    {
        CancelRewrite();
        var writer = _writer;
        if (writer is null)
            return;
        lock (_gate)
        {
            _stopDeadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
            _stopRequested = true;
            Monitor.PulseAll(_gate);
        }
        writer.Join();
        _writer = null;
        // Release anyone still waiting: what could be made durable has been.
        PublishDurable(AppendedOffset);
    }

    /// <summary>
    /// DEBUG LOADAOF: with every shard held (the caller's), makes the AOF durable, empties the
    /// keyspace and loads it back from the files. With the AOF off, the keyspace goes through a
    /// temporary file in the AOF's command form instead, so the round trip still exercises it.
    /// </summary>
    public string? Reload()
    {
        var keyspace = _server.Keyspace;
        if (_enabled)
        {
            if (!FlushAndSync(TimeSpan.FromSeconds(30)))
                return $"ERR Error trying to flush the AOF: {_writeError}";
            // Holding the file keeps a finishing rewrite from switching or deleting files mid-load.
            lock (_fileGate)
            {
                // Checked before anything is emptied: a reload that cannot load never leaves an empty dataset.
                if (AofLoader.MissingFile(Directory, _manifest) is { } missing)
                    return $"ERR Error trying to load the AOF: {missing} is missing from {Directory}";
                keyspace.ClearAll();
                LastLoad = AofLoader.Load(_server, keyspace, Directory, _manifest, DiskIoPurpose.LoadRead, Log, allowTruncatedTail: false);
            }
            return null;
        }
        string directory = _server.Config.Dir;
        string name = $"temp-reload-{Environment.ProcessId}.aof";
        string path = Path.Combine(directory, name);
        try
        {
            using (var buffer = new AofRecordBuffer())
            using (var file = DiskFile.Create(path))
            {
                long offset = 0;
                KeyspaceDumper.Dump(keyspace, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), buffer, drained =>
                {
                    file.Write(drained.Span, offset, DiskIoPurpose.RewriteWrite);
                    offset += drained.Length;
                    drained.Clear();
                });
                file.Write(buffer.Span, offset, DiskIoPurpose.RewriteWrite);
                file.Sync(DiskIoPurpose.RewriteWrite);
            }
            keyspace.ClearAll();
            var manifest = new AofManifest { Base = new AofFileInfo(name, 1, AofFileType.Base) };
            LastLoad = AofLoader.Load(_server, keyspace, directory, manifest, DiskIoPurpose.LoadRead, Log, allowTruncatedTail: false);
            return null;
        }
        catch (DiskFileException ex)
        {
            return $"ERR Error trying to save the DB: {ex.Message}";
        }
        finally
        {
            TryDelete(path);
        }
    }

    private static string TempRewriteFile(string directory) => Path.Combine(directory, $"temp-rewriteaof-bg-{Environment.ProcessId}.aof");

    private static void TryDelete(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }
}
