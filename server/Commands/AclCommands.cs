using System.Globalization;
using System.Security.Cryptography;
using Diagnostics.Server.Acl;
using Microsoft.Extensions.Logging;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>ACL SETUSER / GETUSER / DELUSER / USERS / LIST / WHOAMI / CAT / GENPASS / LOG / DRYRUN / SAVE / LOAD / HELP, as Redis 7.0 answers them.</summary>
public static class AclCommands
{
    private const string NoAclFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";

    public static void Register(CommandTable table)
    {
        const string g = "server";
        const CommandFlags admin = Admin | NoScript | Loading | Stale;
        const CommandFlags open = NoScript | Loading | Stale;
        table.Add(new CommandSpec("acl", -2, Connection, 0, 0, 0, null, g, "A container for Access List Control commands.", "6.0.0", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("setuser", -3, admin, 0, 0, 0, SetUser, g, "Creates and modifies an ACL user and its rules.", "6.0.0", "O(N). Where N is the number of rules provided."),
                new CommandSpec("getuser", 3, admin, 0, 0, 0, GetUser, g, "Lists the ACL rules of a user.", "6.0.0", "O(N). Where N is the number of password, command and pattern rules that the user has."),
                new CommandSpec("deluser", -3, admin, 0, 0, 0, DelUser, g, "Deletes ACL users, and terminates their connections.", "6.0.0", "O(1) amortized time considering the typical user."),
                new CommandSpec("users", 2, admin, 0, 0, 0, Users, g, "Lists all ACL users.", "6.0.0", "O(N). Where N is the number of configured users."),
                new CommandSpec("list", 2, admin, 0, 0, 0, List, g, "Dumps the effective rules in ACL file format.", "6.0.0", "O(N). Where N is the number of configured users."),
                new CommandSpec("whoami", 2, open, 0, 0, 0, WhoAmI, g, "Returns the authenticated username of the current connection.", "6.0.0"),
                new CommandSpec("cat", -2, open, 0, 0, 0, Cat, g, "Lists the ACL categories, or the commands inside a category.", "6.0.0", "O(1) since the categories and commands are a fixed set."),
                new CommandSpec("genpass", -2, open, 0, 0, 0, GenPass, g, "Generates a pseudorandom, secure password that can be used to identify ACL users.", "6.0.0"),
                new CommandSpec("log", -2, admin, 0, 0, 0, Log, g, "Lists recent security events generated due to ACL rules.", "6.0.0", "O(N) with N being the number of entries shown."),
                new CommandSpec("dryrun", -4, admin, 0, 0, 0, DryRun, g, "Simulates the execution of a command by a user, without executing the command.", "7.0.0"),
                new CommandSpec("save", 2, admin, 0, 0, 0, Save, g, "Saves the effective ACL rules in the configured ACL file.", "6.0.0", "O(N). Where N is the number of configured users."),
                new CommandSpec("load", 2, admin, 0, 0, 0, Load, g, "Reloads the rules from the configured ACL file.", "6.0.0", "O(N). Where N is the number of configured users."),
                new CommandSpec("help", 2, Loading | Stale, 0, 0, 0, Help, g, "Returns helpful text about the different subcommands.", "6.0.0")));
    }

    private static void SetUser(ref CommandContext c)
    {
        string name = c.ArgString(2);
        if (name.Contains(' ') || name.Contains('\0'))
        {
            c.Error("ERR Usernames can't contain spaces or null characters");
            return;
        }
        var rules = new string[c.ArgCount - 3];
        for (int i = 3; i < c.ArgCount; i++)
            rules[i - 3] = c.ArgString(i);
        if (c.Server.Acl.SetUser(name, rules) is { } error)
        {
            c.Error("ERR " + error);
            return;
        }
        c.Reply.Ok();
    }

