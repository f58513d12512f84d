using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, over the server's <see cref="Scripting.ScriptEngine"/>.
/// The EVAL family holds every shard (AllShards): a script may touch keys it did not declare, and
/// nothing else runs while it does, as in Redis.
/// </summary>
public static class ScriptingCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "scripting";
        const CommandFlags eval = NoScript | Stale | SkipMonitor | MayReplicate | NoMandatoryKeys | AllShards | RunsScript;
        CommandArgument[] evalArguments = [new("script", "string"), new("numkeys", "integer"), new("key", "key", Optional: true, Multiple: true), new("arg", "string", Optional: true, Multiple: true)];
        CommandArgument[] shaArguments = [new("sha1", "string"), new("numkeys", "integer"), new("key", "key", Optional: true, Multiple: true), new("arg", "string", Optional: true, Multiple: true)];
        const string complexity = "Depends on the script that is executed.";
        table.Add(new CommandSpec("eval", -3, eval, 0, 0, 0, Eval, g, "Executes a server-side Lua script.", "2.6.0", complexity)
        { KeyCountIndex = 2, Arguments = evalArguments });
        table.Add(new CommandSpec("evalsha", -3, eval, 0, 0, 0, EvalSha, g, "Executes a server-side Lua script by SHA1 digest.", "2.6.0", complexity)
        { KeyCountIndex = 2, Arguments = shaArguments });
        // The read-only forms cannot write, so CLIENT PAUSE WRITE lets them through, as Redis does.
        table.Add(new CommandSpec("eval_ro", -3, eval & ~MayReplicate | ReadOnly, 0, 0, 0, EvalReadOnly, g, "Executes a read-only server-side Lua script.", "7.0.0", complexity)
        { KeyCountIndex = 2, Arguments = evalArguments });
        table.Add(new CommandSpec("evalsha_ro", -3, eval & ~MayReplicate | ReadOnly, 0, 0, 0, EvalShaReadOnly, g, "Executes a read-only server-side Lua script by SHA1 digest.", "7.0.0", complexity)
        { KeyCountIndex = 2, Arguments = shaArguments });

        const CommandFlags f = NoScript | Connection;
        table.Add(new CommandSpec("script", -2, f, 0, 0, 0, null, g, "A container for Lua scripts management commands.", "2.6.0", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("load", 3, f | Stale, 0, 0, 0, Load, g, "Loads a server-side Lua script to the script cache.", "2.6.0", "O(N) with N being the length in bytes of the script body.")
                { Arguments = [new("script", "string")] },
                new CommandSpec("exists", -3, f, 0, 0, 0, Exists, g, "Determines whether server-side Lua scripts exist in the script cache.", "2.6.0", "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).")
                { Arguments = [new("sha1", "string", Multiple: true)] },
                new CommandSpec("flush", -2, f, 0, 0, 0, Flush, g, "Removes all server-side Lua scripts from the script cache.", "2.6.0", "O(N) with N being the number of scripts in cache")
                { Arguments = [new("flush-type", "oneof", Optional: true, Children: [new("async", "pure-token", Token: "ASYNC"), new("sync", "pure-token", Token: "SYNC")])] },
                new CommandSpec("kill", 2, f | AllowBusy, 0, 0, 0, Kill, g, "Terminates a server-side Lua script during execution.", "2.6.0"),
                new CommandSpec("debug", 3, f, 0, 0, 0, Debug, g, "Sets the debug mode of server-side Lua scripts.", "3.2.0")
                { Arguments = [new("mode", "oneof", Children: [new("yes", "pure-token", Token: "YES"), new("sync", "pure-token", Token: "SYNC"), new("no", "pure-token", Token: "NO")])] },
                new CommandSpec("help", 2, Connection | Loading | Stale, 0, 0, 0, Help, g, "Returns helpful text about the different subcommands.", "5.0.0")));
    }

    private static void Eval(ref CommandContext c) => c.Server.Scripts.Eval(ref c, bySha: false, readOnlyCommand: false);
    private static void EvalSha(ref CommandContext c) => c.Server.Scripts.Eval(ref c, bySha: true, readOnlyCommand: false);
    private static void EvalReadOnly(ref CommandContext c) => c.Server.Scripts.Eval(ref c, bySha: false, readOnlyCommand: true);
    private static void EvalShaReadOnly(ref CommandContext c) => c.Server.Scripts.Eval(ref c, bySha: true, readOnlyCommand: true);

    private static void Load(ref CommandContext c)
    {
        if (c.Server.Scripts.Load(c.Arg(2), out string? error) is { } sha)
            c.Reply.Bulk(sha);
        else
            c.Error(error!);
    }

    private static void Exists(ref CommandContext c)
    {
        c.Reply.ArrayHeader(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
            c.Reply.Integer(c.Server.Scripts.Exists(c.Arg(i)) ? 1 : 0);
    }

    private static void Flush(ref CommandContext c)
    {
        if (c.ArgCount > 3 || (c.ArgCount == 3 && !c.ArgIs(2, "sync"u8) && !c.ArgIs(2, "async"u8)))
        {
            c.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
            return;
        }
        // ASYNC frees the old VM at once too: it is small next to a keyspace, and Redis's own
        // async flush exists to spare its single thread, which this server does not have.
        c.Server.Scripts.Flush();
        c.Reply.Ok();
    }

    private static void Kill(ref CommandContext c)
    {
        if (c.Server.Scripts.Kill(eval: true) is { } error)
            c.Error(error);
        else
            c.Reply.Ok();
    }

    /// <summary>SCRIPT DEBUG: Redis's Lua debugger (LDB) is not built here; NO, its off state, is accepted.</summary>
    private static void Debug(ref CommandContext c)
    {
        if (c.ArgIs(2, "no"u8))
            c.Reply.Ok();
        else if (c.ArgIs(2, "yes"u8) || c.ArgIs(2, "sync"u8))
            c.Error("ERR SCRIPT DEBUG is not supported by this server: it has no Lua debugger (LDB)");
        else
            c.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
    }

    private static void Help(ref CommandContext c) => HelpReply.Write(c.Reply,
    [
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
    ]);
}
