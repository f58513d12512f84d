using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Execution;
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
                new CommandSpec("pause", -3, f | Admin, 0, 0, 0, Pause, g, "Suspends commands processing.", "3.0.0")
                {
                    Arguments = [new("timeout", "integer"),
                        new("mode", "oneof", Optional: true, Children: [new("write", "pure-token", Token: "WRITE"), new("all", "pure-token", Token: "ALL")])],
                },
                new CommandSpec("unpause", 2, f | Admin, 0, 0, 0, Unpause, g, "Resumes processing commands from paused clients.", "6.2.0", "O(N) Where N is the number of paused clients"),
                new CommandSpec("tracking", -3, f, 0, 0, 0, Tracking, g, "Controls server-assisted client-side caching for the connection.", "6.0.0", "O(1). Some options may introduce additional complexity.")
                {
                    Arguments = [new("status", "oneof", Children: [new("on", "pure-token", Token: "ON"), new("off", "pure-token", Token: "OFF")]),
                        new("client-id", "integer", Optional: true, Token: "REDIRECT"),
                        new("prefix", "string", Optional: true, Multiple: true, Token: "PREFIX"),
                        new("bcast", "pure-token", Optional: true, Token: "BCAST"),
                        new("optin", "pure-token", Optional: true, Token: "OPTIN"),
                        new("optout", "pure-token", Optional: true, Token: "OPTOUT"),
                        new("noloop", "pure-token", Optional: true, Token: "NOLOOP")],
                },
                new CommandSpec("caching", 3, f, 0, 0, 0, Caching, g, "Instructs the server whether to track the keys in the next request.", "6.0.0")
                { Arguments = [new("mode", "oneof", Children: [new("yes", "pure-token", Token: "YES"), new("no", "pure-token", Token: "NO")])] },
                new CommandSpec("getredir", 2, f, 0, 0, 0, GetRedirect, g, "Returns the client ID to which the connection's tracking notifications are redirected.", "6.0.0"),
                new CommandSpec("trackinginfo", 2, f, 0, 0, 0, TrackingInfo, g, "Returns information about server-assisted client-side caching for the connection.", "6.2.0"),
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

    /// <summary>CLIENT LIST/KILL TYPE: a client class, or null for "master" (the replica's master link, listed apart).</summary>
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
        // The master client first: it was made before any client that connected since (ids rise).
        if (c.Server.Replication.Link?.Client is { } master && (!typed || type is null) && (ids is null || ids.Contains(master.Id)))
            ClientDescription.Append(text, master, c.NowMs);
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
        // The master link's client: its connection drops and the link reconnects (a partial resync).
        if (c.Server.Replication.Link is { Client: var master } link && (id is null || id == master.Id) && (addr is null || addr == master.Address)
            && (laddr is null || laddr == master.LocalAddress) && (user is null || user == "default") && (!typed || type is null)
            && (typed || id is not null || addr is not null || laddr is not null))
        {
            link.DropConnection();
            killed++;
        }
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

    /// <summary>CLIENT PAUSE timeout [WRITE|ALL]: ALL when no mode is given; a second pause keeps the stronger mode and the later end.</summary>
    private static void Pause(ref CommandContext c)
    {
        if (c.ArgCount > 4)
        {
            c.Error($"ERR unknown subcommand or wrong number of arguments for '{Errors.Truncate(c.ArgString(1))}'. Try CLIENT HELP.");
            return;
        }
        var mode = PauseMode.All;
        if (c.ArgCount == 4)
        {
            if (c.ArgIs(3, "write"u8))
                mode = PauseMode.Write;
            else if (!c.ArgIs(3, "all"u8))
            {
                c.Error("ERR CLIENT PAUSE mode must be WRITE or ALL");
                return;
            }
        }
        if (!TimeoutArgument.TryMilliseconds(ref c, 2, out long timeout))
            return;
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        // As Redis: 0 pauses until the next check (at once); an end past the clock's range is capped.
        long end = timeout == 0 ? 0 : timeout > long.MaxValue - now ? long.MaxValue : now + timeout;
        c.Server.Pause.Pause(end, mode);
        c.Reply.Ok();
    }

    private static void Unpause(ref CommandContext c)
    {
        c.Server.Pause.Unpause();
        c.Reply.Ok();
    }

    /// <summary>CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN] [OPTOUT] [NOLOOP], checked in Redis's order with its errors.</summary>
    private static void Tracking(ref CommandContext c)
    {
        if (c.Client is not ClientConnection client)
        {
            c.Error("ERR CLIENT TRACKING needs a network connection");
            return;
        }
        long redirect = 0;
        bool broadcast = false, optIn = false, optOut = false, noLoop = false;
        var prefixes = new List<byte[]>();
        for (int j = 3; j < c.ArgCount; j++)
        {
            bool more = j + 1 < c.ArgCount;
            if (c.ArgIs(j, "redirect"u8) && more)
            {
                j++;
                if (redirect != 0)
                {
                    c.Error("ERR A client can only redirect to a single other client");
                    return;
                }
                if (!c.TryInt64(j, out redirect))
                    return;
                // The target must exist now; it may still go later (the redirect then breaks).
                if (c.Server.Clients.Find(redirect) is null)
                {
                    c.Error("ERR The client ID you want redirect to does not exist");
                    return;
                }
            }
            else if (c.ArgIs(j, "bcast"u8)) broadcast = true;
            else if (c.ArgIs(j, "optin"u8)) optIn = true;
            else if (c.ArgIs(j, "optout"u8)) optOut = true;
            else if (c.ArgIs(j, "noloop"u8)) noLoop = true;
            else if (c.ArgIs(j, "prefix"u8) && more)
            {
                j++;
                prefixes.Add(c.Arg(j).ToArray());
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }

        if (c.ArgIs(2, "off"u8))
        {
            c.Server.Tracking.Disable(client);
            c.Reply.Ok();
            return;
        }
        if (!c.ArgIs(2, "on"u8))
        {
            c.SyntaxError();
            return;
        }
        var current = client.Tracking;
        if (!broadcast && prefixes.Count > 0)
            c.Error("ERR PREFIX option requires BCAST mode to be enabled");
        else if (current is not null && current.Broadcast != broadcast)
            c.Error("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.");
        else if (broadcast && (optIn || optOut))
            c.Error("ERR OPTIN and OPTOUT are not compatible with BCAST");
        else if (optIn && optOut)
            c.Error("ERR You can't specify both OPTIN mode and OPTOUT mode");
        else if ((optIn && current is { OptOut: true }) || (optOut && current is { OptIn: true }))
            c.Error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.");
        else if (broadcast && PrefixCollision(current, prefixes) is { } collision)
            c.Error(collision);
        else
        {
            c.Server.Tracking.Enable(client, redirect, broadcast, optIn, optOut, noLoop, prefixes);
            c.Reply.Ok();
        }
    }

    /// <summary>Redis's checkPrefixCollisionsOrReply: two prefixes of one client may not cover the same key.</summary>
    private static string? PrefixCollision(Tracking.ClientTracking? current, List<byte[]> prefixes)
    {
        static bool Overlap(byte[] a, byte[] b) => a.AsSpan(0, Math.Min(a.Length, b.Length)).SequenceEqual(b.AsSpan(0, Math.Min(a.Length, b.Length)));
        static string Text(byte[] bytes) => Encoding.UTF8.GetString(bytes);
        for (int i = 0; i < prefixes.Count; i++)
        {
            foreach (var existing in current?.Prefixes ?? [])
                if (Overlap(existing, prefixes[i]))
                    return $"ERR Prefix '{Text(prefixes[i])}' overlaps with an existing prefix '{Text(existing)}'. Prefixes for a single client must not overlap.";
            for (int j = i + 1; j < prefixes.Count; j++)
                if (Overlap(prefixes[i], prefixes[j]))
                    return $"ERR Prefix '{Text(prefixes[i])}' overlaps with another provided prefix '{Text(prefixes[j])}'. Prefixes for a single client must not overlap.";
        }
        return null;
    }

    /// <summary>CLIENT CACHING YES|NO: whether the next command's reads are remembered (OPTIN / OPTOUT).</summary>
    private static void Caching(ref CommandContext c)
    {
        var tracking = c.Client.Tracking;
        if (tracking is null)
        {
            c.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled");
            return;
        }
        if (c.ArgIs(2, "yes"u8))
        {
            if (!tracking.OptIn)
            {
                c.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
                return;
            }
        }
        else if (c.ArgIs(2, "no"u8))
        {
            if (!tracking.OptOut)
            {
                c.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
                return;
            }
        }
        else
        {
            c.SyntaxError();
            return;
        }
        tracking.CachingGiven = true;
        c.Reply.Ok();
    }

    private static void GetRedirect(ref CommandContext c) => c.Reply.Integer(c.Client.Tracking?.RedirectId ?? -1);

    /// <summary>CLIENT TRACKINGINFO: a map of flags (a set in RESP3), redirect and prefixes, as Redis writes it.</summary>
    private static void TrackingInfo(ref CommandContext c)
    {
        var tracking = c.Client.Tracking;
        var flags = new List<string>();
        if (tracking is null)
            flags.Add("off");
        else
        {
            flags.Add("on");
            if (tracking.Broadcast) flags.Add("bcast");
            if (tracking.OptIn)
            {
                flags.Add("optin");
                if (tracking.CachingGiven) flags.Add("caching-yes");
            }
            if (tracking.OptOut)
            {
                flags.Add("optout");
                if (tracking.CachingGiven) flags.Add("caching-no");
            }
            if (tracking.NoLoop) flags.Add("noloop");
            if (tracking.BrokenRedirect) flags.Add("broken_redirect");
        }
        var reply = c.Reply;
        reply.MapHeader(3);
        reply.Bulk("flags");
        reply.SetHeader(flags.Count);
        foreach (var flag in flags)
            reply.Bulk(flag);
        reply.Bulk("redirect");
        reply.Integer(tracking?.RedirectId ?? -1);
        reply.Bulk("prefixes");
        var prefixes = tracking is { Broadcast: true } ? tracking.Prefixes : [];
        reply.ArrayHeader(prefixes.Length);
        foreach (var prefix in prefixes)
            reply.Bulk(prefix);
    }

    private static void Help(ref CommandContext c)
    {
        string[] lines =
        [
            "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
            "GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
            "ID", "    Return the ID of the current connection.",
            "GETNAME", "    Return the name of the current connection.",
            "INFO", "    Return information about the current client connection.",
            "KILL <ip:port>", "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options are: ID, ADDR, LADDR, USER, TYPE, SKIPME.",
            "LIST [options ...]", "    Return information about client connections. Options: TYPE <type>, ID <id> [...].",
            "UNPAUSE", "    Stop the current client pause, resuming traffic.",
            "PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds.",
            "NO-EVICT (ON|OFF)", "    Protect the current client connection from eviction.",
            "NO-TOUCH (ON|OFF)", "    Will not touch LRU/LFU stats when this mode is on.",
            "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
            "SETNAME <name>", "    Assign the name <name> to the current connection.",
            "SETINFO <option> <value>", "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]", "         [OPTIN] [OPTOUT] [NOLOOP]", "    Control server assisted client side caching.",
            "TRACKINGINFO", "    Report tracking status for the current connection.",
            "HELP", "    Print this help.",
        ];
        HelpReply.Write(c.Reply, lines);
    }
}
