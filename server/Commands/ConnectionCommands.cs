using System.Security.Cryptography;
using System.Text;
using Diagnostics.Server.Network;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET.</summary>
public static class ConnectionCommands
{
    public const string ServerName = "redis";
    /// <summary>The Redis version whose behaviour this server implements, as reported to clients.</summary>
    public const string CompatibleVersion = "7.2.0";

    public static void Register(CommandTable table)
    {
        const string g = "connection";
        table.Add(new CommandSpec("ping", -1, Connection | Fast | SubscribedContext, 0, 0, 0, Ping, g, "Returns the server's liveliness response.")
        { Arguments = [new("message", "string", Optional: true)] });
        table.Add(new CommandSpec("echo", 2, Connection | Fast | Loading | Stale, 0, 0, 0, Echo, g, "Returns the given string.")
        { Arguments = [new("message", "string")] });
        table.Add(new CommandSpec("hello", -1, Connection | Fast | NoAuth | NoScript | Loading | Stale | AllowBusy, 0, 0, 0, Hello, g,
            "Handshakes with the Redis server.", "6.0.0")
        {
            Arguments = [new("arguments", "block", Optional: true, Children: [
                new("protover", "integer"),
                new("auth", "block", Optional: true, Token: "AUTH", Children: [new("username", "string"), new("password", "string")]),
                new("clientname", "string", Optional: true, Token: "SETNAME")])],
            // The two words after AUTH: user name and password.
            Redact = (args, index, _) => (index >= 2 && Protocol.NumberFormat.EqualsIgnoreCase(args[index - 1], "auth"u8))
                || (index >= 3 && Protocol.NumberFormat.EqualsIgnoreCase(args[index - 2], "auth"u8)),
        });
        table.Add(new CommandSpec("auth", -2, Connection | Fast | NoAuth | NoScript | Loading | Stale | AllowBusy, 0, 0, 0, Auth, g,
            "Authenticates the connection.")
        { Arguments = [new("username", "string", Optional: true), new("password", "string")], Redact = (_, index, _) => index >= 1 });
        table.Add(new CommandSpec("select", 2, Connection | Fast | Loading | Stale, 0, 0, 0, Select, g, "Changes the selected database.")
        { Arguments = [new("index", "integer")] });
        table.Add(new CommandSpec("quit", -1, Connection | Fast | NoAuth | NoScript | Loading | Stale | AllowBusy | TransactionControl | SubscribedContext, 0, 0, 0, Quit, g, "Closes the connection."));
        table.Add(new CommandSpec("reset", 1, Connection | Fast | NoAuth | NoScript | Loading | Stale | AllowBusy | TransactionControl | SubscribedContext, 0, 0, 0, Reset, g,
            "Resets the connection.", "6.2.0"));
    }

    private static void Ping(ref CommandContext c)
    {
        if (c.ArgCount > 2)
            c.Error(Errors.WrongArity("ping"));
        else if (c.Reply.Protocol == 2 && c.Client.Subscriptions > 0)
        {
            // A subscribed RESP2 connection reads only arrays, so PING answers as one: [pong, message].
            c.Reply.ArrayHeader(2);
            c.Reply.Bulk("pong"u8);
            c.Reply.Bulk(c.ArgCount == 2 ? c.Arg(1) : default);
        }
        else if (c.ArgCount == 2)
            c.Reply.Bulk(c.Arg(1));
        else
            c.Reply.Pong();
    }

    private static void Echo(ref CommandContext c) => c.Reply.Bulk(c.Arg(1));

