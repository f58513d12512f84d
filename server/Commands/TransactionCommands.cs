using Diagnostics.Server.Engine;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>MULTI, EXEC, DISCARD, WATCH and UNWATCH over the client's <see cref="Transactions.Transaction"/>.</summary>
public static class TransactionCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "transactions";
        const CommandFlags control = NoScript | Loading | Stale | Fast | AllowBusy | TransactionControl;
        table.Add(new CommandSpec("multi", 1, control | Connection, 0, 0, 0, Multi, g, "Starts a transaction.", "1.2.0"));
        table.Add(new CommandSpec("exec", 1, NoScript | Loading | Stale | SkipSlowlog | TransactionControl, 0, 0, 0, Exec, g,
            "Executes all commands in a transaction.", "1.2.0", "Depends on commands in the transaction"));
        table.Add(new CommandSpec("discard", 1, control | Connection, 0, 0, 0, Discard, g, "Discards a transaction.", "2.0.0",
            "O(N), when N is the number of queued commands"));
        table.Add(new CommandSpec("watch", -2, control, 1, -1, 1, Watch, g,
            "Monitors changes to keys to determine the execution of a transaction.", "2.2.0", "O(1) for every key.")
        { Arguments = [new("key", "key", Multiple: true)] });
        table.Add(new CommandSpec("unwatch", 1, NoScript | Loading | Stale | Fast | AllowBusy | Connection, 0, 0, 0, Unwatch, g,
            "Forgets about watched keys of a transaction.", "2.2.0"));
    }

    private static void Multi(ref CommandContext c)
    {
        var transaction = c.Client.OpenTransaction();
        if (transaction.InMulti)
        {
            c.Error("ERR MULTI calls can not be nested");
            return;
        }
        transaction.InMulti = true;
        c.Reply.Ok();
    }

    private static void Discard(ref CommandContext c)
    {
        if (c.Client.Transaction is not { InMulti: true } transaction)
        {
            c.Error("ERR DISCARD without MULTI");
            return;
        }
        transaction.EndMulti();
        transaction.Unwatch();
        c.Reply.Ok();
    }

    /// <summary>WATCH key...: remembers the keys (and whether each had already expired) and registers with their databases.</summary>
    private static unsafe void Watch(ref CommandContext c)
    {
        var transaction = c.Client.OpenTransaction();
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
            bool expired = e != null && db.IsExpired(e, c.NowMs);
            db.Watch(key, transaction.Watcher);
            transaction.Watched.Add((c.Client.DatabaseIndex, key.ToArray(), expired));
        }
        c.Reply.Ok();
    }

    private static void Unwatch(ref CommandContext c)
    {
        c.Client.Transaction?.Unwatch();
        c.Reply.Ok();
    }

    /// <summary>
    /// EXEC: runs the queue through the executor and replies with every command's reply; null when
    /// a watched key changed. The router made this thread the holder of every shard the queue and
    /// the watched keys need, so the whole transaction is atomic. Its writes are logged between
    /// MULTI and EXEC, which an AOF load applies whole or not at all.
    /// </summary>
    private static void Exec(ref CommandContext c)
    {
        var client = c.Client;
        if (client.Transaction is not { InMulti: true } transaction)
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
        bool aborted = transaction.WatchedKeyChanged(c.Keyspace, c.NowMs);
        transaction.Unwatch();
        if (aborted)
        {
            transaction.EndMulti();
            c.Reply.NullArray();
            return;
        }

        int count = transaction.Specs.Count;
        transaction.InMulti = false;
        client.BeforeExecReply();
        c.Reply.ArrayHeader(count);
        // The AOF's buffer for this client's writes (null when the AOF is off), which the executor
        // opened EXEC's scope with and opens each queued command's with again.
        var log = c.Effects.Propagation as Persistence.AofRecordBuffer;
        var beforeMulti = log?.Save() ?? default;
        if (log is not null)
        {
            log.BeginCommand(client.DatabaseIndex, 1);
            log.Argument("MULTI"u8);
            log.EndCommand();
        }
        var afterMulti = log?.Save() ?? default;
        var executor = c.Server.Executor;
        client.InTransaction = true;
        try
        {
            for (int i = 0; i < count; i++)
            {
                executor.Execute(client, transaction.Queue[i], transaction.Specs[i]);
            }
        }
        finally
        {
            client.InTransaction = false;
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
                log.BeginCommand(client.DatabaseIndex, 1);
                log.Argument("EXEC"u8);
                log.EndCommand();
            }
        }
        c.LogNothing();
    }
}
