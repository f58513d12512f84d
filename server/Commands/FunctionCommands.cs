using Diagnostics.Server.Scripting.Functions;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// FCALL, FCALL_RO and FUNCTION, over the engine's <see cref="FunctionStore"/>. FCALL holds every
/// shard, as EVAL does. FUNCTION LOAD, DELETE, FLUSH and RESTORE are writes: the AOF logs them,
/// so a restart loads the same libraries.
/// </summary>
public static class FunctionCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "scripting";
        const CommandFlags call = NoScript | Stale | SkipMonitor | MayReplicate | NoMandatoryKeys | AllShards | RunsScript;
        CommandArgument[] callArguments = [new("function", "string"), new("numkeys", "integer"), new("key", "key", Optional: true, Multiple: true), new("arg", "string", Optional: true, Multiple: true)];
        table.Add(new CommandSpec("fcall", -3, call, 0, 0, 0, Call, g, "Invokes a function.", "7.0.0", "Depends on the function that is executed.")
        { KeyCountIndex = 2, Arguments = callArguments });
        table.Add(new CommandSpec("fcall_ro", -3, call & ~MayReplicate | ReadOnly, 0, 0, 0, CallReadOnly, g, "Invokes a read-only function.", "7.0.0", "Depends on the function that is executed.")
        { KeyCountIndex = 2, Arguments = callArguments });

        const CommandFlags f = NoScript | Connection;
        table.Add(new CommandSpec("function", -2, f, 0, 0, 0, null, g, "A container for function commands.", "7.0.0", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("load", -3, f | Write | DenyOom, 0, 0, 0, Load, g, "Creates a library.", "7.0.0", "O(1) (considering compilation time is redundant)")
                { Arguments = [new("replace", "pure-token", Optional: true, Token: "REPLACE"), new("function-code", "string")] },
                new CommandSpec("delete", 3, f | Write, 0, 0, 0, Delete, g, "Deletes a library and its functions.", "7.0.0")
                { Arguments = [new("library-name", "string")] },
                new CommandSpec("flush", -2, f | Write, 0, 0, 0, Flush, g, "Deletes all libraries and functions.", "7.0.0", "O(N) where N is the number of functions deleted")
                { Arguments = [new("flush-type", "oneof", Optional: true, Children: [new("async", "pure-token", Token: "ASYNC"), new("sync", "pure-token", Token: "SYNC")])] },
                new CommandSpec("list", -2, f, 0, 0, 0, List, g, "Returns information about all libraries.", "7.0.0", "O(N) where N is the number of functions")
                { Arguments = [new("library-name-pattern", "string", Optional: true, Token: "LIBRARYNAME"), new("withcode", "pure-token", Optional: true, Token: "WITHCODE")] },
                new CommandSpec("stats", 2, f | AllowBusy, 0, 0, 0, Stats, g, "Returns information about a function during execution.", "7.0.0"),
                new CommandSpec("kill", 2, f | AllowBusy, 0, 0, 0, Kill, g, "Terminates a function during execution.", "7.0.0"),
                new CommandSpec("dump", 2, f, 0, 0, 0, Dump, g, "Dumps all libraries into a serialized binary payload.", "7.0.0", "O(N) where N is the number of functions"),
                new CommandSpec("restore", -3, f | Write | DenyOom, 0, 0, 0, Restore, g, "Restores all libraries from a payload.", "7.0.0", "O(N) where N is the number of functions on the payload")
                {
                    Arguments = [new("serialized-value", "string"), new("policy", "oneof", Optional: true,
                        Children: [new("flush", "pure-token", Token: "FLUSH"), new("append", "pure-token", Token: "APPEND"), new("replace", "pure-token", Token: "REPLACE")])],
                },
                new CommandSpec("help", 2, Connection | Loading | Stale, 0, 0, 0, Help, g, "Returns helpful text about the different subcommands.", "7.0.0")));
    }

    private static void Call(ref CommandContext c) => c.Server.Scripts.FunctionCall(ref c, readOnlyCommand: false);
    private static void CallReadOnly(ref CommandContext c) => c.Server.Scripts.FunctionCall(ref c, readOnlyCommand: true);

    private static void Load(ref CommandContext c)
    {
        bool replace = false;
        for (int i = 2; i < c.ArgCount - 1; i++)
        {
            if (!c.ArgIs(i, "replace"u8))
            {
                c.Error("ERR Unknown option given: " + c.ArgString(i));
                return;
            }
            replace = true;
        }
        if (c.Server.Scripts.LoadLibrary(c.Arg(c.ArgCount - 1), replace, out string? error) is { } name)
            c.Reply.Bulk(name);
        else
            c.Error(error!);
    }

    private static void Delete(ref CommandContext c)
    {
        if (c.Server.Scripts.DeleteLibrary(c.ArgString(2)))
            c.Reply.Ok();
        else
            c.Error("ERR Library not found");
    }

    private static void Flush(ref CommandContext c)
    {
        if (c.ArgCount > 3 || (c.ArgCount == 3 && !c.ArgIs(2, "sync"u8) && !c.ArgIs(2, "async"u8)))
        {
            c.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
            return;
        }
        c.Server.Scripts.FlushLibraries();
        c.Reply.Ok();
    }

    /// <summary>FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]: each library, its engine, its functions, its code if asked.</summary>
    private static void List(ref CommandContext c)
    {
        byte[]? pattern = null;
        bool withCode = false;
        for (int i = 2; i < c.ArgCount; i++)
        {
            if (c.ArgIs(i, "withcode"u8) && !withCode)
            {
                withCode = true;
            }
            else if (c.ArgIs(i, "libraryname"u8) && pattern is null)
            {
                if (i + 1 >= c.ArgCount)
                {
                    c.Error("ERR library name argument was not given");
                    return;
                }
                pattern = c.Arg(++i).ToArray();
            }
            else
            {
                c.Error("ERR Unknown argument " + c.ArgString(i));
                return;
            }
        }
        var matching = new List<FunctionLibrary>();
        foreach (var library in c.Server.Scripts.Functions.Libraries)
            if (pattern is null || Engine.GlobPattern.IsMatch(pattern, System.Text.Encoding.UTF8.GetBytes(library.Name)))
                matching.Add(library);
        var reply = c.Reply;
        reply.ArrayHeader(matching.Count);
        foreach (var library in matching)
        {
            reply.MapHeader(withCode ? 4 : 3);
            reply.Bulk("library_name");
            reply.Bulk(library.Name);
            reply.Bulk("engine");
            reply.Bulk("LUA");
            reply.Bulk("functions");
            reply.ArrayHeader(library.Functions.Count);
            foreach (var function in library.Functions)
            {
                reply.MapHeader(3);
                reply.Bulk("name");
                reply.Bulk(function.Name);
                reply.Bulk("description");
                if (function.Description is null)
                    reply.Null();
                else
                    reply.Bulk(function.Description);
                reply.Bulk("flags");
                reply.SetHeader(function.FlagNames.Length);
                foreach (string flag in function.FlagNames)
                    reply.SimpleString(flag);
            }
            if (withCode)
            {
                reply.Bulk("library_code");
                reply.Bulk(library.Code);
            }
        }
    }

    /// <summary>FUNCTION STATS: the script running past busy-reply-threshold (name, command, duration) and the engine's counts.</summary>
    private static void Stats(ref CommandContext c)
    {
        var scripts = c.Server.Scripts;
        var reply = c.Reply;
        reply.MapHeader(2);
        reply.Bulk("running_script");
        if (scripts.BusyRun is { } run)
        {
            reply.MapHeader(3);
            reply.Bulk("name");
            reply.Bulk(run.Name);
            reply.Bulk("command");
            var command = run.BusyCommand ?? [];
            reply.ArrayHeader(command.Length);
            foreach (var arg in command)
                reply.Bulk(arg);
            reply.Bulk("duration_ms");
            reply.Integer((long)run.ElapsedMs);
        }
        else
        {
            reply.Null();
        }
        reply.Bulk("engines");
        reply.MapHeader(1);
        reply.Bulk("LUA");
        reply.MapHeader(2);
        reply.Bulk("libraries_count");
        reply.Integer(scripts.Functions.Libraries.Count);
        reply.Bulk("functions_count");
        reply.Integer(scripts.Functions.FunctionCount);
    }

    private static void Kill(ref CommandContext c)
    {
        if (c.Server.Scripts.Kill(eval: false) is { } error)
            c.Error(error);
        else
            c.Reply.Ok();
    }

    private static void Dump(ref CommandContext c) => c.Reply.Bulk(FunctionDump.Write(c.Server.Scripts.Functions.Libraries));

    private static void Restore(ref CommandContext c)
    {
        string policy = "APPEND";
        if (c.ArgCount > 4)
        {
            c.SyntaxError();
            return;
        }
        if (c.ArgCount == 4)
        {
            if (c.ArgIs(3, "flush"u8)) policy = "FLUSH";
            else if (c.ArgIs(3, "append"u8)) policy = "APPEND";
            else if (c.ArgIs(3, "replace"u8)) policy = "REPLACE";
            else
            {
                c.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
                return;
            }
        }
        if (c.Server.Scripts.RestoreLibraries(c.Arg(2), policy) is { } error)
            c.Error(error);
        else
            c.Reply.Ok();
    }

    private static void Help(ref CommandContext c) => HelpReply.Write(c.Reply,
    [
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
        "HELP",
        "    Prints this help.",
    ]);
}
