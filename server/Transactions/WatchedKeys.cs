using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Transactions;

/// <summary>
/// One connection's WATCH state. Each WATCH ... EXEC round has its own generation: a touch
/// marks the round it was registered for, so a touch that arrives after UNWATCH (or after the
/// next WATCH began) cannot fail the wrong transaction. Touched by whichever thread holds the
/// key's shard; read by the connection at EXEC.
/// </summary>
public sealed class Watcher
{
    private long _generation;
    private long _dirtyGeneration = -1;

    public long Generation => Volatile.Read(ref _generation);

    /// <summary>True when a watched key changed since this round's WATCH.</summary>
    public bool IsDirty => Volatile.Read(ref _dirtyGeneration) == Volatile.Read(ref _generation);

    public void Touch(long generation)
    {
        if (generation == Volatile.Read(ref _generation))
            Volatile.Write(ref _dirtyGeneration, generation);
    }

    /// <summary>Ends the round (UNWATCH, EXEC, DISCARD, RESET, disconnect): its registrations go stale.</summary>
    public void NextRound() => Interlocked.Increment(ref _generation);
}

/// <summary>
/// The watchers of keys of one database of one shard (Redis's watched_keys): any change to a key
/// marks the connections watching it. Touched only by whoever holds the shard; registrations of
/// ended rounds are dropped lazily (on touch, and by the shard cron).
/// </summary>
public sealed class WatchedKeys
{
    private readonly WatchRegistrations _registrations;
    private readonly Dictionary<byte[], List<(Watcher Watcher, long Generation)>> _byKey = new(ByteArrayComparer.Instance);
    private readonly Dictionary<byte[], List<(Watcher Watcher, long Generation)>>.AlternateLookup<ReadOnlySpan<byte>> _lookup;

    public WatchedKeys(WatchRegistrations registrations)
    {
        _registrations = registrations;
        _lookup = _byKey.GetAlternateLookup<ReadOnlySpan<byte>>();
    }

    public void Add(ReadOnlySpan<byte> key, Watcher watcher)
    {
        if (!_lookup.TryGetValue(key, out var list))
        {
            list = [];
            _byKey.Add(key.ToArray(), list);
        }
        list.Add((watcher, watcher.Generation));
        _registrations.Add(1);
    }

    public void Touch(ReadOnlySpan<byte> key)
    {
        if (!_lookup.TryGetValue(key, out var list))
            return;
        foreach (var (watcher, generation) in list)
            watcher.Touch(generation);
        // A touched registration has done its work: the round is failed or already over.
        _registrations.Add(-list.Count);
        _lookup.Remove(key);
    }

    /// <summary>Marks every watcher of this database (FLUSHDB, FLUSHALL, SWAPDB, DEBUG RELOAD).</summary>
    public void TouchAll()
    {
        foreach (var list in _byKey.Values)
        {
            foreach (var (watcher, generation) in list)
                watcher.Touch(generation);
            _registrations.Add(-list.Count);
        }
        _byKey.Clear();
    }

    /// <summary>Drops registrations of rounds that ended (shard cron).</summary>
    public void Purge()
    {
        List<byte[]>? empty = null;
        foreach (var (key, list) in _byKey)
        {
            int removed = list.RemoveAll(r => r.Generation != r.Watcher.Generation);
            if (removed > 0)
                _registrations.Add(-removed);
            if (list.Count == 0)
                (empty ??= []).Add(key);
        }
        if (empty is not null)
            foreach (var key in empty)
                _byKey.Remove(key);
    }
}

/// <summary>
/// WATCH registrations anywhere in one keyspace, stale ones included until purged: zero means no
/// write needs to look for watchers, which keeps WATCH free for everyone not using it. One per
/// keyspace, so servers (and a rewrite's private copy) do not share it.
/// </summary>
public sealed class WatchRegistrations
{
    private long _count;

    public bool Any => Volatile.Read(ref _count) != 0;

    public void Add(long delta) => Interlocked.Add(ref _count, delta);
}
