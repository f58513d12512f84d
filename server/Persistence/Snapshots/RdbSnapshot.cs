using System.Diagnostics;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence.Snapshots;

/// <summary>Where a snapshot's bytes go, in order: a file, or a replica's socket.</summary>
public delegate void RdbSink(ReadOnlySpan<byte> bytes);

/// <summary>
/// One RDB snapshot of the keyspace as it was at its cut (<see cref="ShardCapture"/>): each shard
/// is serialized, by whoever takes it first after the cut, into a part of its own; the snapshot's
/// writer then streams header, parts in shard order and checksum to a sink, taking the shards no
/// one has taken yet itself. A shard's databases appear as SELECTDB runs of their own, so a
/// database may be selected once per shard: Redis's loader and redis-check-rdb accept that.
/// </summary>
public sealed unsafe class RdbSnapshot : ShardCapture, IDisposable
{
    private readonly Keyspace _keyspace;
    private readonly RdbWriteOptions _options;
    private readonly RdbWriter?[] _parts;
    private readonly byte[][] _functions;
    private int _capturedByOthers;
    private long _captureTicks;
    private long _captureTicksByOthers;
    private string? _failure;

    private RdbSnapshot(Keyspace keyspace, RdbWriteOptions options, byte[][] functions, long cutUnixMs)
    {
        _keyspace = keyspace;
        _options = options;
        _functions = functions;
        _parts = new RdbWriter?[keyspace.ShardCount];
        CutUnixMs = cutUnixMs;
    }

    /// <summary>When the cut was taken (Unix ms): the moment the snapshot shows.</summary>
    public long CutUnixMs { get; }
    /// <summary>How long the cut held every shard.</summary>
    public TimeSpan CutHeld { get; private set; }
    /// <summary>Keys serialized so far (INFO current_save_keys_processed).</summary>
    public long KeysWritten => Interlocked.Read(ref _keysWritten);
    private long _keysWritten;
    /// <summary>Keys in the keyspace at the cut (INFO current_save_keys_total).</summary>
    public long KeysAtCut { get; private set; }
    /// <summary>Shards serialized by a command or the cron that took them first: each such holder waited for it.</summary>
    public int CapturedByOthers => Volatile.Read(ref _capturedByOthers);
    /// <summary>Time spent serializing shards, in all and by threads other than the snapshot's own.</summary>
    public TimeSpan CaptureTime => Stopwatch.GetElapsedTime(0, Interlocked.Read(ref _captureTicks));
    public TimeSpan CaptureTimeByOthers => Stopwatch.GetElapsedTime(0, Interlocked.Read(ref _captureTicksByOthers));
    /// <summary>Bytes handed to the sink so far.</summary>
    public long BytesWritten { get; private set; }

    // The thread streaming the snapshot: its own captures are not charged to anyone waiting.
    private int _writerThread;