    private static void GetUser(ref CommandContext c)
    {
        if (c.Server.Acl.Find(c.ArgString(2)) is not { } slot)
        {
            c.Reply.Null();
            return;
        }
        var user = slot.Current;
        var reply = c.Reply;
        reply.MapHeader(6);
        reply.Bulk("flags"u8);
        var flags = user.Flags();
        // RESP3 answers the flags as a set, as Redis does.
        reply.SetHeader(flags.Count);
        foreach (string flag in flags)
            reply.Bulk(flag);
        reply.Bulk("passwords"u8);
        reply.ArrayHeader(user.Passwords.Count);
        foreach (string password in user.Passwords)
            reply.Bulk(password);
        WriteSelector(reply, user.Root, withHeader: false);
        reply.Bulk("selectors"u8);
        reply.ArrayHeader(user.Selectors.Count - 1);
        for (int i = 1; i < user.Selectors.Count; i++)
            WriteSelector(reply, user.Selectors[i], withHeader: true);
    }

    private static void WriteSelector(Protocol.RespWriter reply, AclSelector selector, bool withHeader)
    {
        if (withHeader)
            reply.MapHeader(3);
        reply.Bulk("commands"u8);
        reply.Bulk(selector.DescribeCommands());
        reply.Bulk("keys"u8);
        reply.Bulk(selector.DescribeKeys());
        reply.Bulk("channels"u8);
        reply.Bulk(selector.ChannelPatterns());
    }

