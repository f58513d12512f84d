using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>Hash commands: field-value pairs in a listpack or a <see cref="FieldTable"/>, through <see cref="Hashes"/>.</summary>
public static unsafe class HashCommands
{
    private const string HashValueNotInteger = "ERR hash value is not an integer";
    private const string HashValueNotFloat = "ERR hash value is not a float";

    public static void Register(CommandTable table)
    {
        const string g = "hash";
        CommandArgument key = new("key", "key");
        CommandArgument field = new("field", "string");
        CommandArgument fields = new("field", "string", Multiple: true);
        CommandArgument pairs = new("data", "block", Multiple: true, Children: [field, new("value", "string")]);

        table.Add(new CommandSpec("hset", -4, Write | DenyOom | Fast, 1, 1, 1, HSet, g,
            "Creates or modifies the value of a field in a hash.", "2.0.0", "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.")
        { Arguments = [key, pairs] });
        table.Add(new CommandSpec("hmset", -4, Write | DenyOom | Fast, 1, 1, 1, HMSet, g,
            "Sets the values of multiple fields.", "2.0.0", "O(N) where N is the number of fields being set.")
        { Arguments = [key, pairs] });
        table.Add(new CommandSpec("hsetnx", 4, Write | DenyOom | Fast, 1, 1, 1, HSetNx, g,
            "Sets the value of a field in a hash only when the field doesn't exist.", "2.0.0")
        { Arguments = [key, field, new("value", "string")] });
        table.Add(new CommandSpec("hget", 3, ReadOnly | Fast, 1, 1, 1, HGet, g, "Returns the value of a field in a hash.", "2.0.0")
        { Arguments = [key, field] });
        table.Add(new CommandSpec("hmget", -3, ReadOnly | Fast, 1, 1, 1, HMGet, g,
            "Returns the values of all fields in a hash.", "2.0.0", "O(N) where N is the number of fields being requested.")
        { Arguments = [key, fields] });
        table.Add(new CommandSpec("hdel", -3, Write | Fast, 1, 1, 1, HDel, g,
            "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", "2.0.0", "O(N) where N is the number of fields to be removed.")
        { Arguments = [key, fields] });
        table.Add(new CommandSpec("hexists", 3, ReadOnly | Fast, 1, 1, 1, HExists, g, "Determines whether a field exists in a hash.", "2.0.0")
        { Arguments = [key, field] });
        table.Add(new CommandSpec("hlen", 2, ReadOnly | Fast, 1, 1, 1, HLen, g, "Returns the number of fields in a hash.", "2.0.0")
        { Arguments = [key] });
        table.Add(new CommandSpec("hstrlen", 3, ReadOnly | Fast, 1, 1, 1, HStrLen, g, "Returns the length of the value of a field.", "3.2.0")
        { Arguments = [key, field] });
        table.Add(new CommandSpec("hkeys", 2, ReadOnly, 1, 1, 1, HKeys, g, "Returns all fields in a hash.", "2.0.0", "O(N) where N is the size of the hash.")
        { Arguments = [key] });
        table.Add(new CommandSpec("hvals", 2, ReadOnly, 1, 1, 1, HVals, g, "Returns all values in a hash.", "2.0.0", "O(N) where N is the size of the hash.")
        { Arguments = [key] });
        table.Add(new CommandSpec("hgetall", 2, ReadOnly, 1, 1, 1, HGetAll, g, "Returns all fields and values in a hash.", "2.0.0", "O(N) where N is the size of the hash.")
        { Arguments = [key] });
        table.Add(new CommandSpec("hincrby", 4, Write | DenyOom | Fast, 1, 1, 1, HIncrBy, g,
            "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", "2.0.0")
        { Arguments = [key, field, new("increment", "integer")] });
        table.Add(new CommandSpec("hincrbyfloat", 4, Write | DenyOom | Fast, 1, 1, 1, HIncrByFloat, g,
            "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", "2.6.0")
        { Arguments = [key, field, new("increment", "double")] });
        table.Add(new CommandSpec("hrandfield", -2, ReadOnly, 1, 1, 1, HRandField, g,
            "Returns one or more random fields from a hash.", "6.2.0", "O(N) where N is the number of fields returned")
        {
            Arguments = [key, new("options", "block", Optional: true, Children: [
                new("count", "integer"), new("withvalues", "pure-token", Optional: true, Token: "WITHVALUES")])],
        });
        table.Add(new CommandSpec("hscan", -3, ReadOnly, 1, 1, 1, HScan, g,
            "Iterates over fields and values of a hash.", "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.")
        {
            Arguments = [key, new("cursor", "integer"),
                new("pattern", "pattern", Optional: true, Token: "MATCH"),
                new("count", "integer", Optional: true, Token: "COUNT"),
                new("novalues", "pure-token", Optional: true, Token: "NOVALUES")],
        });
    }