    private static void Hello(ref CommandContext c)
    {
        var client = c.Client;
        int protocol = c.Reply.Protocol;
        int i = 1;
        if (c.ArgCount >= 2)
        {
            if (!c.TryInt64(1, out long version, "ERR Protocol version is not an integer or out of range"))
                return;
            if (version is < 2 or > 3)
            {
                c.Error("NOPROTO unsupported protocol version");
                return;
            }
            protocol = (int)version;
            i = 2;
        }
        string? name = null;
        bool authenticated = client.Authenticated;
        Acl.AclUserSlot? authenticatedAs = null;
        for (; i < c.ArgCount; i++)
        {
            int remaining = c.ArgCount - i - 1;
            if (c.ArgIs(i, "auth"u8) && remaining >= 2)
            {
                if (!CheckPassword(ref c, c.Arg(i + 1), c.Arg(i + 2)))
                    return;
                authenticated = true;
                authenticatedAs = c.Server.Acl.Find(c.ArgString(i + 1));
                i += 2;
            }
            else if (c.ArgIs(i, "setname"u8) && remaining >= 1)
            {
                name = c.ArgString(i + 1);
                if (!ClientCommands.IsValidName(name))
                {
                    c.Error(ClientCommands.InvalidNameError);
                    return;
                }
                i++;
            }
            else
            {
                c.Error($"ERR Syntax error in HELLO option '{Errors.Truncate(c.ArgString(i))}'");
                return;
            }
        }
        if (!authenticated)
        {
            c.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
            return;
        }
        client.Authenticated = true;
        if (authenticatedAs is not null)
            client.User = authenticatedAs;
        if (name is not null)
            client.Name = name.Length == 0 ? null : name;
        c.Reply.Protocol = protocol;

        var reply = c.Reply;
        reply.MapHeader(7);
        reply.Bulk("server"u8);
        reply.Bulk(ServerName);
        reply.Bulk("version"u8);
        reply.Bulk(CompatibleVersion);
        reply.Bulk("proto"u8);
        reply.Integer(protocol);
        reply.Bulk("id"u8);
        reply.Integer(client.Id);
        reply.Bulk("mode"u8);
        reply.Bulk("standalone"u8);
        reply.Bulk("role"u8);
        reply.Bulk("master"u8);
        reply.Bulk("modules"u8);
        reply.ArrayHeader(0);
    }

    private static void Auth(ref CommandContext c)
    {
        if (c.ArgCount > 3)
        {
            c.SyntaxError();
            return;
        }
        if (c.Server.Acl.Default.Current.NoPass && c.ArgCount == 2)
        {
            c.Error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
            return;
        }
        ReadOnlySpan<byte> user = c.ArgCount == 3 ? c.Arg(1) : "default"u8;
        if (CheckPassword(ref c, user, c.Arg(c.ArgCount - 1)))
        {
            c.Client.Authenticated = true;
            c.Client.User = c.Server.Acl.Find(System.Text.Encoding.UTF8.GetString(user));
            c.Reply.Ok();
        }
    }

    /// <summary>
    /// The user exists, is on and takes the password (compared as SHA-256 digests in constant
    /// time); else WRONGPASS, counted and logged in ACL LOG under the user named (never the password).
    /// </summary>
    private static bool CheckPassword(ref CommandContext c, ReadOnlySpan<byte> user, ReadOnlySpan<byte> password)
    {
        string name = System.Text.Encoding.UTF8.GetString(user);
        if (c.Server.Acl.Find(name)?.Current is { Enabled: true } found && found.Accepts(password))
            return true;
        c.Server.Stats.AuthFailed();
        c.Server.AuthFailures.Failed(SourceAddress(c.Client), name);
        // The object is the command as the client spelled it ("AUTH", "hello"), as Redis logs it.
        c.Server.AclLog.Add(Acl.AclDenial.Auth, c.Client.Transaction is { InMulti: true } ? "multi" : "toplevel", c.ArgString(0), name, c.Client.Describe());
        c.Error(Errors.WrongPass);
        return false;
    }

    /// <summary>The client's IP address without its port ("10.0.0.5", "::1"); "" for the server's own sessions.</summary>
    private static string SourceAddress(Execution.ClientSession client)
    {
        if (client is not Network.ClientConnection connection || connection.Address is not { Length: > 0 } address)
            return "";
        int colon = address.LastIndexOf(':');
        return colon > 0 ? address[..colon] : address;
    }

    private static void Select(ref CommandContext c)
    {
        if (!c.TryInt64(1, out long index))
            return;
        if (index < 0 || index >= c.Server.Config.Databases)
        {
            c.Error(Errors.DbIndexOutOfRange);
            return;
        }
        c.Client.DatabaseIndex = (int)index;
        c.Reply.Ok();
    }

    private static void Quit(ref CommandContext c)
    {
        c.Reply.Ok();
        c.Client.CloseAfterReply = true;
    }

    private static void Reset(ref CommandContext c)
    {
        var client = c.Client;
        client.ResetTransaction();
        client.UnsubscribeAll(deliverQueued: true);
        c.Server.Monitors.Remove(client);
        client.DatabaseIndex = 0;
        client.Name = null;
        client.ReplyMode = ReplyMode.On;
        client.SkipNextReply = false;
        client.NoEvict = false;
        client.NoTouch = false;
        c.Server.Tracking.Disable(client);
        // As Redis: back to the default user, authenticated only if it needs no password.
        client.User = c.Server.Acl.Default;
        client.Authenticated = c.Server.Acl.DefaultNeedsNoPassword;
        c.Reply.Protocol = 2;
        c.Reply.Muted = false;
        c.Reply.SimpleString("RESET"u8);
    }
}
