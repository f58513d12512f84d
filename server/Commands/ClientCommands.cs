using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Network;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>The CLIENT command family.</summary>
public static class ClientCommands
{
    public const string InvalidNameError = "ERR Client names cannot contain spaces, newlines or special characters.";

    public static void Register(CommandTable table)
    {
        const string g = "connection";
        const CommandFlags f = Connection | NoScript | Loading | Stale;
        table.Add(new CommandSpec("client", -2, f, 0, 0, 0, null, g, "A container for client connection commands.", "2.4.0", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("id", 2, f, 0, 0, 0, Id, g, "Returns the unique client ID of the connection.", "5.0.0"),
                new CommandSpec("setname", 3, f, 0, 0, 0, SetName, g, "Sets the connection name.", "2.6.9")
                { Arguments = [new("connection-name", "string")] },
                new CommandSpec("getname", 2, f, 0, 0, 0, GetName, g, "Returns the name of the connection.", "2.6.9"),
                new CommandSpec("list", -2, f | Admin, 0, 0, 0, List, g, "Lists open connections.", "2.4.0", "O(N)")
                {
                    Arguments = [new("client-type", "oneof", Optional: true, Token: "TYPE", Children: [new("normal", "pure-token", Token: "NORMAL"), new("master", "pure-token", Token: "MASTER"), new("replica", "pure-token", Token: "REPLICA"), new("pubsub", "pure-token", Token: "PUBSUB")]),
                        new("client-id", "integer", Optional: true, Multiple: true, Token: "ID")],
                },
                new CommandSpec("info", 2, f, 0, 0, 0, Info, g, "Returns information about the connection.", "6.2.0"),
                new CommandSpec("kill", -3, f | Admin, 0, 0, 0, Kill, g, "Terminates open connections.", "2.4.0", "O(N)")
                { Arguments = [new("filter", "string", Multiple: true)] },
                new CommandSpec("setinfo", 4, f, 0, 0, 0, SetInfo, g, "Sets information specific to the client or connection.", "7.2.0")
                { Arguments = [new("attr", "oneof", Children: [new("libname", "string", Token: "LIB-NAME"), new("libver", "string", Token: "LIB-VER")])] },
                new CommandSpec("no-evict", 3, f | Admin, 0, 0, 0, NoEvict, g, "Sets the client eviction mode of the connection.", "7.0.0")
                { Arguments = [new("enabled", "oneof", Children: [new("on", "pure-token", Token: "ON"), new("off", "pure-token", Token: "OFF")])] },
                new CommandSpec("no-touch", 3, f, 0, 0, 0, NoTouch, g, "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "7.2.0")
                { Arguments = [new("enabled", "oneof", Children: [new("on", "pure-token", Token: "ON"), new("off", "pure-token", Token: "OFF")])] },
                new CommandSpec("reply", 3, f, 0, 0, 0, Reply, g, "Instructs the server whether to reply to commands.", "3.2.0")
                { Arguments = [new("action", "oneof", Children: [new("on", "pure-token", Token: "ON"), new("off", "pure-token", Token: "OFF"), new("skip", "pure-token", Token: "SKIP")])] },
                new CommandSpec("unblock", -3, f | Admin, 0, 0, 0, Unblock, g, "Unblocks a client blocked by a blocking command from a different connection.", "5.0.0", "O(log N) where N is the number of client connections")
                { Arguments = [new("client-id", "integer"), new("unblock-type", "oneof", Optional: true, Children: [new("timeout", "pure-token", Token: "TIMEOUT"), new("error", "pure-token", Token: "ERROR")])] },
                new CommandSpec("help", 2, f, 0, 0, 0, Help, g, "Returns helpful text about the different subcommands.", "5.0.0")));
    }

    public static bool IsValidName(string name)
    {
        foreach (char ch in name)
            if (ch < '!' || ch > '~')
                return false;
        return true;
    }

    private static void Id(ref CommandContext c) => c.Reply.Integer(c.Client.Id);

    private static void SetName(ref CommandContext c)
    {
        string name = c.ArgString(2);
        if (!IsValidName(name))
        {
            c.Error(InvalidNameError);
            return;
        }
        c.Client.Name = name.Length == 0 ? null : name;
        c.Reply.Ok();
    }

    private static void GetName(ref CommandContext c)
    {
        if (c.Client.Name is null)
            c.Reply.Null();
        else
            c.Reply.Bulk(c.Client.Name);
    }

    /// <summary>CLIENT LIST/KILL TYPE: a client class, or null for "master" (this server has no master link).</summary>
    private static bool TryParseType(string name, out ClientClass? type)
    {
        type = name.ToLowerInvariant() switch
        {
            "normal" => ClientClass.Normal,
            "replica" or "slave" => ClientClass.Replica,
            "pubsub" => ClientClass.PubSub,
            _ => null,
        };
        return type is not null || name.Equals("master", StringComparison.OrdinalIgnoreCase);
    }

    private static void List(ref CommandContext c)
    {
        HashSet<long>? ids = null;
        bool typed = false;
        ClientClass? type = null;
        for (int i = 2; i < c.ArgCount; i++)
        {
            if (c.ArgIs(i, "type"u8) && i + 1 < c.ArgCount)
            {
                i++;
                if (!TryParseType(c.ArgString(i), out type))
                {
                    c.Error($"ERR Unknown client type '{Errors.Truncate(c.ArgString(i))}'");
                    return;
                }
                typed = true;
            }
            else if (c.ArgIs(i, "id"u8) && i + 1 < c.ArgCount)
            {
                ids ??= [];
                for (i++; i < c.ArgCount; i++)
                {
                    if (!Protocol.NumberFormat.TryParseInt64(c.Arg(i), out long id) || id <= 0)
                    {
                        c.Error("ERR Invalid client ID");
                        return;
                    }
                    ids.Add(id);
                }
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }
        var text = new StringBuilder();
        foreach (var client in c.Server.Clients.Snapshot())
            if ((ids is null || ids.Contains(client.Id)) && (!typed || client.Class == type))
                ClientDescription.Append(text, client, c.NowMs);
        c.Reply.Verbatim(text.ToString());
    }

    private static void Info(ref CommandContext c)
    {
        var text = new StringBuilder();
        if (c.Client is ClientConnection self)
            ClientDescription.Append(text, self, c.NowMs);
        c.Reply.Verbatim(text.ToString());
    }

    private static void Kill(ref CommandContext c)
    {
        var clients = c.Server.Clients.Snapshot();
        if (c.ArgCount == 3)
        {
            // Old form: CLIENT KILL addr:port, answering OK or an error.
            string address = c.ArgString(2);
            foreach (var client in clients)
            {
                if (client.Address == address)
                {
                    KillClient(ref c, client);
                    c.Reply.Ok();
                    return;
                }
            }
            c.Error("ERR No such client");
            return;
        }

        long? id = null;
        string? addr = null, laddr = null, user = null;
        bool skipMe = true;
        bool typed = false;
        ClientClass? type = null;
        for (int i = 2; i < c.ArgCount; i += 2)
        {
            if (i + 1 >= c.ArgCount)
            {
                c.SyntaxError();
                return;
            }
            if (c.ArgIs(i, "id"u8))
            {
                if (!Protocol.NumberFormat.TryParseInt64(c.Arg(i + 1), out long value) || value <= 0)
                {
                    c.Error("ERR client-id should be greater than 0");
                    return;
                }
                id = value;
            }
            else if (c.ArgIs(i, "addr"u8)) addr = c.ArgString(i + 1);
            else if (c.ArgIs(i, "laddr"u8)) laddr = c.ArgString(i + 1);
            else if (c.ArgIs(i, "user"u8)) user = c.ArgString(i + 1);
            else if (c.ArgIs(i, "type"u8))
            {
                string name = c.ArgString(i + 1);
                if (!TryParseType(name, out type))
                {
                    c.Error($"ERR Unknown client type '{name.ToLowerInvariant()}'");
                    return;
                }
                typed = true;
            }
            else if (c.ArgIs(i, "skipme"u8))
            {
                if (c.ArgIs(i + 1, "yes"u8)) skipMe = true;
                else if (c.ArgIs(i + 1, "no"u8)) skipMe = false;
                else
                {
                    c.SyntaxError();
                    return;
                }
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }

        int killed = 0;
        foreach (var client in clients)
        {
            if (id is not null && client.Id != id) continue;
            if (addr is not null && client.Address != addr) continue;
            if (laddr is not null && client.LocalAddress != laddr) continue;
            if (user is not null && user != "default") continue;
            if (typed && client.Class != type) continue;
            if (skipMe && client == c.Client) continue;
            KillClient(ref c, client);
            killed++;
        }
        c.Reply.Integer(killed);
    }

    private static void KillClient(ref CommandContext c, ClientConnection client)
    {
        // Killing yourself closes after this reply, as Redis does.
        if (client == c.Client)
            client.CloseAfterReply = true;
        else
            client.Kill();
    }

    private static void SetInfo(ref CommandContext c)
    {
        string value = c.ArgString(3);
        if (c.ArgIs(2, "lib-name"u8) || c.ArgIs(2, "lib-ver"u8))
        {
            foreach (char ch in value)
            {
                if (ch < '!' || ch > '~')
                {
                    c.Error($"ERR {c.ArgString(2).ToLowerInvariant()} cannot contain spaces, newlines or special characters.");
                    return;
                }
            }
            if (c.ArgIs(2, "lib-name"u8)) c.Client.LibName = value;
            else c.Client.LibVersion = value;
            c.Reply.Ok();
            return;
        }
        c.Error($"ERR Unrecognized option '{Errors.Truncate(c.ArgString(2))}'");
    }

    private static void NoEvict(ref CommandContext c)
    {
        if (OnOff(ref c, out bool on))
            c.Client.NoEvict = on;
    }

    private static void NoTouch(ref CommandContext c)
    {
        if (OnOff(ref c, out bool on))
            c.Client.NoTouch = on;
    }

    private static bool OnOff(ref CommandContext c, out bool on)
    {
        on = c.ArgIs(2, "on"u8);
        if (!on && !c.ArgIs(2, "off"u8))
        {
            c.SyntaxError();
            return false;
        }
        c.Reply.Ok();
        return true;
    }

    private static void Reply(ref CommandContext c)
    {
        var client = c.Client;
        if (c.ArgIs(2, "on"u8))
        {
            client.ReplyMode = ReplyMode.On;
            client.SkipNextReply = false;
            c.Reply.Muted = false;
            c.Reply.Ok();
        }
        else if (c.ArgIs(2, "off"u8))
        {
            client.ReplyMode = ReplyMode.Off;
        }
        else if (c.ArgIs(2, "skip"u8))
        {
            if (client.ReplyMode != ReplyMode.Off)
                client.SkipNextReply = true;
        }
        else
        {
            c.SyntaxError();
        }
    }

    /// <summary>CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 when that client was blocked and now answers as timed out (or with -UNBLOCKED), else 0.</summary>
    private static void Unblock(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long id))
            return;
        var outcome = Engine.BlockOutcome.UnblockedAsTimeout;
        if (c.ArgCount == 4 && c.ArgIs(3, "error"u8))
            outcome = Engine.BlockOutcome.UnblockedWithError;
        else if (c.ArgCount > 4 || (c.ArgCount == 4 && !c.ArgIs(3, "timeout"u8)))
        {
            c.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
        foreach (var client in c.Server.Clients.Snapshot())
        {
            if (client.Id == id && client.Blocked is { } block)
            {
                c.Reply.Integer(block.Interrupt(outcome) ? 1 : 0);
                return;
            }
        }
        c.Reply.Integer(0);
    }

    private static void Help(ref CommandContext c)
    {
        string[] lines =
        [
            "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ID", "    Return the ID of the current connection.",
            "GETNAME", "    Return the name of the current connection.",
            "INFO", "    Return information about the current client connection.",
            "KILL <ip:port>", "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options are: ID, ADDR, LADDR, USER, TYPE, SKIPME.",
            "LIST [options ...]", "    Return information about client connections. Options: TYPE <type>, ID <id> [...].",
            "NO-EVICT (ON|OFF)", "    Protect the current client connection from eviction.",
            "NO-TOUCH (ON|OFF)", "    Will not touch LRU/LFU stats when this mode is on.",
            "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
            "SETNAME <name>", "    Assign the name <name> to the current connection.",
            "SETINFO <option> <value>", "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client.",
            "HELP", "    Print this help.",
        ];
        HelpReply.Write(c.Reply, lines);
    }
}