    private static bool PairsComplete(ref CommandContext c)
    {
        if ((c.ArgCount - 2) % 2 == 0)
            return true;
        c.Error(Errors.WrongArity(c.Spec.FullName));
        return false;
    }

    /// <summary>Redis's hashTypeTryConversion over arguments <paramref name="first"/> to <paramref name="last"/>: a listpack too small for them becomes a table before any is written.</summary>
    private static void PrepareWrite(ref CommandContext c, Entry* e, int first, int last, in HashLimits limits)
    {
        if (!Hashes.IsListpack(e))
            return;
        long longest = 0, total = 0;
        for (int i = first; i <= last; i++)
        {
            int length = c.Arg(i).Length;
            longest = Math.Max(longest, length);
            total += length;
        }
        Hashes.PrepareWrite(e, longest, total, limits);
    }

    private static int SetPairs(ref CommandContext c, Entry* e)
    {
        var limits = HashLimits.Of(c.Server.Config);
        PrepareWrite(ref c, e, 2, c.ArgCount - 1, limits);
        int added = 0;
        for (int i = 2; i < c.ArgCount; i += 2)
            if (Hashes.Set(e, c.Arg(i), c.Arg(i + 1), limits))
                added++;
        return added;
    }

    private static void HSet(ref CommandContext c)
    {
        if (!PairsComplete(ref c))
            return;
        Entry* e = TypedKeys.WriteOrCreate(ref c, c.Arg(1), Engine.ValueType.Hash);
        if (e != null)
            c.Reply.Integer(SetPairs(ref c, e));
    }

    private static void HMSet(ref CommandContext c)
    {
        if (!PairsComplete(ref c))
            return;
        Entry* e = TypedKeys.WriteOrCreate(ref c, c.Arg(1), Engine.ValueType.Hash);
        if (e == null)
            return;
        SetPairs(ref c, e);
        c.Reply.Ok();
    }

    private static void HSetNx(ref CommandContext c)
    {
        Entry* e = TypedKeys.WriteOrCreate(ref c, c.Arg(1), Engine.ValueType.Hash);
        if (e == null)
            return;
        ReadOnlySpan<byte> field = c.Arg(2);
        if (Hashes.Exists(e, field))
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        // As Redis: the lengths are checked only once the field is known to be new.
        var limits = HashLimits.Of(c.Server.Config);
        PrepareWrite(ref c, e, 2, 3, limits);
        Hashes.Set(e, field, c.Arg(3), limits);
        c.Reply.Integer(1);
    }

