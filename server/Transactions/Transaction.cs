using Diagnostics.Server.Commands;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Transactions;

/// <summary>
/// One client's MULTI queue and WATCH round (Redis's multiState plus watched_keys). Queued
/// commands are copied into a request batch of their own; EXEC runs them through the executor
/// while holding every shard they and the watched keys need (see Network/ShardRouter).
/// </summary>
public sealed class Transaction : IDisposable
{
    public bool InMulti;
    /// <summary>A command was refused while queueing: EXEC answers EXECABORT.</summary>
    public bool Failed;
    public readonly RequestBatch Queue = new();
    public readonly List<CommandSpec?> Specs = [];
    public readonly Watcher Watcher = new();
    public readonly List<(int Database, byte[] Key, bool ExpiredAtWatch)> Watched = [];

    /// <summary>Commands queued since MULTI, or -1 outside one (CLIENT LIST multi=).</summary>
    public int QueuedCommands => InMulti ? Specs.Count : -1;

    /// <summary>Bytes the queued commands hold (CLIENT LIST multi-mem).</summary>
    public long QueuedBytes => InMulti ? Queue.PendingBytes : 0;

    public void Enqueue(ArgList args, CommandSpec spec)
    {
        Queue.BeginCommand(args.Count);
        for (int i = 0; i < args.Count; i++)
            Queue.AddArg(args[i]);
        Queue.EndCommand();
        Specs.Add(spec);
    }

    /// <summary>True when the open transaction queued a command with any of <paramref name="flags"/> (EXEC's write, denyoom and may-run-long checks).</summary>
    public bool QueuedAny(CommandFlags flags)
    {
        if (!InMulti)
            return false;
        foreach (var spec in Specs)
            if (spec is not null && (spec.Flags & flags) != 0)
                return true;
        return false;
    }

    /// <summary>True when the open transaction queued a command lacking <paramref name="flag"/> (EXEC's stale check, Redis's cmd_inv_flags).</summary>
    public bool QueuedAnyWithout(CommandFlags flag)
    {
        if (!InMulti)
            return false;
        foreach (var spec in Specs)
            if (spec is not null && (spec.Flags & flag) == 0)
                return true;
        return false;
    }

    /// <summary>A command refused while queueing makes EXEC answer EXECABORT, as in Redis.</summary>
    public void Fail()
    {
        if (InMulti)
            Failed = true;
    }

    /// <summary>
    /// True when a watched key was changed since WATCH, or has expired since (a key already past
    /// its time when watched does not count), as Redis 7 decides.
    /// </summary>
    public unsafe bool WatchedKeyChanged(Keyspace keyspace, long nowMs)
    {
        if (Watched.Count == 0)
            return false;
        if (Watcher.IsDirty)
            return true;
        foreach (var (database, key, expiredAtWatch) in Watched)
        {
            if (expiredAtWatch)
                continue;
            uint hash = Keyspace.Hash(key);
            Database db = keyspace.ShardOf(hash).Databases[database];
            Entry* e = db.Keys.Find(key, hash);
            if (e != null && db.IsExpired(e, nowMs))
                return true;
        }
        return false;
    }

    public void EndMulti()
    {
        InMulti = false;
        Failed = false;
        Queue.Clear();
        Specs.Clear();
    }

    public void Unwatch()
    {
        if (Watched.Count == 0)
            return;
        Watcher.NextRound();
        Watched.Clear();
    }

    public void Dispose()
    {
        Unwatch();
        Queue.Dispose();
    }
}
