using Diagnostics.Server.Engine;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Key expiry: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX XX GT LT), TTL, PTTL, EXPIRETIME,
/// PEXPIRETIME and PERSIST. Times are absolute Unix milliseconds in the entry; a time already in
/// the past deletes the key at once, as Redis does.
/// </summary>
public static unsafe class ExpireCommands
{
    private const string NxWithOthers = "ERR NX and XX, GT or LT options at the same time are not compatible";
    private const string GtWithLt = "ERR GT and LT options at the same time are not compatible";

    public static void Register(CommandTable table)
    {
        const string g = "generic";
        CommandArgument condition = new("condition", "oneof", Optional: true, Children: [
            new("nx", "pure-token", Token: "NX"), new("xx", "pure-token", Token: "XX"),
            new("gt", "pure-token", Token: "GT"), new("lt", "pure-token", Token: "LT")]);
        CommandArgument[] key = [new("key", "key")];

        table.Add(new CommandSpec("expire", -3, Write | Fast, 1, 1, 1, Expire, g, "Sets the expiration time of a key in seconds.")
        { Arguments = [new("key", "key"), new("seconds", "integer"), condition] });
        table.Add(new CommandSpec("pexpire", -3, Write | Fast, 1, 1, 1, PExpire, g, "Sets the expiration time of a key in milliseconds.", "2.6.0")
        { Arguments = [new("key", "key"), new("milliseconds", "integer"), condition] });
        table.Add(new CommandSpec("expireat", -3, Write | Fast, 1, 1, 1, ExpireAt, g, "Sets the expiration time of a key to a Unix timestamp.", "1.2.0")
        { Arguments = [new("key", "key"), new("unix-time-seconds", "unix-time"), condition] });
        table.Add(new CommandSpec("pexpireat", -3, Write | Fast, 1, 1, 1, PExpireAt, g, "Sets the expiration time of a key to a Unix milliseconds timestamp.", "2.6.0")
        { Arguments = [new("key", "key"), new("unix-time-milliseconds", "unix-time"), condition] });
        table.Add(new CommandSpec("ttl", 2, ReadOnly | Fast, 1, 1, 1, Ttl, g, "Returns the expiration time in seconds of a key.")
        { Arguments = key });
        table.Add(new CommandSpec("pttl", 2, ReadOnly | Fast, 1, 1, 1, PTtl, g, "Returns the expiration time in milliseconds of a key.", "2.6.0")
        { Arguments = key });
        table.Add(new CommandSpec("expiretime", 2, ReadOnly | Fast, 1, 1, 1, ExpireTime, g, "Returns the expiration time of a key as a Unix timestamp.", "7.0.0")
        { Arguments = key });
        table.Add(new CommandSpec("pexpiretime", 2, ReadOnly | Fast, 1, 1, 1, PExpireTime, g, "Returns the expiration time of a key as a Unix milliseconds timestamp.", "7.0.0")
        { Arguments = key });
        table.Add(new CommandSpec("persist", 2, Write | Fast, 1, 1, 1, Persist, g, "Removes the expiration time of a key.", "2.2.0")
        { Arguments = key });
    }

    private static void Expire(ref CommandContext c) => SetExpire(ref c, c.NowMs, seconds: true);
    private static void PExpire(ref CommandContext c) => SetExpire(ref c, c.NowMs, seconds: false);
    private static void ExpireAt(ref CommandContext c) => SetExpire(ref c, 0, seconds: true);
    private static void PExpireAt(ref CommandContext c) => SetExpire(ref c, 0, seconds: false);

