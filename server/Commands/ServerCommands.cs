using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>Server commands: TIME, SAVE, BGSAVE, LASTSAVE, SHUTDOWN, BGREWRITEAOF.</summary>
public static class ServerCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "server";
        table.Add(new CommandSpec("time", 1, Connection | Loading | Stale | Fast, 0, 0, 0, Time, g, "Returns the server time.", "2.6.0"));
        table.Add(new CommandSpec("lastsave", 1, Connection | Loading | Stale | Fast, 0, 0, 0, LastSave, g,
            "Returns the Unix timestamp of the last successful save to disk."));
        // SAVE and BGSAVE take the snapshot's cut themselves (every shard for a moment), holding
        // nothing when they start; Admin sends them off the socket thread.
        table.Add(new CommandSpec("save", 1, Connection | Admin | NoScript | NoAsyncLoading | NoMulti, 0, 0, 0, Save, g,
            "Synchronously saves the database(s) to disk.", "1.0.0", "O(N) where N is the total number of keys in all databases"));
        table.Add(new CommandSpec("bgsave", -1, Connection | Admin | NoScript | NoAsyncLoading, 0, 0, 0, BgSave, g,
            "Asynchronously saves the database(s) to disk.", "1.0.0", "O(1)")
        {
            Arguments = [new("schedule", "pure-token", Optional: true, Token: "SCHEDULE")],
        });
        table.Add(new CommandSpec("bgrewriteaof", 1, Connection | Admin | NoScript | NoAsyncLoading, 0, 0, 0, BgRewriteAof, g,
            "Asynchronously rewrites the append-only file to disk."));
        table.Add(new CommandSpec("shutdown", -1, Connection | Admin | NoScript | Loading | Stale | NoMulti | AllowBusy, 0, 0, 0, Shutdown, g,
            "Synchronously saves the database(s) to disk and shuts down the Redis server.", "1.0.0",
            "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)")
        {
            Arguments = [
                new("save-selector", "oneof", Optional: true, Children: [new("nosave", "pure-token", Token: "NOSAVE"), new("save", "pure-token", Token: "SAVE")]),
                new("now", "pure-token", Optional: true, Token: "NOW"),
                new("force", "pure-token", Optional: true, Token: "FORCE"),
                new("abort", "pure-token", Optional: true, Token: "ABORT")],
        });
    }

    /// <summary>[unix seconds, microseconds] as two bulk strings.</summary>
    private static void Time(ref CommandContext c)
    {
        long micros = (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) / 10;
        c.Reply.ArrayHeader(2);
        c.Reply.BulkInteger(micros / 1_000_000);
        c.Reply.BulkInteger(micros % 1_000_000);
    }

    private static void BgRewriteAof(ref CommandContext c)
    {
        if (c.Server.Aof.StartRewrite() is { } error)
            c.Error(error);
        else
            c.Reply.SimpleString("Background append only file rewriting started"u8);
    }

    private static void LastSave(ref CommandContext c) => c.Reply.Integer(c.Server.Rdb.LastSaveUnixSeconds);

    private static void Save(ref CommandContext c)
    {
        if (c.Server.Rdb.Save() is { } error)
            c.Error(error);
        else
            c.Reply.Ok();
    }

    private static void BgSave(ref CommandContext c)
    {
        bool schedule = false;
        if (c.ArgCount > 2 || (c.ArgCount == 2 && !(schedule = c.ArgIs(1, "schedule"u8))))
        {
            c.SyntaxError();
            return;
        }
        string status = c.Server.Rdb.BackgroundSave(schedule);
        if (status.StartsWith("ERR", StringComparison.Ordinal))
            c.Error(status);
        else
            c.Reply.SimpleString(status);
    }

    /// <summary>
    /// Stops the server: no reply on success, every client is disconnected and the process exits 0.
    /// As Redis's prepareForShutdown: an RDB snapshot is written first when the save schedule is on
    /// or SAVE is given (never with NOSAVE), with writes paused so none is acknowledged after it; a
    /// failed snapshot keeps the server running ("Errors trying to SHUTDOWN") unless FORCE. The AOF
    /// is always written and synced before the process exits. Shutdown never waits for replicas
    /// here, so there is never one in progress to ABORT, and NOW changes nothing.
    /// </summary>
    private static void Shutdown(ref CommandContext c)
    {
        bool save = false, noSave = false, abort = false, other = false, force = false;
        for (int i = 1; i < c.ArgCount; i++)
        {
            if (c.ArgIs(i, "nosave"u8)) noSave = true;
            else if (c.ArgIs(i, "save"u8)) save = true;
            else if (c.ArgIs(i, "now"u8)) other = true;
            else if (c.ArgIs(i, "force"u8)) other = force = true;
            else if (c.ArgIs(i, "abort"u8)) abort = true;
            else
            {
                c.SyntaxError();
                return;
            }
        }
        if ((abort && (save || noSave || other)) || (save && noSave))
        {
            c.SyntaxError();
            return;
        }
        if (abort)
        {
            c.Error("ERR No shutdown in progress.");
            return;
        }

        // A busy script: only SHUTDOWN NOSAVE ends the server, stopping the script first.
        if (c.Server.Scripts.IsBusy)
        {
            if (!noSave)
            {
                c.Error(c.Server.Scripts.BusyError);
                return;
            }
            c.Server.Scripts.AbortForShutdown();
        }

        var server = c.Server;
        if (save || (!noSave && !server.Config.SaveSchedule.IsEmpty))
        {
            // Held writes wait until the process exits, so none is acknowledged and then lost.
            server.Pause.Pause(long.MaxValue, Execution.PauseMode.Write);
            if (server.Rdb.Save() is not null && !force)
            {
                server.Pause.Unpause();
                c.Error("ERR Errors trying to SHUTDOWN. Check logs.");
                return;
            }
        }
        server.ShutdownSaveDone = true;

        // Redis exits without answering; the connections close with the process. Closing them
        // here also spares the host from waiting out its shutdown timeout on open sockets.
        foreach (var client in server.Clients.Snapshot())
            if (client != c.Client)
                client.Kill();
        c.Client.CloseAfterReply = true;
        server.ShutdownRequested.Cancel();
    }
}