    private static void DelUser(ref CommandContext c)
    {
        var names = new List<string>(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
        {
            string name = c.ArgString(i);
            if (name == "default")
            {
                c.Error("ERR The 'default' user cannot be removed");
                return;
            }
            names.Add(name);
        }
        var removed = c.Server.Acl.Delete(names);
        CloseConnectionsOf(ref c, removed);
        c.Reply.Integer(removed.Count);
    }

    /// <summary>As Redis: the connections of users that are gone are closed (this one after its reply).</summary>
    private static void CloseConnectionsOf(ref CommandContext c, List<AclUserSlot> removed)
    {
        if (removed.Count == 0)
            return;
        foreach (var client in c.Server.Clients.Snapshot())
        {
            if (client.User is not { } slot || !removed.Contains(slot))
                continue;
            if (ReferenceEquals(client, c.Client))
                client.CloseAfterReply = true;
            else
                client.Kill();
        }
    }

    private static void Users(ref CommandContext c)
    {
        var users = c.Server.Acl.All;
        c.Reply.ArrayHeader(users.Count);
        foreach (var slot in users)
            c.Reply.Bulk(slot.Name);
    }

    private static void List(ref CommandContext c)
    {
        var users = c.Server.Acl.All;
        c.Reply.ArrayHeader(users.Count);
        foreach (var slot in users)
            c.Reply.Bulk(slot.Current.Describe());
    }

    private static void WhoAmI(ref CommandContext c) => c.Reply.Bulk(c.Client.User?.Name ?? "default");

    private static void Cat(ref CommandContext c)
    {
        if (c.ArgCount > 3)
        {
            c.Error(Errors.WrongArity(c.Spec.FullName));
            return;
        }
        if (c.ArgCount == 2)
        {
            var names = CommandMetadata.CategoryList((AclCategories)~0);
            c.Reply.ArrayHeader(names.Count);
            foreach (string name in names)
                c.Reply.Bulk(name[1..]);
            return;
        }
        string category = c.ArgString(2);
        if (!CommandMetadata.TryParseCategory(category, out var flag))
        {
            c.Error($"ERR Unknown category '{Errors.Truncate(category)}'");
            return;
        }
        var commands = new List<string>();
        foreach (var spec in c.Server.Commands.AllSpecs)
            if (spec.Handler is not null && (CommandMetadata.Categories(spec) & flag) != 0)
                commands.Add(spec.FullName);
        c.Reply.ArrayHeader(commands.Count);
        foreach (string name in commands)
            c.Reply.Bulk(name);
    }

    private static void GenPass(ref CommandContext c)
    {
        long bits = 256;
        if (c.ArgCount > 3)
        {
            c.Error(Errors.WrongArity(c.Spec.FullName));
            return;
        }
        if (c.ArgCount == 3 && (!Protocol.NumberFormat.TryParseInt64(c.Arg(2), out bits) || bits <= 0 || bits > 4096))
        {
            c.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096");
            return;
        }
        int chars = (int)((bits + 3) / 4);
        c.Reply.Bulk(Convert.ToHexStringLower(RandomNumberGenerator.GetBytes((chars + 1) / 2))[..chars]);
    }

    private static void Log(ref CommandContext c)
    {
        int? count = null;
        if (c.ArgCount > 3)
        {
            c.Error(Errors.WrongArity(c.Spec.FullName));
            return;
        }
        if (c.ArgCount == 3)
        {
            if (c.ArgIs(2, "reset"u8))
            {
                c.Server.AclLog.Reset();
                c.Reply.Ok();
                return;
            }
            if (!Protocol.NumberFormat.TryParseInt64(c.Arg(2), out long n) || n < 0)
            {
                c.Error("ERR Invalid count");
                return;
            }
            count = (int)Math.Min(n, int.MaxValue);
        }
        var entries = c.Server.AclLog.Newest(count);
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var reply = c.Reply;
        reply.ArrayHeader(entries.Count);
        foreach (var entry in entries)
        {
            reply.MapHeader(7);
            reply.Bulk("count"u8);
            reply.Integer(entry.Count);
            reply.Bulk("reason"u8);
            reply.Bulk(entry.ReasonName);
            reply.Bulk("context"u8);
            reply.Bulk(entry.Context);
            reply.Bulk("object"u8);
            reply.Bulk(entry.Object);
            reply.Bulk("username"u8);
            reply.Bulk(entry.Username);
            reply.Bulk("age-seconds"u8);
            reply.Double((now - entry.CreatedUnixMs) / 1000.0);
            reply.Bulk("client-info"u8);
            reply.Bulk(entry.ClientInfo);
        }
    }

    private static void DryRun(ref CommandContext c)
    {
        string name = c.ArgString(2);
        if (c.Server.Acl.Find(name) is not { } slot)
        {
            c.Error($"ERR User '{Errors.Truncate(name)}' not found");
            return;
        }
        var spec = c.Server.Commands.Find(c.Arg(3));
        if (spec is not null && spec.Subcommands is { } subcommands && c.ArgCount > 4)
            spec = FindSubcommand(subcommands, c.ArgString(4)) ?? spec;
        if (spec is null)
        {
            c.Error($"ERR Command '{Errors.Truncate(c.ArgString(3))}' not found");
            return;
        }
        if (!spec.AcceptsArgCount(c.ArgCount - 3))
        {
            c.Error(Errors.WrongArity(spec.FullName));
            return;
        }
        var args = c.Args.From(3);
        if (AclCheck.Check(slot.Current, spec, args) is not { } refusal)
        {
            c.Reply.Ok();
            return;
        }
        c.Reply.Bulk(refusal.Reason switch
        {
            AclDenial.Key => $"This user has no permissions to access the '{refusal.Object}' key",
            AclDenial.Channel => $"This user has no permissions to access the '{refusal.Object}' channel",
            _ => $"This user has no permissions to run the '{refusal.Object}' command",
        });
    }

    private static CommandSpec? FindSubcommand(IReadOnlyDictionary<string, CommandSpec> subcommands, string name)
    {
        foreach (var (key, spec) in subcommands)
            if (key.Equals(name, StringComparison.OrdinalIgnoreCase))
                return spec;
        return null;
    }

    private static void Save(ref CommandContext c)
    {
        string path = c.Server.Config.AclFilePath;
        if (path.Length == 0)
        {
            c.Error(NoAclFile);
            return;
        }
        if (c.Server.Acl.SaveFile(path) is { } problem)
        {
            c.Error($"ERR There was an error trying to save the ACLs. Please check the server logs for more information");
            c.Client.Log.LogWarning("ACL SAVE to {Path} failed: {Problem}", path, problem);
            return;
        }
        c.Reply.Ok();
    }

    private static void Load(ref CommandContext c)
    {
        string path = c.Server.Config.AclFilePath;
        if (path.Length == 0)
        {
            c.Error(NoAclFile);
            return;
        }
        var (removed, error) = c.Server.Acl.LoadFile(path);
        if (error is not null)
        {
            c.Error("ERR " + error);
            return;
        }
        CloseConnectionsOf(ref c, removed!);
        c.Reply.Ok();
    }

    private static void Help(ref CommandContext c) => HelpReply.Write(c.Reply,
    [
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help.",
    ]);
}
