using Diagnostics.Server.Commands;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.PubSub;

namespace Diagnostics.Server.Network;

/// <summary>
/// MULTI, EXEC, DISCARD and WATCH for one connection. Queued commands are copied into a request
/// batch of their own. EXEC holds every shard its queue and its watched keys need, all at once,
/// so the transaction is atomic across shards; it runs the queue through the normal command
/// path and logs its writes between MULTI and EXEC, which an AOF load applies whole or not at all.
/// </summary>
public sealed partial class ClientConnection
{
    private TransactionState? _transaction;

    /// <summary>True between MULTI and EXEC/DISCARD (CLIENT LIST flag x).</summary>
    public bool InMulti => _transaction is { InMulti: true };

    /// <summary>Commands queued since MULTI, or -1 outside one (CLIENT LIST multi=).</summary>
    public int QueuedCommands => _transaction is { InMulti: true } t ? t.Specs.Count : -1;

    /// <summary>Bytes the queued commands hold (CLIENT LIST multi-mem).</summary>
    public long QueuedBytes => _transaction is { InMulti: true } t ? t.Queue.PendingBytes : 0;

    /// <summary>A command refused while queueing makes EXEC answer EXECABORT, as in Redis.</summary>
    private void FailTransaction()
    {
        if (_transaction is { InMulti: true } transaction)
            transaction.Failed = true;
    }

    /// <summary>True when the open transaction queued a command with any of <paramref name="flags"/> (EXEC's write and denyoom gates).</summary>
    private bool QueuedAny(CommandFlags flags)
    {
        if (_transaction is not { InMulti: true } transaction)
            return false;
        foreach (var spec in transaction.Specs)
            if (spec is not null && (spec.Flags & flags) != 0)
                return true;
        return false;
    }

    /// <summary>
    /// True when the transaction EXEC is about to run queued a command that may run long: EXEC
    /// then leaves the socket engine thread as that command would alone, otherwise a MULTI with
    /// DEBUG SLEEP or FLUSHALL held every other socket of that thread (INFO included) until it ended.
    /// </summary>
    private bool QueuedMayRunLong() => QueuedAny(MayRunLong);

    internal void Multi(ref CommandContext c)
    {
        var transaction = _transaction ??= new TransactionState();
        if (transaction.InMulti)
        {
            c.Error("ERR MULTI calls can not be nested");
            return;
        }
        transaction.InMulti = true;
        c.Reply.Ok();
    }

    internal void Discard(ref CommandContext c)
    {
        if (_transaction is not { InMulti: true } transaction)
        {
            c.Error("ERR DISCARD without MULTI");
            return;
        }
        transaction.EndMulti();
        transaction.Unwatch();
        c.Reply.Ok();
    }

    /// <summary>WATCH key...: remembers the keys (and whether each had already expired) and registers with their databases.</summary>
    internal unsafe void Watch(ref CommandContext c)
    {
        var transaction = _transaction ??= new TransactionState();
        if (transaction.InMulti)
        {
            c.Error("ERR WATCH inside MULTI is not allowed");
            return;
        }
        for (int i = 1; i < c.ArgCount; i++)
        {
            ReadOnlySpan<byte> key = c.Arg(i);
            Database db = c.Database(key, out uint hash);
            Entry* e = db.Keys.Find(key, hash);
            bool expired = e != null && e->ExpireAt != 0 && e->ExpireAt <= c.NowMs;
            db.Watch(key, transaction.Watcher);
            transaction.Watched.Add((DatabaseIndex, key.ToArray(), expired));
        }
        c.Reply.Ok();
    }

    internal void Unwatch(ref CommandContext c)
    {
        _transaction?.Unwatch();
        c.Reply.Ok();
    }

    /// <summary>RESET and disconnect: leave any MULTI and WATCH behind.</summary>
    internal void ResetTransaction()
    {
        if (_transaction is null)
            return;
        _transaction.EndMulti();
        _transaction.Unwatch();
    }

    /// <summary>
    /// Where EXEC runs: every shard a queued command's keys or a watched key live in (all of them
    /// for a queued whole-keyspace command). Immediate when none is needed.
    /// </summary>
    private Route ClassifyExec(TransactionState transaction, out int shardIndex)
    {
        shardIndex = -1;
        if (!transaction.InMulti || transaction.Failed)
            return Route.Immediate;
        var keyspace = _server.Keyspace;
        Array.Clear(_involvedShards);
        foreach (var (_, key, _) in transaction.Watched)
            _involvedShards[keyspace.ShardIndexOf(Keyspace.Hash(key))] = true;
        for (int i = 0; i < transaction.Specs.Count; i++)
        {
            var spec = transaction.Specs[i]!;
            if ((spec.Flags & CommandFlags.AllShards) != 0)
            {
                Array.Fill(_involvedShards, true);
                break;
            }
            if (!spec.HasKeys || (spec.Flags & CommandFlags.Connection) != 0)
                continue;
            ArgList args = transaction.Queue[i];
            var keys = KeyPositions.Of(spec, args);
            if (!keys.Valid)
                continue;
            foreach (int k in keys)
                _involvedShards[keyspace.ShardIndexOf(Keyspace.Hash(args[k]))] = true;
        }
        int involved = 0;
        foreach (bool held in _involvedShards)
            if (held)
                involved++;
        if (involved == 0)
            return Route.Immediate;
        if (involved == 1)
        {
            shardIndex = Array.IndexOf(_involvedShards, true);
            return Route.Shard;
        }
        return Route.Coordinated;
    }