    /// <summary>
    /// Takes the cut: holds every shard for a moment, arms each with this snapshot, and runs
    /// <paramref name="atCut"/> (while still holding them) for whatever must match the cut exactly
    /// (the replication offset a full sync starts from). The caller must hold no shard.
    /// </summary>
    public static RdbSnapshot Cut(Keyspace keyspace, RdbWriteOptions options, IReadOnlyList<byte[]> functionCodes, Action? atCut = null)
    {
        RdbSnapshot? snapshot = null;
        long started = Stopwatch.GetTimestamp();
        keyspace.RunExclusive(() =>
        {
            snapshot = new RdbSnapshot(keyspace, options, [.. functionCodes], DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
            long keys = 0;
            foreach (var shard in keyspace.Shards)
            {
                shard.ArmCapture(snapshot);
                foreach (var db in shard.Databases)
                    keys += db.Count;
            }
            snapshot.KeysAtCut = keys;
            atCut?.Invoke();
        });
        snapshot!.CutHeld = Stopwatch.GetElapsedTime(started);
        return snapshot;
    }

    /// <summary>
    /// For a caller that already holds every shard (DEBUG RELOAD): the snapshot is the keyspace
    /// now, every shard serialized here before this returns.
    /// </summary>
    public static RdbSnapshot TakeHolding(Keyspace keyspace, RdbWriteOptions options, IReadOnlyList<byte[]> functionCodes)
    {
        var snapshot = new RdbSnapshot(keyspace, options, [.. functionCodes], DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        Volatile.Write(ref snapshot._writerThread, Environment.CurrentManagedThreadId);
        foreach (var shard in keyspace.Shards)
        {
            foreach (var db in shard.Databases)
                snapshot.KeysAtCut += db.Count;
            snapshot.Capture(shard);
        }
        return snapshot;
    }

    public override void Capture(Shard shard)
    {
        if (Volatile.Read(ref _abandoned) != 0)
            return;
        long started = Stopwatch.GetTimestamp();
        var part = new RdbWriter(_options);
        long keys = 0;
        try
        {
            for (int db = 0; db < shard.Databases.Length; db++)
            {
                var database = shard.Databases[db];
                if (database.Count == 0)
                    continue;
                part.WriteSelectDb(db);
                part.WriteResizeDb(database.Count, database.ExpiresCount);
                var visitor = new PartVisitor(part, database);
                database.Keys.ForEach(ref visitor);
                keys += visitor.Keys;
            }
        }
        catch (Exception ex)
        {
            // A value this server cannot serialize fails the snapshot, not the command that
            // happened to take the shard.
            Interlocked.CompareExchange(ref _failure, $"serializing shard {shard.Index}: {ex.Message}", null);
        }
        Volatile.Write(ref _parts[shard.Index], part);
        // Abandoned meanwhile: whoever takes the part out first frees it.
        if (Volatile.Read(ref _abandoned) != 0)
            Interlocked.Exchange(ref _parts[shard.Index], null)?.Dispose();
        Interlocked.Add(ref _keysWritten, keys);
        long ticks = Stopwatch.GetTimestamp() - started;
        Interlocked.Add(ref _captureTicks, ticks);
        if (Environment.CurrentManagedThreadId != Volatile.Read(ref _writerThread))
        {
            Interlocked.Increment(ref _capturedByOthers);
            Interlocked.Add(ref _captureTicksByOthers, ticks);
        }
    }

    private struct PartVisitor(RdbWriter part, Database database) : IEntryVisitor
    {
        public long Keys;

        // Every key, expired or not, as Redis 7.0's SAVE writes them: a loading master drops them.
        public void Visit(Entry* entry)
        {
            part.WriteKey(entry, database.ExpireAtOf(entry), nowMs: 0);
            Keys++;
        }
    }

    /// <summary>
    /// Streams the whole RDB to <paramref name="sink"/>: header, Redis 7.0's AUX fields (and
    /// <paramref name="extraAux"/>: a sync's replication ID and offset), function libraries, every
    /// shard's part (serializing those still armed on this thread), then EOF and the CRC-64 of
    /// everything before it. Each part is freed once it is written. Returns null, or why the
    /// snapshot failed.
    /// </summary>
    public string? WriteTo(RdbSink sink, bool aofBase, IReadOnlyList<(string Name, string Value)>? extraAux = null)
    {
        Volatile.Write(ref _writerThread, Environment.CurrentManagedThreadId);
        ulong crc = 0;
        void Emit(ReadOnlySpan<byte> bytes)
        {
            if (_options.Checksum)
                crc = Crc64.Update(crc, bytes);
            sink(bytes);
            BytesWritten += bytes.Length;
        }

        using (var head = new RdbWriter(_options))
        {
            head.WriteHeader();
            head.WriteStandardAux(CutUnixMs / 1000, Memory.TrackedAllocator.TotalBytes, aofBase);
            if (extraAux is not null)
                foreach (var (name, value) in extraAux)
                    head.WriteAux(System.Text.Encoding.UTF8.GetBytes(name), System.Text.Encoding.UTF8.GetBytes(value));
            foreach (var code in _functions)
                head.WriteFunction(code);
            Emit(head.Written);
        }
        for (int i = 0; i < _parts.Length; i++)
        {
            if (Volatile.Read(ref _failure) is { } failed)
                return failed;
            if (Volatile.Read(ref _parts[i]) is null)
                _keyspace.Shards[i].CaptureNow();
            using var part = Interlocked.Exchange(ref _parts[i], null)!;
            Emit(part.Written);
        }
        if (Volatile.Read(ref _failure) is { } failure)
            return failure;
        using var tail = new RdbWriter(_options);
        tail.WriteEof(crc);
        sink(tail.Written);
        BytesWritten += tail.Length;
        return null;
    }

    private int _abandoned;

    /// <summary>
    /// Frees the parts captured and not written. Shards still armed stay armed until their next
    /// holder, whose capture then does nothing: disarming them would mean taking every shard.
    /// </summary>
    public void Dispose()
    {
        Volatile.Write(ref _abandoned, 1);
        for (int i = 0; i < _parts.Length; i++)
            Interlocked.Exchange(ref _parts[i], null)?.Dispose();
    }
}
