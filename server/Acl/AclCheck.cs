using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Acl;

/// <summary>Why a command was refused, and what the ACL LOG names (the command, the key or the channel).</summary>
public readonly record struct AclRefusal(AclDenial Reason, string Object)
{
    /// <summary>Redis 7.0's NOPERM reply for it.</summary>
    public string Message => Reason switch
    {
        AclDenial.Key => "NOPERM this user has no permissions to access one of the keys used as arguments",
        AclDenial.Channel => "NOPERM this user has no permissions to access one of the channels used as arguments",
        _ => $"NOPERM this user has no permissions to run the '{Object}' command",
    };

    /// <summary>Redis 7.0's reply for a queued command the rules no longer allow at EXEC.</summary>
    public string ExecMessage => "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: "
        + Reason switch
        {
            AclDenial.Key => "no permission to touch the specified keys",
            AclDenial.Channel => "no permission to access one of the channels used as arguments",
            _ => "no permission to execute the command or subcommand",
        };
}

/// <summary>
/// Whether a user may run one call: some selector must allow the command (or its first argument),
/// every key it names with the access the command needs, and every channel. As Redis, a refusal
/// by the command is reported only when no selector allowed the command itself.
/// </summary>
/// <remarks>
/// The access a key needs: this server's command table records which key a command writes
/// (a STORE destination) but not Redis's finer key-spec flags, so a write command needs read and
/// write on its keys except for commands that only overwrite or delete (SET without GET, MSET,
/// DEL, UNLINK, the EXPIRE family...), which need write alone, and a destination, which needs
/// write while the sources need read.
/// </remarks>
public static class AclCheck
{
    private static readonly HashSet<string> BlindWrites = new(StringComparer.Ordinal)
    {
        "set", "setex", "psetex", "mset", "msetnx", "del", "unlink", "expire", "pexpire", "expireat", "pexpireat", "persist",
    };

    /// <summary>Records once, as the table is built, what the per-call check would otherwise look up by name.</summary>
    public static void Classify(CommandSpec spec)
    {
        spec.OverwritesKeys = spec.IsWrite && BlindWrites.Contains(spec.Name);
        spec.ChannelArguments = spec.Parent is not null ? AclChannelArguments.None : spec.Name switch
        {
            "publish" or "spublish" => AclChannelArguments.First,
            "subscribe" or "ssubscribe" => AclChannelArguments.All,
            "psubscribe" => AclChannelArguments.AllPatterns,
            _ => AclChannelArguments.None,
        };
    }

    public static AclRefusal? Check(AclUser user, CommandSpec spec, ArgList args)
    {
        AclRefusal? refusal = null;
        // AUTH, HELLO and the other commands allowed before authentication are allowed to every user, as in Redis.
        bool anyUser = (spec.Flags & CommandFlags.NoAuth) != 0;
        foreach (var selector in user.Selectors)
        {
            if (!anyUser && !selector.AllowsCall(spec, args.Count > 1 ? args[1] : default))
                continue;
            if (KeyRefusal(selector, spec, args) is { } key)
            {
                refusal ??= key;
                continue;
            }
            if (ChannelRefusal(selector, spec, args) is { } channel)
            {
                refusal ??= channel;
                continue;
            }
            return null;
        }
        return refusal ?? new AclRefusal(AclDenial.Command, spec.FullName);
    }

    private static AclRefusal? KeyRefusal(AclSelector selector, CommandSpec spec, ArgList args)
    {
        if (selector.AllKeys || (spec.FirstKey == 0 && spec.KeyCountIndex == 0 && spec.KeyRange is null))
            return null;
        int written = spec.IsWrite ? spec.WrittenKeyOf(args) : 0;
        bool blind = spec.OverwritesKeys && !(spec.Name == "set" && HasGet(args));
        foreach (int index in KeyPositions.Of(spec, args))
        {
            if (index <= 0 || index >= args.Count)
                continue;
            bool read, write;
            if (!spec.IsWrite) (read, write) = (true, false);
            else if (written > 0) (read, write) = index == written ? (false, true) : (true, false);
            else (read, write) = (!blind, true);
            if (!selector.AllowsKey(args[index], read, write))
                return new AclRefusal(AclDenial.Key, Encoding.UTF8.GetString(args[index]));
        }
        return null;
    }

    private static bool HasGet(ArgList args)
    {
        for (int i = 3; i < args.Count; i++)
            if (Ascii.EqualsIgnoreCase(args[i], "get"u8))
                return true;
        return false;
    }

    private static AclRefusal? ChannelRefusal(AclSelector selector, CommandSpec spec, ArgList args)
    {
        if (selector.AllChannels || spec.ChannelArguments == AclChannelArguments.None)
            return null;
        int last = spec.ChannelArguments == AclChannelArguments.First ? 1 : args.Count - 1;
        bool patterns = spec.ChannelArguments == AclChannelArguments.AllPatterns;
        const int first = 1;
        for (int i = first; i <= last && i < args.Count; i++)
            if (!selector.AllowsChannel(args[i], patterns))
                return new AclRefusal(AclDenial.Channel, Encoding.UTF8.GetString(args[i]));
        return null;
    }
}