    /// <summary>EXEC: runs the queue and replies with every command's reply; null when a watched key changed.</summary>
    internal void Exec(ref CommandContext c)
    {
        if (_transaction is not { InMulti: true } transaction)
        {
            c.Error("ERR EXEC without MULTI");
            return;
        }
        if (transaction.Failed)
        {
            transaction.EndMulti();
            transaction.Unwatch();
            c.Error("EXECABORT Transaction discarded because of previous errors.");
            return;
        }
        bool aborted = WatchedKeyChanged(transaction, c.NowMs);
        transaction.Unwatch();
        if (aborted)
        {
            transaction.EndMulti();
            c.Reply.NullArray();
            return;
        }

        int count = transaction.Specs.Count;
        transaction.InMulti = false;
        WriteQueuedBeforeExec();
        c.Reply.ArrayHeader(count);
        // The AOF's buffer for this connection's writes (null when the AOF is off).
        var log = ExpiryLog.Current;
        var beforeMulti = log?.Save() ?? default;
        if (log is not null)
        {
            log.BeginCommand(DatabaseIndex, 1);
            log.Argument("MULTI"u8);
            log.EndCommand();
        }
        var afterMulti = log?.Save() ?? default;
        InTransaction = true;
        try
        {
            for (int i = 0; i < count; i++)
            {
                ExecuteCommand(transaction.Queue[i], transaction.Specs[i]);
                ExpiryLog.Current = log;
            }
        }
        finally
        {
            InTransaction = false;
            transaction.EndMulti();
        }
        if (log is not null)
        {
            if (log.Length == afterMulti.Length)
            {
                log.Restore(beforeMulti); // nothing was written: no empty MULTI/EXEC pair
            }
            else
            {
                log.BeginCommand(DatabaseIndex, 1);
                log.Argument("EXEC"u8);
                log.EndCommand();
            }
        }
        c.LogNothing();
    }

    /// <summary>
    /// True when a watched key was changed since WATCH, or has expired since (a key already past
    /// its time when watched does not count), as Redis 7 decides.
    /// </summary>
    private unsafe bool WatchedKeyChanged(TransactionState transaction, long nowMs)
    {
        if (transaction.Watched.Count == 0)
            return false;
        if (transaction.Watcher.IsDirty)
            return true;
        var keyspace = _server.Keyspace;
        foreach (var (database, key, expiredAtWatch) in transaction.Watched)
        {
            if (expiredAtWatch)
                continue;
            uint hash = Keyspace.Hash(key);
            Entry* e = keyspace.ShardOf(hash).Databases[database].Keys.Find(key, hash);
            if (e != null && e->ExpireAt != 0 && e->ExpireAt <= nowMs)
                return true;
        }
        return false;
    }

    /// <summary>Marks the watchers of the keys a successful write may have changed.</summary>
    private void TouchWatchedKeys(CommandSpec spec, ArgList args)
    {
        var keyspace = _server.Keyspace;
        if (spec.WrittenKey > 0)
        {
            if (spec.WrittenKey < args.Count)
                keyspace.ShardOf(Keyspace.Hash(args[spec.WrittenKey])).Databases[DatabaseIndex].Watched?.Touch(args[spec.WrittenKey]);
            return;
        }
        var keys = KeyPositions.Of(spec, args);
        if (!keys.Valid)
            return;
        foreach (int k in keys)
            keyspace.ShardOf(Keyspace.Hash(args[k])).Databases[DatabaseIndex].Watched?.Touch(args[k]);
    }

    /// <summary>Publishes the command's keyspace event for the keys it may have changed.</summary>
    private void NotifyWrittenKeys(CommandSpec spec, ArgList args, int database)
    {
        if (spec.WrittenKey > 0)
        {
            if (spec.WrittenKey < args.Count)
                KeyspaceNotifier.Notify(spec.EventType, spec.Event, args[spec.WrittenKey], database);
            return;
        }
        var keys = KeyPositions.Of(spec, args);
        if (!keys.Valid)
            return;
        foreach (int k in keys)
            KeyspaceNotifier.Notify(spec.EventType, spec.Event, args[k], database);
    }

    /// <summary>One connection's MULTI queue and WATCH round.</summary>
    private sealed class TransactionState : IDisposable
    {
        public bool InMulti;
        /// <summary>A command was refused while queueing: EXEC answers EXECABORT.</summary>
        public bool Failed;
        public readonly RequestBatch Queue = new();
        public readonly List<CommandSpec?> Specs = [];
        public readonly Watcher Watcher = new();
        public readonly List<(int Database, byte[] Key, bool ExpiredAtWatch)> Watched = [];

        public void Enqueue(ArgList args, CommandSpec spec)
        {
            Queue.BeginCommand(args.Count);
            for (int i = 0; i < args.Count; i++)
                Queue.AddArg(args[i]);
            Queue.EndCommand();
            Specs.Add(spec);
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
}