    private static void HGet(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Hash, out bool failed);
        if (failed)
            return;
        ReplyValue(ref c, e, c.Arg(2));
    }

    /// <summary>The field's value, or null when the hash (null: missing) lacks it.</summary>
    private static void ReplyValue(ref CommandContext c, Entry* e, ReadOnlySpan<byte> field)
    {
        Span<byte> scratch = stackalloc byte[20];
        if (e != null && Hashes.TryGet(e, field, scratch, out ReadOnlySpan<byte> value))
            c.Reply.Bulk(value);
        else
            c.Reply.Null();
    }

    private static void HMGet(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Hash, out bool failed);
        if (failed)
            return;
        c.Reply.ArrayHeader(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
            ReplyValue(ref c, e, c.Arg(i));
    }

    private static void HDel(ref CommandContext c)
    {
        Entry* e = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.Hash, out bool failed);
        if (failed)
            return;
        int removed = 0;
        if (e != null)
        {
            for (int i = 2; i < c.ArgCount && Hashes.Count(e) > 0; i++)
                if (Hashes.Delete(e, c.Arg(i)))
                    removed++;
            TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
        }
        if (removed == 0)
            c.LogNothing();
        c.Reply.Integer(removed);
    }

    private static void HExists(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Hash, out bool failed);
        if (!failed)
            c.Reply.Integer(e != null && Hashes.Exists(e, c.Arg(2)) ? 1 : 0);
    }

    private static void HLen(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Hash, out bool failed);
        if (!failed)
            c.Reply.Integer(e == null ? 0 : Hashes.Count(e));
    }

    private static void HStrLen(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Hash, out bool failed);
        if (failed)
            return;
        long length = e == null ? -1 : Hashes.ValueLength(e, c.Arg(2));
        c.Reply.Integer(Math.Max(length, 0));
    }

    [Flags]
    private enum Parts { Fields = 1, Values = 2, Both = 3 }

    private static void HKeys(ref CommandContext c) => ReplyAll(ref c, Parts.Fields);
    private static void HVals(ref CommandContext c) => ReplyAll(ref c, Parts.Values);
    private static void HGetAll(ref CommandContext c) => ReplyAll(ref c, Parts.Both);

    /// <summary>HKEYS, HVALS, HGETALL: a listpack hash in insertion order, as Redis replies it.</summary>
    private static void ReplyAll(ref CommandContext c, Parts parts)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Hash, out bool failed);
        if (failed)
            return;
        long count = e == null ? 0 : Hashes.Count(e);
        if (parts == Parts.Both)
            c.Reply.MapHeader(count);
        else
            c.Reply.ArrayHeader(count);
        if (e == null)
            return;
        var pairs = Hashes.Pairs(e);
        while (pairs.MoveNext())
        {
            if ((parts & Parts.Fields) != 0)
                c.Reply.Bulk(pairs.Field);
            if ((parts & Parts.Values) != 0)
                c.Reply.Bulk(pairs.Value);
        }
    }

    private static void HIncrBy(ref CommandContext c)
    {
        if (!c.TryInt64(3, out long increment))
            return;
        Entry* e = TypedKeys.WriteOrCreate(ref c, c.Arg(1), Engine.ValueType.Hash);
        if (e == null)
            return;
        Span<byte> scratch = stackalloc byte[20];
        long value = 0;
        if (Hashes.TryGet(e, c.Arg(2), scratch, out ReadOnlySpan<byte> current) && !NumberFormat.TryParseInt64(current, out value))
        {
            c.Error(HashValueNotInteger);
            return;
        }
        if ((increment < 0 && value < 0 && increment < long.MinValue - value) || (increment > 0 && value > 0 && increment > long.MaxValue - value))
        {
            c.Error(Errors.Overflow);
            TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
            return;
        }
        value += increment;
        Span<byte> digits = stackalloc byte[24];
        System.Buffers.Text.Utf8Formatter.TryFormat(value, digits, out int length);
        Hashes.Set(e, c.Arg(2), digits[..length], HashLimits.Of(c.Server.Config));
        c.Reply.Integer(value);
    }

    private static void HIncrByFloat(ref CommandContext c)
    {
        if (!LongDouble.TryParse(c.Arg(3), out LongDouble increment))
        {
            c.Error(Errors.NotFloat);
            return;
        }
        Entry* e = TypedKeys.WriteOrCreate(ref c, c.Arg(1), Engine.ValueType.Hash);
        if (e == null)
            return;
        Span<byte> scratch = stackalloc byte[20];
        LongDouble value = LongDouble.Zero;
        if (Hashes.TryGet(e, c.Arg(2), scratch, out ReadOnlySpan<byte> current) && !LongDouble.TryParse(current, out value))
        {
            c.Error(HashValueNotFloat);
            return;
        }
        LongDouble sum = LongDouble.Add(value, increment);
        if (!sum.IsFinite)
        {
            c.Error(Errors.FloatIncrementNotFinite);
            TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
            return;
        }
        byte[] text = sum.ToHumanFriendlyText();
        Hashes.Set(e, c.Arg(2), text, HashLimits.Of(c.Server.Config));
        c.Reply.Bulk(text);
        // Logged as the result, as Redis does: replaying the addition could round differently.
        if (c.LogAs(4) is { } log)
        {
            log.Argument("HSET"u8);
            log.Argument(c.Arg(1));
            log.Argument(c.Arg(2));
            log.Argument(text);
            log.EndCommand();
        }
    }

    /// <summary>
    /// HRANDFIELD: without a count one field (or null); with a positive count that many distinct
    /// fields at most; with a negative count exactly that many, repeats allowed.
    /// </summary>
    private static void HRandField(ref CommandContext c)
    {
        if (!RandomFields.TryOptions(ref c, "withvalues"u8, out bool hasCount, out long count, out bool withValues))
            return;
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Hash, out bool failed);
        if (failed)
            return;
        var shape = withValues ? RandomFields.Shape.FieldAndValue : RandomFields.Shape.Field;
        if (e != null && Hashes.IsListpack(e))
        {
            RandomFields.ReplyListpackPairs(ref c, Values.Packed(e), hasCount, count, shape);
            return;
        }
        if (!hasCount)
        {
            FieldNode* node = e == null ? null : Values.Hash(e)->Random(Random.Shared);
            if (node == null)
                c.Reply.Null();
            else
                c.Reply.Bulk(FieldNode.FieldOf(node));
            return;
        }
        RandomFields.Reply(ref c, e == null ? null : Values.Hash(e), count, shape);
    }

    private static void HScan(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.Hash, out bool failed);
        if (failed)
            return;
        if (e != null && Hashes.IsListpack(e))
            ElementScan.RunListpack(ref c, Values.Packed(e), ElementScan.Kind.Hash);
        else
            ElementScan.Run(ref c, e == null ? null : Values.Hash(e), ElementScan.Kind.Hash);
    }
}
