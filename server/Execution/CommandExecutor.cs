using System.Diagnostics;
using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.Transactions;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Execution;

/// <summary>
/// Runs one command for one client, as Redis's processCommand and call() do: looks it up, checks
/// arity and authentication, queues it inside MULTI, applies the MISCONF and OOM gates, calls the
/// handler, then does the bookkeeping of its effects (AOF record, WATCH, keyspace events, blocked
/// clients served, stats, slowlog, latency). Everything that runs a command comes through here:
/// a connection's batches (on whatever thread holds the shards), EXEC's queue, the AOF loader,
/// and later scripts and replication. The caller holds the shards the command needs.
/// </summary>
public sealed class CommandExecutor(DataServer server)
{
    private readonly Eviction _eviction = server.Keyspace.Eviction;
    private readonly Diagnostics.HotKeys.HotKeys _hotKeys = server.HotKeys;

    /// <summary>The command <paramref name="args"/> names (its subcommand, for a container), or null.</summary>
    public CommandSpec? Find(ArgList args)
    {
        CommandSpec? spec = server.Commands.Find(args[0]);
        if (spec is not null && spec.Subcommands is not null && args.Count >= 2)
            spec = spec.FindSubcommand(args[1]) ?? spec;
        return spec;
    }

    /// <summary>
    /// Refuses a command before it runs, as Redis's rejectCommand: inside MULTI the refusal fails
    /// the transaction; a refused EXEC discards it and says why ("EXECABORT ... because of: " and
    /// the error without its generic ERR code, as Redis prints it).
    /// </summary>
    private void Reject(ClientSession client, ThreadCounters counters, CommandSpec spec, string error)
    {
        counters.Rejected[spec.Id]++;
        // Redis's processCommand sets lastcmd before its checks: CLIENT LIST shows a refused command.
        client.LastCommand = spec;
        if (ReferenceEquals(spec, server.Commands.Exec) && client.Transaction is { InMulti: true } transaction)
        {
            transaction.EndMulti();
            transaction.Unwatch();
            client.Reply.Error("EXECABORT Transaction discarded because of: " + (error.StartsWith("ERR ", StringComparison.Ordinal) ? error[4..] : error));
            return;
        }
        client.Reply.Error(error);
        client.Transaction?.Fail();
    }

