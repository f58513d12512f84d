using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// COMMAND and its subcommands: the command table as Redis 7 describes it. redis-cli builds its
/// interactive help and hints from COMMAND DOCS and asserts on the reply's shape, so the layout
/// here follows Redis's exactly (maps, sets of status strings, "container|sub" names).
/// </summary>
public static class CommandCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "server";
        const CommandFlags f = Connection | Loading | Stale;
        const string perCommand = "O(N) where N is the number of commands to look up";
        const string allCommands = "O(N) where N is the total number of Redis commands";
        table.Add(new CommandSpec("command", -1, f, 0, 0, 0, All, g, "Returns detailed information about all commands.", "2.8.13", allCommands)
            .WithSubcommands(
                new CommandSpec("count", 2, f, 0, 0, 0, Count, g, "Returns a count of commands.", "2.8.13"),
                new CommandSpec("docs", -2, f, 0, 0, 0, Docs, g, "Returns documentary information about one, multiple or all commands.", "7.0.0", perCommand)
                { Arguments = [new("command-name", "string", Optional: true, Multiple: true)] },
                new CommandSpec("getkeys", -3, f, 0, 0, 0, GetKeys, g, "Extracts the key names from an arbitrary command.", "2.8.13",
                    "O(N) where N is the number of arguments to the command")
                { Arguments = [new("command", "string"), new("arg", "string", Optional: true, Multiple: true)] },
                new CommandSpec("help", 2, f, 0, 0, 0, Help, g, "Returns helpful text about the different subcommands.", "5.0.0"),
                new CommandSpec("info", -2, f, 0, 0, 0, Info, g, "Returns information about one, multiple or all commands.", "2.8.13", perCommand)
                { Arguments = [new("command-name", "string", Optional: true, Multiple: true)] },
                new CommandSpec("list", -2, f, 0, 0, 0, List, g, "Returns a list of command names.", "7.0.0", allCommands)
                {
                    Arguments = [new("filterby", "oneof", Optional: true, Token: "FILTERBY", Children: [
                        new("module-name", "string", Token: "MODULE"),
                        new("category", "string", Token: "ACLCAT"),
                        new("pattern", "pattern", Token: "PATTERN")])],
                }));
    }

    /// <summary>COMMAND with no subcommand: every command's info. A container with a handler also gets unknown subcommands.</summary>
    private static void All(ref CommandContext c)
    {
        if (c.ArgCount > 1)
        {
            c.Error(Errors.UnknownSubcommand(c.ArgString(1), "command"));
            return;
        }
        var commands = c.Server.Commands.Commands;
        c.Reply.ArrayHeader(commands.Count);
        foreach (var spec in commands)
            WriteInfo(c.Reply, spec);
    }

    private static void Count(ref CommandContext c) => c.Reply.Integer(c.Server.Commands.Commands.Count);

    private static void Info(ref CommandContext c)
    {
        if (c.ArgCount == 2)
        {
            All(ref c);
            return;
        }
        c.Reply.ArrayHeader(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
        {
            var spec = FindByFullName(c.Server.Commands, c.ArgString(i));
            if (spec is null)
                c.Reply.Null();
            else
                WriteInfo(c.Reply, spec);
        }
    }

    private static void Docs(ref CommandContext c)
    {
        var table = c.Server.Commands;
        var found = new List<CommandSpec>();
        if (c.ArgCount == 2)
        {
            found.AddRange(table.Commands);
        }
        else
        {
            for (int i = 2; i < c.ArgCount; i++)
            {
                var spec = FindByFullName(table, c.ArgString(i));
                if (spec is not null && !found.Contains(spec))
                    found.Add(spec);
            }
        }
        c.Reply.MapHeader(found.Count);
        foreach (var spec in found)
        {
            c.Reply.Bulk(spec.FullName);
            WriteDocs(c.Reply, spec);
        }
    }

    private static void List(ref CommandContext c)
    {
        Func<CommandSpec, bool>? filter = null;
        if (c.ArgCount == 5 && c.ArgIs(2, "filterby"u8))
        {
            string value = c.ArgString(4);
            if (c.ArgIs(3, "module"u8))
            {
                filter = _ => false; // no modules: nothing belongs to one
            }
            else if (c.ArgIs(3, "aclcat"u8))
            {
                bool known = CommandMetadata.TryParseCategory(value, out var category);
                filter = spec => known && (CommandMetadata.Categories(spec) & category) != 0;
            }
            else if (c.ArgIs(3, "pattern"u8))
            {
                filter = spec => Engine.GlobPattern.IsMatchIgnoringCase(value, spec.FullName);
            }
        }
        if (c.ArgCount != 2 && filter is null)
        {
            c.SyntaxError();
            return;
        }
        var names = new List<string>();
        foreach (var spec in c.Server.Commands.Commands)
            Collect(spec, filter, names);
        c.Reply.ArrayHeader(names.Count);
        foreach (var name in names)
            c.Reply.Bulk(name);
    }

    private static void Collect(CommandSpec spec, Func<CommandSpec, bool>? filter, List<string> names)
    {
        if (filter is null || filter(spec))
            names.Add(spec.FullName);
        if (spec.Subcommands is not null)
            foreach (var sub in spec.Subcommands.Values)
                Collect(sub, filter, names);
    }

    /// <summary>COMMAND GETKEYS cmd args...: the keys the server would route that command by.</summary>
    private static void GetKeys(ref CommandContext c)
    {
        var spec = c.Server.Commands.Find(c.Arg(2));
        int argc = c.ArgCount - 2;
        if (spec?.Subcommands is not null && argc >= 2)
            spec = spec.FindSubcommand(c.Arg(3));
        if (spec is null)
        {
            c.Error("ERR Invalid command specified");
            return;
        }
        if (!spec.HasKeys)
        {
            c.Error("ERR The command has no key arguments");
            return;
        }
        if (!spec.AcceptsArgCount(argc))
        {
            c.Error("ERR Invalid number of arguments specified for command");
            return;
        }
        // The command's own arguments, so keys named by keyword (STORE, STREAMS) are found too.
        var keys = KeyPositions.Of(spec, c.Args.From(2));
        int count = 0;
        if (keys.Valid)
            foreach (int k in keys)
            {
                if (k >= argc)
                {
                    count = -1;
                    break;
                }
                count++;
            }
        if (count <= 0)
        {
            c.Error("ERR Invalid arguments specified for command");
            return;
        }
        c.Reply.ArrayHeader(count);
        foreach (int k in keys)
            c.Reply.Bulk(c.Arg(k + 2));
    }

    private static void Help(ref CommandContext c)
    {
        string[] lines =
        [
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "(no subcommand)", "    Return details about all Redis commands.",
            "COUNT", "    Return the total number of commands in this Redis server.",
            "LIST", "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all", "    commands are returned.",
            "DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all", "    commands are returned.",
            "GETKEYS <full-command>", "    Return the keys from a full Redis command.",
            "HELP", "    Prints this help.",
        ];
        HelpReply.Write(c.Reply, lines);
    }

    /// <summary>"get", "client|list" or "client" (case-insensitive), as COMMAND INFO and DOCS accept them.</summary>
    public static CommandSpec? FindByFullName(CommandTable table, string name)
    {
        int bar = name.IndexOf('|');
        if (bar < 0)
            return table.Find(name);
        var container = table.Find(name[..bar]);
        if (container?.Subcommands is null)
            return null;
        return container.Subcommands.GetValueOrDefault(name[(bar + 1)..]);
    }

    /// <summary>
    /// One COMMAND INFO entry: [name, arity, flags, first key, last key, step, ACL categories,
    /// tips, key specs, subcommands], subcommands in the same layout.
    /// </summary>
    public static void WriteInfo(RespWriter reply, CommandSpec spec)
    {
        reply.ArrayHeader(10);
        reply.Bulk(spec.FullName);
        reply.Integer(spec.Arity);
        WriteStatusSet(reply, CommandMetadata.Flags(spec));
        reply.Integer(spec.FirstKey);
        reply.Integer(spec.LastKey);
        reply.Integer(spec.KeyStep);
        WriteStatusSet(reply, CommandMetadata.CategoryList(CommandMetadata.Categories(spec)));
        reply.SetHeader(0); // tips: none of our commands needs routing hints for cluster clients
        WriteKeySpecs(reply, spec);
        // Redis sends "no subcommands" as an empty set and the subcommands as an array.
        if (spec.Subcommands is not { Count: > 0 })
        {
            reply.SetHeader(0);
            return;
        }
        reply.ArrayHeader(spec.Subcommands.Count);
        foreach (var sub in spec.Subcommands.Values)
            WriteInfo(reply, sub);
    }

    /// <summary>
    /// The keys as Redis key specs: the fixed range (begin_search by index, find_keys by range),
    /// then for commands that count their keys one spec found by keynum.
    /// </summary>
    private static void WriteKeySpecs(RespWriter reply, CommandSpec spec)
    {
        reply.SetHeader((spec.FirstKey > 0 ? 1 : 0) + (spec.KeyCountIndex > 0 ? 1 : 0));
        if (spec.FirstKey > 0)
        {
            BeginKeySpec(reply, spec, spec.FirstKey);
            reply.Bulk("range"u8);
            reply.Bulk("spec"u8);
            reply.MapHeader(3);
            reply.Bulk("lastkey"u8);
            // Relative to the first key; negative values count from the end, as in LastKey.
            reply.Integer(spec.LastKey >= 0 ? spec.LastKey - spec.FirstKey : spec.LastKey);
            reply.Bulk("keystep"u8);
            reply.Integer(spec.KeyStep);
            reply.Bulk("limit"u8);
            reply.Integer(0);
        }
        if (spec.KeyCountIndex > 0)
        {
            BeginKeySpec(reply, spec, spec.KeyCountIndex);
            reply.Bulk("keynum"u8);
            reply.Bulk("spec"u8);
            reply.MapHeader(3);
            reply.Bulk("keynumidx"u8);
            reply.Integer(0);
            reply.Bulk("firstkey"u8);
            reply.Integer(1);
            reply.Bulk("keystep"u8);
            reply.Integer(1);
        }
    }

    /// <summary>A key spec up to its find_keys type: flags, begin_search at <paramref name="index"/>.</summary>
    private static void BeginKeySpec(RespWriter reply, CommandSpec spec, int index)
    {
        reply.MapHeader(3);
        reply.Bulk("flags"u8);
        WriteStatusSet(reply, CommandMetadata.KeySpecFlags(spec));
        reply.Bulk("begin_search"u8);
        reply.MapHeader(2);
        reply.Bulk("type"u8);
        reply.Bulk("index"u8);
        reply.Bulk("spec"u8);
        reply.MapHeader(1);
        reply.Bulk("index"u8);
        reply.Integer(index);
        reply.Bulk("find_keys"u8);
        reply.MapHeader(2);
        reply.Bulk("type"u8);
    }

    /// <summary>One COMMAND DOCS value: summary, since, group, complexity, [arguments], [subcommands].</summary>
    public static void WriteDocs(RespWriter reply, CommandSpec spec)
    {
        bool hasArguments = spec.Arguments.Count > 0;
        bool hasSubcommands = spec.Subcommands is { Count: > 0 };
        // Redis leaves complexity out for the few commands that have none (MONITOR).
        bool hasComplexity = spec.Complexity.Length > 0;
        reply.MapHeader(3 + (hasComplexity ? 1 : 0) + (hasArguments ? 1 : 0) + (hasSubcommands ? 1 : 0));
        reply.Bulk("summary"u8);
        reply.Bulk(spec.Summary);
        reply.Bulk("since"u8);
        reply.Bulk(spec.Since);
        reply.Bulk("group"u8);
        reply.Bulk(spec.Group);
        if (hasComplexity)
        {
            reply.Bulk("complexity"u8);
            reply.Bulk(spec.Complexity);
        }
        if (hasArguments)
        {
            reply.Bulk("arguments"u8);
            WriteArguments(reply, spec.Arguments, spec.HasKeys);
        }
        if (hasSubcommands)
        {
            reply.Bulk("subcommands"u8);
            reply.MapHeader(spec.Subcommands!.Count);
            foreach (var sub in spec.Subcommands.Values)
            {
                reply.Bulk(sub.FullName); // redis-cli splits this at '|' and fails without one
                WriteDocs(reply, sub);
            }
        }
    }

    private static void WriteArguments(RespWriter reply, IReadOnlyList<CommandArgument> arguments, bool hasKeySpec)
    {
        reply.ArrayHeader(arguments.Count);
        foreach (var argument in arguments)
        {
            bool keySpec = hasKeySpec && argument.Type == "key";
            bool hasFlags = argument.Optional || argument.Multiple;
            bool hasChildren = argument.Children is { Count: > 0 };
            reply.MapHeader(2 + (keySpec ? 1 : 0) + (argument.Token is null ? 0 : 1) + (hasFlags ? 1 : 0) + (hasChildren ? 1 : 0));
            reply.Bulk("name"u8);
            reply.Bulk(argument.Name);
            reply.Bulk("type"u8);
            reply.Bulk(argument.Type);
            if (keySpec)
            {
                reply.Bulk("key_spec_index"u8);
                reply.Integer(0);
            }
            if (argument.Token is not null)
            {
                reply.Bulk("token"u8);
                reply.Bulk(argument.Token);
            }
            if (hasFlags)
            {
                reply.Bulk("flags"u8);
                reply.SetHeader((argument.Optional ? 1 : 0) + (argument.Multiple ? 1 : 0));
                if (argument.Optional)
                    reply.SimpleString("optional"u8);
                if (argument.Multiple)
                    reply.SimpleString("multiple"u8);
            }
            if (hasChildren)
            {
                reply.Bulk("arguments"u8);
                WriteArguments(reply, argument.Children!, hasKeySpec);
            }
        }
    }

    private static void WriteStatusSet(RespWriter reply, IReadOnlyList<string> items)
    {
        reply.SetHeader(items.Count);
        foreach (var item in items)
            reply.SimpleString(item);
    }
}
