using Diagnostics.Server.Engine;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>String commands: values stored as raw bytes in the key's entry block.</summary>
public static unsafe class StringCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "string";
        table.Add(new CommandSpec("get", 2, ReadOnly | Fast, 1, 1, 1, Get, g, "Returns the string value of a key.")
        { Arguments = [new("key", "key")] });
        table.Add(new CommandSpec("set", -3, Write | DenyOom, 1, 1, 1, Set, g,
            "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.")
        {
            Arguments = [new("key", "key"), new("value", "string"),
                new("condition", "oneof", Optional: true, Children: [new("nx", "pure-token", Token: "NX"), new("xx", "pure-token", Token: "XX")]),
                new("get", "pure-token", Optional: true, Token: "GET"),
                new("expiration", "oneof", Optional: true, Children: [
                    new("seconds", "integer", Token: "EX"), new("milliseconds", "integer", Token: "PX"),
                    new("unix-time-seconds", "unix-time", Token: "EXAT"), new("unix-time-milliseconds", "unix-time", Token: "PXAT"),
                    new("keepttl", "pure-token", Token: "KEEPTTL")])],
        });
    }

    private static void Get(ref CommandContext c)
    {
        Entry* e = c.Read(c.Arg(1), out _);
        if (e == null)
            c.Reply.Null();
        else if (e->Type != Engine.ValueType.String)
            c.WrongType();
        else
            c.Reply.Bulk(Entry.ValueOf(e));
    }

    private static void Set(ref CommandContext c)
    {
        bool nx = false, xx = false, get = false, keepTtl = false;
        long expireAt = 0;
        for (int i = 3; i < c.ArgCount; i++)
        {
            if (c.ArgIs(i, "nx"u8) && !xx) nx = true;
            else if (c.ArgIs(i, "xx"u8) && !nx) xx = true;
            else if (c.ArgIs(i, "get"u8)) get = true;
            else if (c.ArgIs(i, "keepttl"u8) && expireAt == 0) keepTtl = true;
            else if (!keepTtl && expireAt == 0 && i + 1 < c.ArgCount && ExpireOption.TryParseUnit(c.Arg(i), out var unit))
            {
                if (!ExpireOption.TryResolve(ref c, i + 1, unit, out expireAt))
                    return;
                i++;
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }

        ReadOnlySpan<byte> key = c.Arg(1);
        Database db = c.Database(key, out uint hash);
        Entry** slot = db.LookupSlot(key, hash, c.NowMs);
        Entry* old = slot == null ? null : *slot;
        if (get && old != null && old->Type != Engine.ValueType.String)
        {
            c.WrongType();
            return;
        }
        bool apply = !(nx && old != null) && !(xx && old == null);
        if (get)
        {
            if (old == null) c.Reply.Null();
            else c.Reply.Bulk(Entry.ValueOf(old));
        }
        if (!apply)
        {
            if (!get)
                c.Reply.Null();
            return;
        }
        if (old == null)
            db.AddString(key, hash, c.Arg(2), expireAt);
        else
            db.OverwriteString(slot, c.Arg(2), keepTtl ? -1 : expireAt);
        if (!get)
            c.Reply.Ok();
    }
}