    /// <summary>Redis's expireGenericCommand: options first, then the time, then the key.</summary>
    private static void SetExpire(ref CommandContext c, long baseTime, bool seconds)
    {
        bool nx = false, xx = false, gt = false, lt = false;
        for (int i = 3; i < c.ArgCount; i++)
        {
            if (c.ArgIs(i, "nx"u8)) nx = true;
            else if (c.ArgIs(i, "xx"u8)) xx = true;
            else if (c.ArgIs(i, "gt"u8)) gt = true;
            else if (c.ArgIs(i, "lt"u8)) lt = true;
            else
            {
                c.Error($"ERR Unsupported option {c.ArgString(i)}");
                return;
            }
        }
        if (nx && (xx || gt || lt))
        {
            c.Error(NxWithOthers);
            return;
        }
        if (gt && lt)
        {
            c.Error(GtWithLt);
            return;
        }

        if (!c.TryInt64(2, out long when))
            return;
        // Negative times are allowed (they delete the key); only overflow is refused.
        if (seconds)
        {
            if (when > long.MaxValue / 1000 || when < long.MinValue / 1000)
            {
                InvalidExpireTime(ref c);
                return;
            }
            when *= 1000;
        }
        if (when > long.MaxValue - baseTime)
        {
            InvalidExpireTime(ref c);
            return;
        }
        when += baseTime;

        ReadOnlySpan<byte> key = c.Arg(1);
        Database db = c.Database(key, out uint hash);
        Entry** slot = db.LookupSlot(key, hash, c.ExpireClockMs);
        if (slot == null)
        {
            c.Reply.Integer(0);
            c.LogNothing();
            return;
        }
        Entry* e = *slot;
        // A key without a TTL counts as expiring never: GT always fails on it, LT always passes.
        long current = e->HasExpiry ? db.ExpireAtOf(e) : -1;
        if ((nx && current != -1) || (xx && current == -1)
            || (gt && (current == -1 || when <= current)) || (lt && current != -1 && when >= current))
        {
            c.Reply.Integer(0);
            c.LogNothing();
            return;
        }
        // Every form is logged as its effect: a past time as DEL, a future one as PEXPIREAT, so a
        // replay later does not push the deadline out by the time that passed.
        if (when <= c.ExpireClockMs)
        {
            db.RemoveAt(slot);
            StringCommands.LogKeyCommand(ref c, "DEL"u8, key);
        }
        else
        {
            db.SetExpire(e, when);
            if (c.LogAs(3) is { } log)
            {
                log.Argument("PEXPIREAT"u8);
                log.Argument(key);
                log.Argument(when);
                log.EndCommand();
            }
        }
        c.Reply.Integer(1);
    }

    private static void InvalidExpireTime(ref CommandContext c) => c.Error(string.Format(Errors.InvalidExpire, c.Spec.FullName));

    private static void Ttl(ref CommandContext c) => ReplyTtl(ref c, milliseconds: false, absolute: false);
    private static void PTtl(ref CommandContext c) => ReplyTtl(ref c, milliseconds: true, absolute: false);
    private static void ExpireTime(ref CommandContext c) => ReplyTtl(ref c, milliseconds: false, absolute: true);
    private static void PExpireTime(ref CommandContext c) => ReplyTtl(ref c, milliseconds: true, absolute: true);

    /// <summary>-2 for a missing key, -1 for a key without TTL, else the remaining or absolute time (seconds rounded).</summary>
    private static void ReplyTtl(ref CommandContext c, bool milliseconds, bool absolute)
    {
        Entry* e = KeyLookup.Peek(ref c, c.Arg(1), out Database db);
        if (e == null)
        {
            c.Reply.Integer(-2);
            return;
        }
        if (!e->HasExpiry)
        {
            c.Reply.Integer(-1);
            return;
        }
        long expireAt = db.ExpireAtOf(e);
        long ms = Math.Max(0, absolute ? expireAt : expireAt - c.NowMs);
        // Redis rounds with (ms + 500) / 1000; written without the addition so a far-future time cannot overflow.
        c.Reply.Integer(milliseconds ? ms : ms / 1000 + (ms % 1000 >= 500 ? 1 : 0));
    }

    private static void Persist(ref CommandContext c)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        Database db = c.Database(key, out uint hash);
        Entry* e = db.Lookup(key, hash, c.ExpireClockMs);
        if (e == null || !e->HasExpiry)
        {
            c.Reply.Integer(0);
            c.LogNothing();
            return;
        }
        db.SetExpire(e, 0);
        c.Reply.Integer(1);
    }
}
