using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Commands;

/// <summary>
/// LMPOP, ZMPOP and their blocking forms BLMPOP and BZMPOP, which differ only in where numkeys
/// is (argument 1, or 2 after the timeout): "numkeys key... WHERE [COUNT count]", pop up to count
/// from the first key that holds something, reply [key, elements], logged as the pop it was.
/// </summary>
internal static unsafe class MultiPop
{
    /// <summary>Parses numkeys, the end (LEFT/RIGHT or MIN/MAX; <paramref name="first"/> is true for LEFT or MIN) and COUNT, with Redis's errors.</summary>
    public static bool TryOptions(ref CommandContext c, int numKeysIndex, Engine.ValueType type, out int numKeys, out bool first, out long count)
    {
        first = false;
        count = 1;
        if (!c.TryNumKeys(numKeysIndex, out numKeys, Errors.Syntax))
            return false;
        bool list = type == Engine.ValueType.List;
        int next = numKeysIndex + 1 + numKeys;
        if (next >= c.ArgCount || !((first = c.ArgIs(next, list ? "left"u8 : "min"u8)) || c.ArgIs(next, list ? "right"u8 : "max"u8)))
        {
            c.SyntaxError();
            return false;
        }
        if (next + 1 == c.ArgCount)
            return true;
        if (next + 3 != c.ArgCount || !c.ArgIs(next + 1, "count"u8))
        {
            c.SyntaxError();
            return false;
        }
        if (!c.TryInt64(next + 2, out count))
            return false;
        if (count <= 0)
        {
            c.Error("ERR count should be greater than 0");
            return false;
        }
        return true;
    }

    /// <summary>
    /// Pops from the first of the command's keys that exists, replying; false (nothing written)
    /// when none does, or after WRONGTYPE (<paramref name="failed"/>).
    /// </summary>
    public static bool TryPopFirst(ref CommandContext c, int numKeysIndex, int numKeys, Engine.ValueType type, out bool failed)
    {
        failed = false;
        for (int k = numKeysIndex + 1; k <= numKeysIndex + numKeys; k++)
        {
            Entry* e = TypedKeys.Write(ref c, c.Arg(k), type, out failed);
            if (failed)
                return false;
            if (e == null)
                continue;
            Pop(ref c, numKeysIndex, c.Arg(k), e);
            return true;
        }
        return false;
    }

    /// <summary>Pops from <paramref name="key"/> (known to hold a value of the command's type) and replies.</summary>
    public static void Pop(ref CommandContext c, int numKeysIndex, ReadOnlySpan<byte> key, Entry* e)
    {
        TryOptions(ref c, numKeysIndex, e->Type, out _, out bool first, out long count);
        long n = Math.Min(count, Values.Length(e));
        c.Reply.ArrayHeader(2);
        c.Reply.Bulk(key);
        c.Reply.ArrayHeader(n);
        ReadOnlySpan<byte> eventName;
        if (e->Type == Engine.ValueType.List)
        {
            for (long i = 0; i < n; i++)
                ListCommands.PopOne(ref c, Values.List(e), head: first);
            eventName = first ? "lpop"u8 : "rpop"u8;
            TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.List, eventName, key);
        }
        else
        {
            for (long i = 0; i < n; i++)
                SortedSetCommands.PopOne(ref c, e, max: !first, nested: true);
            eventName = first ? "zpopmin"u8 : "zpopmax"u8;
            TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.SortedSet, eventName, key);
        }
        TypedKeys.DeleteIfEmpty(ref c, key, e);
        // Propagated as the pop it was (LPOP key n, ZPOPMIN key n), as Redis does.
        if (c.LogAs(3) is { } log)
        {
            Span<byte> name = stackalloc byte[eventName.Length];
            System.Text.Ascii.ToUpper(eventName, name, out _);
            log.Argument(name);
            log.Argument(key);
            log.Argument(n);
            log.EndCommand();
        }
    }
}