    /// <summary>
    /// Redis's processCommand: the checks, MULTI queueing, then <see cref="Call"/>.
    /// <paramref name="refusal"/>: the connection's router holds no shard for the command and
    /// refuses it with this error once it passed the checks before it (a busy script's BUSY,
    /// whether or not the script ended since; TOOBUSY when too many commands wait for shards).
    /// </summary>
    public void Execute(ClientSession client, ArgList args, CommandSpec? spec, string? refusal = null)
    {
        var reply = client.Reply;
        // CLIENT REPLY SKIP set SkipNextReply while it ran: this is the command whose reply it drops.
        bool skip = client.SkipNextReply;
        client.SkipNextReply = false;
        reply.Muted = client.ReplyMode == Network.ReplyMode.Off || skip;

        var counters = ThreadCounters.Current;
        if (spec is null)
        {
            counters.UnknownCommands++;
            client.LastCommand = null; // CLIENT LIST cmd=NULL, as Redis's lookup found none
            reply.Error(UnknownCommandMessage(args));
            client.Transaction?.Fail();
            return;
        }
        if (!client.Authenticated && (spec.Flags & CommandFlags.NoAuth) == 0)
        {
            Reject(client, counters, spec, Errors.NoAuth);
            return;
        }
        if (spec.Handler is null)
        {
            // A container command (CLIENT, CONFIG...) whose subcommand was not found.
            Reject(client, counters, spec, args.Count < 2
                ? Errors.WrongArity(spec.FullName)
                : Errors.UnknownSubcommand(Encoding.UTF8.GetString(args[1]), spec.Name));
            // Redis's lookup finds the bare container, and no command for an unknown subcommand.
            if (args.Count >= 2)
                client.LastCommand = null;
            return;
        }
        if (!spec.AcceptsArgCount(args.Count))
        {
            Reject(client, counters, spec, Errors.WrongArity(spec.FullName));
            return;
        }
        // ACLs, after the arity check as in Redis's processCommand; a user with every command,
        // key and channel (the default user, usually) costs one field read.
        if (client.User?.Current is { Unrestricted: false } user && Acl.AclCheck.Check(user, spec, args) is { } denied)
        {
            string context = client is Scripting.ScriptClient ? "lua" : client.Transaction is { InMulti: true } || client.InTransaction ? "multi" : "toplevel";
            server.AclLog.Add(denied.Reason, context, denied.Object, user.Name, client.Describe());
            server.Stats.AclRefused(denied.Reason);
            // Checked again at EXEC, as Redis: the rules may have changed since it was queued.
            Reject(client, counters, spec, client.InTransaction ? denied.ExecMessage : denied.Message);
            return;
        }
        var transaction = client.Transaction;
        bool inMulti = transaction is { InMulti: true };
        // Over maxmemory inside MULTI: queueing takes memory too, so while nothing can be evicted
        // no command is queued; EXEC, DISCARD, QUIT and RESET still pass.
        if (inMulti && _eviction.MaxMemory != 0 && !client.IsMaster && !MaxMemoryGate.PassesInMulti(spec)
            && _eviction.NeedsEviction() && MaxMemoryGate.RefusesWithoutShards(server.Keyspace, denyOom: true))
        {
            Reject(client, counters, spec, Errors.OutOfMemory);
            return;
        }
        // MISCONF (before queueing and the subscribed check): the disk cannot take writes, so none
        // is accepted, nor an EXEC that queued one, and PING fails too so health checks notice;
        // reads go on.
        if ((server.Aof.WriteError is not null || server.Rdb.DeniesWrites)
            && (spec.IsWrite || ReferenceEquals(spec, server.Commands.Ping)
                || (ReferenceEquals(spec, server.Commands.Exec) && transaction is not null && transaction.QueuedAny(CommandFlags.Write))))
        {
            // Redis checks the snapshot first (writeCommandsDeniedByDiskError).
            Reject(client, counters, spec, server.Rdb.DeniesWrites
                ? Persistence.Snapshots.RdbSaves.MisconfError
                : "MISCONF Errors writing to the AOF file: " + server.Aof.WriteError);
            return;
        }
        // A read-only replica takes writes from its master only (one field read on a master).
        var replication = server.Replication;
        bool replicaClient = replication.IsReplica && !client.IsMaster;
        if (replicaClient && server.Config.ReplicaReadOnly
            && (spec.IsWrite || (ReferenceEquals(spec, server.Commands.Exec) && transaction is not null && transaction.QueuedAny(CommandFlags.Write))))
        {
            Reject(client, counters, spec, "READONLY You can't write against a read only replica.");
            return;
        }
        // A monitor is fed the keyspace's commands and may not touch it, as Redis refuses any
        // replica (a monitor is one there) reads and writes.
        if (client.IsMonitor && (spec.Flags & (CommandFlags.Write | CommandFlags.ReadOnly)) != 0)
        {
            Reject(client, counters, spec, "ERR Replica can't interact with the keyspace");
            return;
        }
        // A script past busy-reply-threshold: only allow-busy commands run (SCRIPT KILL, SHUTDOWN
        // NOSAVE...), as in Redis; the script's own commands go on.
        if (refusal is not null || (server.Scripts.IsBusy && (spec.Flags & CommandFlags.AllowBusy) == 0 && !client.RunsScripts))
        {
            Reject(client, counters, spec, refusal ?? server.Scripts.BusyError);
            return;
        }
        if (client.RefusedWhileSubscribed(spec))
        {
            Reject(client, counters, spec, $"ERR Can't execute '{spec.FullName}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context");
            return;
        }
        // The master link is down and stale data may not be served: only the "stale" commands run
        // (INFO, REPLICAOF, CONFIG...), and no EXEC of anything else.
        if (replicaClient && !server.Config.ReplicaServeStaleData && !replication.LinkUp
            && ((spec.Flags & CommandFlags.Stale) == 0
                || (ReferenceEquals(spec, server.Commands.Exec) && transaction is not null && transaction.QueuedAnyWithout(CommandFlags.Stale))))
        {
            Reject(client, counters, spec, "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
            return;
        }
        // Between MULTI and EXEC commands are checked, then queued (copied out of the batch).
        if (inMulti && (spec.Flags & CommandFlags.TransactionControl) == 0)
        {
            if ((spec.Flags & CommandFlags.NoMulti) != 0)
            {
                Reject(client, counters, spec, "ERR Command not allowed inside a transaction");
                return;
            }
            transaction!.Enqueue(args, spec);
            reply.Queued();
            return;
        }

        var aof = server.Aof;
        // Reads log too while the AOF or the replication stream is on: a key they find expired is
        // deleted, and logged as DEL.
        Persistence.AofRecordBuffer? logged = aof.Enabled || server.ReplicationMaster.Propagates ? client.LoggedWrites ??= new Persistence.AofRecordBuffer() : null;
        var effects = client.Effects;
        effects.Open(logged, spec.IsWrite);
        // maxmemory (one field read when unset, three when under): evict in this command's shards,
        // or refuse it. EXEC is refused whole when it queued a denyoom command; the commands it
        // runs are not checked one by one (Redis's call() does not), so it never half-runs.
        // A replica's master is never refused for memory (Redis's replica-ignore-maxmemory).
        if (_eviction.MaxMemory != 0 && !client.InTransaction && !client.IsMaster && _eviction.NeedsEviction()
            && (ReferenceEquals(spec, server.Commands.Exec)
                ? inMulti && MaxMemoryGate.RefusesWithoutShards(server.Keyspace, denyOom: transaction!.QueuedAny(CommandFlags.DenyOom))
                : MaxMemoryGate.Refuses(server.Keyspace, spec, args)))
        {
            Reject(client, counters, spec, Errors.OutOfMemory);
            return;
        }
        Call(client, args, spec, counters, effects, logged);
    }

    /// <summary>Redis's call(): the handler, then the effects and the bookkeeping of one command.</summary>
    private void Call(ClientSession client, ArgList args, CommandSpec spec, ThreadCounters counters, CommandEffects effects, Persistence.AofRecordBuffer? logged)
    {
        client.LastCommand = spec;
        long started = Stopwatch.GetTimestamp();
        int database = client.DatabaseIndex;
        var context = new CommandContext(server, client, server.Keyspace, args, spec, WallClock.UnixMs(started), effects,
            records: spec.IsWrite ? logged : null);
        counters.InFlight.Begin(spec.FullName, client.Id, database, started);
        // What a command allocates on the managed heap is what makes GC pauses: measured (a
        // thread-local read, a few ns) for every command not flagged fast, where allocations
        // happen (CLIENT LIST, INFO, scripts); fast commands allocate nothing by design.
        bool measureAllocations = (spec.Flags & CommandFlags.Fast) == 0;
        long allocatedBefore = measureAllocations ? GC.GetAllocatedBytesForCurrentThread() : 0;
        try
        {
            spec.Handler!(ref context);
        }
        catch (Memory.BlockTooLargeException ex)
        {
            // The request, not the server, is at fault: an error reply, nothing to log.
            context.Error("ERR " + ex.Message);
        }
        catch (Exception ex) when (ex is not OutOfMemoryException)
        {
            client.Log.LogError(ex, "Command {Command} failed for client id={Id}", spec.FullName, client.Id);
            counters.InternalErrors++;
            context.Error($"ERR internal error while executing '{spec.FullName}': {ex.Message}");
        }
        counters.InFlight.End();
        // A script that gave itself back runs again elsewhere: that run is the one counted.
        if (client.RunElsewhere)
            return;
        // The effects, in Redis's order: the command propagated, WATCH, its keyspace events, then
        // the clients it made ready served (their pops propagated after it, into the same buffer).
        if (logged is not null && spec.IsWrite && !context.Failed && context.Logging == AofLogging.Verbatim)
        {
            logged.BeginCommand(database, args.Count);
            for (int i = 0; i < args.Count; i++)
                logged.Argument(args[i]);
            logged.EndCommand();
        }
        if (spec.IsWrite && !context.Failed && context.Logging != AofLogging.Nothing)
        {
            counters.Changes++;
            if (server.Keyspace.Watches.Any)
                TouchWatchedKeys(spec, args, database);
            if (spec.Event is not null && effects.Notifies(spec.EventType))
                NotifyWrittenKeys(effects, spec, args, database);
            // Client-side caching: the clients that may hold these keys are told (one field read when none tracks).
            if (server.Tracking.Any)
                server.Tracking.Written(client.TrackingIdentity, spec, args);
        }
        // A tracking client's read remembers its keys for it.
        if (client.Tracking is { } tracking)
            server.Tracking.AfterCommand(client.TrackingIdentity, tracking, spec, args);
        // Only writes defer events (the "del" after an emptying pop); reads pay nothing here.
        if (spec.IsWrite)
            effects.FlushDeferred();
        // Clients blocked on keys this command created are served now, before anything else
        // runs on the shard (after the whole transaction inside EXEC).
        if (effects.AnyReady && !client.InTransaction)
            effects.ServeReady(context.ExpireClockMs);
        long elapsed = Stopwatch.GetTimestamp() - started;
        if (measureAllocations)
            counters.AllocatedBytes[spec.Id] += GC.GetAllocatedBytesForCurrentThread() - allocatedBefore;
        counters.Calls[spec.Id]++;
        counters.Ticks[spec.Id] += elapsed;
        // Hot keys: one decrement per command; every period-th samples its key (shards still held).
        int hotKeyPeriod = _hotKeys.Period;
        if (hotKeyPeriod != 0 && --counters.HotKeyCountdown <= 0)
        {
            counters.HotKeyCountdown = hotKeyPeriod;
            _hotKeys.Sample(database, args, spec, client.Id);
        }
        counters.Latency.Record(spec.Id, elapsed);
        // The doctor's own commands are never its evidence (they read everything, so they can be slow).
        if ((spec.Flags & CommandFlags.Diagnostic) == 0)
            server.LatencyMonitor.RecordCommand(spec, elapsed);
        if (server.SlowLog.IsSlow(elapsed) && (spec.Flags & (CommandFlags.SkipSlowlog | CommandFlags.Diagnostic)) == 0)
            server.SlowLog.Add(spec, args, server.Config, elapsed * 1_000_000 / Stopwatch.Frequency, client.Id, client.Address, client.Name ?? "");
        if (context.Failed)
            counters.Failed[spec.Id]++;
        client.CommandsProcessed++;
        // MONITOR, after the command as Redis's call() feeds it; not a blocked command's second run.
        bool reprocessing = client.Reprocessing;
        client.Reprocessing = false;
        if (server.Monitors.Any && (spec.Flags & (CommandFlags.Admin | CommandFlags.SkipMonitor)) == 0 && !reprocessing)
            server.Monitors.Feed(client, client.DatabaseIndex, args, spec, server.Config);
    }

    /// <summary>
    /// Hands the writes <paramref name="client"/> logged since the last call to the AOF and to the
    /// replication stream (a master's own writes only: a replica's stream is its master's, kept as
    /// received). Called while the shards they touched are still held, so two clients' writes to
    /// one key reach the file and the replicas in the order they ran.
    /// </summary>
    public void CommitLoggedWrites(ClientSession client)
    {
        if (client.LoggedWrites is { IsEmpty: false } logged)
        {
            if (server.Aof.Enabled)
                client.AofWaitOffset = server.Aof.Append(logged);
            var master = server.ReplicationMaster;
            if (master.Propagates && !client.IsMaster)
                master.Backlog.Append(logged);
            logged.Clear();
        }
        // Clients served by these writes may now reply: their pops are in the AOF's hands.
        client.Effects.ReleaseServed();
    }

    /// <summary>
    /// A command read back from the AOF, against <paramref name="keyspace"/> (the live one, or a
    /// rewrite's copy): no gates, no stats, nothing logged, nothing expires. The caller checked
    /// that it exists and has a valid arity (a file that says otherwise is corrupt).
    /// </summary>
    public void Replay(ClientSession client, Keyspace keyspace, ArgList args, CommandSpec spec, long nowMs)
    {
        var context = new CommandContext(server, client, keyspace, args, spec, nowMs, client.Effects, replaying: true);
        spec.Handler!(ref context);
    }

    /// <summary>Marks the watchers of the keys a successful write may have changed.</summary>
    private void TouchWatchedKeys(CommandSpec spec, ArgList args, int database)
    {
        var keyspace = server.Keyspace;
        int written = spec.WrittenKeyOf(args);
        if (written > 0)
        {
            if (written < args.Count)
                keyspace.ShardOf(Keyspace.Hash(args[written])).Databases[database].Watched?.Touch(args[written]);
            return;
        }
        var keys = KeyPositions.Of(spec, args);
        if (!keys.Valid)
            return;
        foreach (int k in keys)
            keyspace.ShardOf(Keyspace.Hash(args[k])).Databases[database].Watched?.Touch(args[k]);
    }

    /// <summary>Publishes the command's keyspace event for the keys it may have changed.</summary>
    private static void NotifyWrittenKeys(CommandEffects effects, CommandSpec spec, ArgList args, int database)
    {
        int written = spec.WrittenKeyOf(args);
        if (written > 0)
        {
            if (written < args.Count)
                effects.Notify(spec.EventType, spec.Event, args[written], database);
            return;
        }
        var keys = KeyPositions.Of(spec, args);
        if (!keys.Valid)
            return;
        foreach (int k in keys)
            effects.Notify(spec.EventType, spec.Event, args[k], database);
    }

    private static string UnknownCommandMessage(ArgList args)
    {
        var text = new StringBuilder("ERR unknown command '");
        text.Append(Errors.Truncate(Encoding.UTF8.GetString(args[0]))).Append("', with args beginning with: ");
        // Redis quotes arguments while the list is under 128 characters, each cut to what is left of them.
        int listStart = text.Length;
        for (int i = 1; i < args.Count && text.Length - listStart < 128; i++)
        {
            ReadOnlySpan<byte> arg = args[i];
            int room = 128 - (text.Length - listStart);
            text.Append('\'').Append(Encoding.UTF8.GetString(arg.Length > room ? arg[..room] : arg)).Append("' ");
        }
        return text.ToString();
    }
}
