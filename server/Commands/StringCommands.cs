using System.Buffers.Text;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// String commands: values stored as raw bytes in the key's entry block; counters are kept as
/// their decimal text, as Redis shows them to clients.
/// </summary>
public static unsafe class StringCommands
{
    /// <summary>Growth beyond this adds a fixed step instead of doubling (Redis's SDS_MAX_PREALLOC).</summary>
    private const int MaxPreallocation = 1024 * 1024;

    public static void Register(CommandTable table)
    {
        const string g = "string";
        CommandArgument key = new("key", "key");
        CommandArgument value = new("value", "string");

        table.Add(new CommandSpec("get", 2, ReadOnly | Fast, 1, 1, 1, Get, g, "Returns the string value of a key.")
        { Arguments = [key] });
        table.Add(new CommandSpec("set", -3, Write | DenyOom, 1, 1, 1, Set, g,
            "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.")
        {
            Arguments = [key, value,
                new("condition", "oneof", Optional: true, Children: [new("nx", "pure-token", Token: "NX"), new("xx", "pure-token", Token: "XX")]),
                new("get", "pure-token", Optional: true, Token: "GET"),
                new("expiration", "oneof", Optional: true, Children: [
                    new("seconds", "integer", Token: "EX"), new("milliseconds", "integer", Token: "PX"),
                    new("unix-time-seconds", "unix-time", Token: "EXAT"), new("unix-time-milliseconds", "unix-time", Token: "PXAT"),
                    new("keepttl", "pure-token", Token: "KEEPTTL")])],
        });
        table.Add(new CommandSpec("setnx", 3, Write | DenyOom | Fast, 1, 1, 1, SetNx, g,
            "Set the string value of a key only when the key doesn't exist.")
        { Arguments = [key, value] });
        table.Add(new CommandSpec("setex", 4, Write | DenyOom, 1, 1, 1, SetEx, g,
            "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", "2.0.0")
        { Arguments = [key, new("seconds", "integer"), value] });
        table.Add(new CommandSpec("psetex", 4, Write | DenyOom, 1, 1, 1, PSetEx, g,
            "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", "2.6.0")
        { Arguments = [key, new("milliseconds", "integer"), value] });
        table.Add(new CommandSpec("getset", 3, Write | DenyOom | Fast, 1, 1, 1, GetSet, g,
            "Returns the previous string value of a key after setting it to a new value.")
        { Arguments = [key, value] });
        table.Add(new CommandSpec("getdel", 2, Write | Fast, 1, 1, 1, GetDel, g,
            "Returns the string value of a key after deleting the key.", "6.2.0")
        { Arguments = [key] });
        table.Add(new CommandSpec("getex", -2, Write | Fast, 1, 1, 1, GetEx, g,
            "Returns the string value of a key after setting its expiration time.", "6.2.0")
        {
            Arguments = [key,
                new("expiration", "oneof", Optional: true, Children: [
                    new("seconds", "integer", Token: "EX"), new("milliseconds", "integer", Token: "PX"),
                    new("unix-time-seconds", "unix-time", Token: "EXAT"), new("unix-time-milliseconds", "unix-time", Token: "PXAT"),
                    new("persist", "pure-token", Token: "PERSIST")])],
        });
        table.Add(new CommandSpec("mget", -2, ReadOnly | Fast, 1, -1, 1, MGet, g,
            "Atomically returns the string values of one or more keys.", "1.0.0",
            "O(N) where N is the number of keys to retrieve.")
        { Arguments = [new("key", "key", Multiple: true)] });
        table.Add(new CommandSpec("mset", -3, Write | DenyOom, 1, -1, 2, MSet, g,
            "Atomically creates or modifies the string values of one or more keys.", "1.0.1",
            "O(N) where N is the number of keys to set.")
        { Arguments = [new("data", "block", Multiple: true, Children: [key, value])] });
        table.Add(new CommandSpec("msetnx", -3, Write | DenyOom, 1, -1, 2, MSetNx, g,
            "Atomically modifies the string values of one or more keys only when all keys don't exist.", "1.0.1",
            "O(N) where N is the number of keys to set.")
        { Arguments = [new("data", "block", Multiple: true, Children: [key, value])] });
        table.Add(new CommandSpec("append", 3, Write | DenyOom | Fast, 1, 1, 1, Append, g,
            "Appends a string to the value of a key. Creates the key if it doesn't exist.", "2.0.0",
            "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.")
        { Arguments = [key, value] });
        table.Add(new CommandSpec("strlen", 2, ReadOnly | Fast, 1, 1, 1, StrLen, g,
            "Returns the length of a string value.", "2.2.0")
        { Arguments = [key] });
        const string rangeComplexity = "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.";
        table.Add(new CommandSpec("getrange", 4, ReadOnly, 1, 1, 1, GetRange, g,
            "Returns a substring of the string stored at a key.", "2.4.0", rangeComplexity)
        { Arguments = [key, new("start", "integer"), new("end", "integer")] });
        table.Add(new CommandSpec("substr", 4, ReadOnly, 1, 1, 1, GetRange, g,
            "Returns a substring from a string value.", "1.0.0", rangeComplexity)
        { Arguments = [key, new("start", "integer"), new("end", "integer")] });
        table.Add(new CommandSpec("setrange", 4, Write | DenyOom, 1, 1, 1, SetRange, g,
            "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", "2.2.0",
            "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.")
        { Arguments = [key, new("offset", "integer"), value] });
        table.Add(new CommandSpec("incr", 2, Write | DenyOom | Fast, 1, 1, 1, Incr, g,
            "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.")
        { Arguments = [key] });
        table.Add(new CommandSpec("decr", 2, Write | DenyOom | Fast, 1, 1, 1, Decr, g,
            "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.")
        { Arguments = [key] });
        table.Add(new CommandSpec("incrby", 3, Write | DenyOom | Fast, 1, 1, 1, IncrBy, g,
            "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.")
        { Arguments = [key, new("increment", "integer")] });
        table.Add(new CommandSpec("decrby", 3, Write | DenyOom | Fast, 1, 1, 1, DecrBy, g,
            "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.")
        { Arguments = [key, new("decrement", "integer")] });
        table.Add(new CommandSpec("incrbyfloat", 3, Write | DenyOom | Fast, 1, 1, 1, IncrByFloat, g,
            "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", "2.6.0")
        { Arguments = [key, new("increment", "double")] });
        table.Add(new CommandSpec("lcs", -3, ReadOnly, 1, 2, 1, LongestCommonSubsequence.Lcs, g,
            "Finds the longest common substring.", "7.0.0",
            "O(N*M) where N and M are the lengths of s1 and s2, respectively")
        {
            Arguments = [new("key1", "key"), new("key2", "key"),
                new("len", "pure-token", Optional: true, Token: "LEN"),
                new("idx", "pure-token", Optional: true, Token: "IDX"),
                new("min-match-len", "integer", Optional: true, Token: "MINMATCHLEN"),
                new("withmatchlen", "pure-token", Optional: true, Token: "WITHMATCHLEN")],
        });
    }

    // ---- lookups -------------------------------------------------------------------------

    /// <summary>
    /// The string at key 1 for commands that answer with its value (GETDEL, GETEX); when there is
    /// none the reply is already written (null, or WRONGTYPE) and the result is null.
    /// </summary>
    private static Entry** ExistingString(ref CommandContext c, out Database db)
    {
        Entry** slot = c.LookupForRead(c.Arg(1), out db, out _);
        if (slot == null)
            c.Reply.Null();
        else if ((*slot)->Type != Engine.ValueType.String)
        {
            c.WrongType();
            return null;
        }
        return slot;
    }

    /// <summary>A write lookup (Redis's lookupKeyWrite): touches the key but counts no hit or miss.</summary>
    private static Entry** WriteSlot(ref CommandContext c, ReadOnlySpan<byte> key, out Database db, out uint hash)
    {
        db = c.Database(key, out hash);
        Entry** slot = db.LookupSlot(key, hash, c.ExpireClockMs);
        if (slot != null)
            c.Touch(*slot);
        return slot;
    }

    // ---- GET / SET family ----------------------------------------------------------------

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
        if (!StringSetOptions.TryParse(ref c, 3, forSet: true, out var flags, out int expireIndex)
            || !StringSetOptions.TryResolveExpire(ref c, flags, expireIndex, out long expireAt))
            return;

        ReadOnlySpan<byte> key = c.Arg(1);
        bool get = (flags & StringSetFlags.Get) != 0;
        Database db;
        uint hash;
        Entry** slot = get ? c.LookupForRead(key, out db, out hash) : WriteSlot(ref c, key, out db, out hash);
        if (get)
        {
            if (slot == null)
            {
                c.Reply.Null();
            }
            else if ((*slot)->Type != Engine.ValueType.String)
            {
                c.WrongType();
                return;
            }
            else
            {
                // Written now, before the block may be reused for the new value.
                c.Reply.Bulk(Entry.ValueOf(*slot));
            }
        }
        if (((flags & StringSetFlags.Nx) != 0 && slot != null) || ((flags & StringSetFlags.Xx) != 0 && slot == null))
        {
            if (!get)
                c.Reply.Null();
            c.LogNothing();
            return;
        }
        if (slot == null)
            db.AddString(key, hash, c.Arg(2), expireAt);
        else
            db.OverwriteString(slot, c.Arg(2), (flags & StringSetFlags.KeepTtl) != 0 ? -1 : expireAt);
        if (expireAt > 0)
            c.Effects.Defer(Engine.KeyspaceEventTypes.Generic, "expire"u8, key, c.Client.DatabaseIndex);
        if (!get)
            c.Reply.Ok();
        // A relative expiry is logged as the absolute time it resolved to, as Redis does, so a
        // replay later never extends the key's life.
        if (expireAt != 0 && (flags & StringSetFlags.PxAt) == 0)
            LogSetWithDeadline(ref c, key, c.Arg(2), expireAt);
    }

    /// <summary>Logs SET key value PXAT deadline (the effective form of SET EX, SETEX, PSETEX).</summary>
    private static void LogSetWithDeadline(ref CommandContext c, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long deadline)
    {
        if (c.LogAs(5) is not { } log)
            return;
        log.Argument("SET"u8);
        log.Argument(key);
        log.Argument(value);
        log.Argument("PXAT"u8);
        log.Argument(deadline);
        log.EndCommand();
    }

    private static void SetNx(ref CommandContext c)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        Entry** slot = WriteSlot(ref c, key, out Database db, out uint hash);
        if (slot != null)
        {
            c.Reply.Integer(0);
            c.LogNothing();
            return;
        }
        db.AddString(key, hash, c.Arg(2), 0);
        c.Reply.Integer(1);
    }

    private static void SetEx(ref CommandContext c) => SetWithExpire(ref c, ExpireOption.Unit.Seconds);

    private static void PSetEx(ref CommandContext c) => SetWithExpire(ref c, ExpireOption.Unit.Milliseconds);

    private static void SetWithExpire(ref CommandContext c, ExpireOption.Unit unit)
    {
        if (!ExpireOption.TryResolve(ref c, 2, unit, out long expireAt))
            return;
        ReadOnlySpan<byte> key = c.Arg(1);
        Database db = c.Database(key, out uint hash);
        db.SetString(key, hash, c.Arg(3), expireAt, c.ExpireClockMs);
        c.Reply.Ok();
        LogSetWithDeadline(ref c, key, c.Arg(3), expireAt);
    }

    private static void GetSet(ref CommandContext c)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        Entry** slot = c.LookupForRead(key, out Database db, out uint hash);
        if (slot == null)
        {
            c.Reply.Null();
            db.AddString(key, hash, c.Arg(2), 0);
            return;
        }
        if ((*slot)->Type != Engine.ValueType.String)
        {
            c.WrongType();
            return;
        }
        c.Reply.Bulk(Entry.ValueOf(*slot));
        db.OverwriteString(slot, c.Arg(2), 0);
    }

    private static void GetDel(ref CommandContext c)
    {
        Entry** slot = ExistingString(ref c, out Database db);
        if (slot == null)
            return;
        c.Reply.Bulk(Entry.ValueOf(*slot));
        db.RemoveAt(slot);
    }

    private static void GetEx(ref CommandContext c)
    {
        if (!StringSetOptions.TryParse(ref c, 2, forSet: false, out var flags, out int expireIndex))
            return;
        Entry** slot = ExistingString(ref c, out Database db);
        if (slot == null)
            return;
        // Redis checks the time only once the key is known to exist and hold a string.
        if (!StringSetOptions.TryResolveExpire(ref c, flags, expireIndex, out long expireAt))
            return;
        c.Reply.Bulk(Entry.ValueOf(*slot));
        // Logged as what it did: GETEX without options is a read.
        if ((flags & (StringSetFlags.ExAt | StringSetFlags.PxAt)) != 0 && expireAt <= c.ExpireClockMs)
        {
            db.RemoveAt(slot); // an absolute time already past deletes the key, as Redis does
            LogKeyCommand(ref c, "DEL"u8, c.Arg(1));
        }
        else if (expireAt != 0)
        {
            db.SetExpire(*slot, expireAt);
            if (c.LogAs(3) is { } log)
            {
                log.Argument("PEXPIREAT"u8);
                log.Argument(c.Arg(1));
                log.Argument(expireAt);
                log.EndCommand();
            }
        }
        else if ((flags & StringSetFlags.Persist) != 0)
        {
            db.SetExpire(*slot, 0);
            LogKeyCommand(ref c, "PERSIST"u8, c.Arg(1));
        }
        else
            c.LogNothing();
    }

    /// <summary>Logs a two-argument command on one key (DEL key, PERSIST key).</summary>
    internal static void LogKeyCommand(ref CommandContext c, ReadOnlySpan<byte> command, ReadOnlySpan<byte> key)
    {
        if (c.LogAs(2) is not { } log)
            return;
        log.Argument(command);
        log.Argument(key);
        log.EndCommand();
    }

    // ---- multi-key -----------------------------------------------------------------------

    private static void MGet(ref CommandContext c)
    {
        c.Reply.ArrayHeader(c.ArgCount - 1);
        for (int i = 1; i < c.ArgCount; i++)
        {
            Entry* e = c.Read(c.Arg(i), out _);
            if (e == null || e->Type != Engine.ValueType.String)
                c.Reply.Null();
            else
                c.Reply.Bulk(Entry.ValueOf(e));
        }
    }

    private static void MSet(ref CommandContext c)
    {
        if (!HasKeyValuePairs(ref c))
            return;
        SetAllPairs(ref c);
        c.Reply.Ok();
    }

    private static void MSetNx(ref CommandContext c)
    {
        if (!HasKeyValuePairs(ref c))
            return;
        for (int i = 1; i < c.ArgCount; i += 2)
        {
            if (WriteSlot(ref c, c.Arg(i), out _, out _) != null)
            {
                c.Reply.Integer(0);
                c.LogNothing();
                return;
            }
        }
        SetAllPairs(ref c);
        c.Reply.Integer(1);
    }

    /// <summary>Odd argument counts pass the arity check (-3) but leave a key without a value.</summary>
    private static bool HasKeyValuePairs(ref CommandContext c)
    {
        if (c.ArgCount % 2 == 1)
            return true;
        c.Error(Errors.WrongArity(c.Spec.FullName));
        return false;
    }

    /// <summary>Sets every key/value pair in order (a repeated key ends with its last value), clearing TTLs.</summary>
    private static void SetAllPairs(ref CommandContext c)
    {
        for (int i = 1; i < c.ArgCount; i += 2)
        {
            ReadOnlySpan<byte> key = c.Arg(i);
            Database db = c.Database(key, out uint hash);
            db.SetString(key, hash, c.Arg(i + 1), 0, c.ExpireClockMs);
        }
    }

    // ---- APPEND / STRLEN / GETRANGE / SETRANGE ---------------------------------------------

    private static void Append(ref CommandContext c)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        ReadOnlySpan<byte> tail = c.Arg(2);
        Entry** slot = WriteSlot(ref c, key, out Database db, out uint hash);
        if (slot == null)
        {
            db.AddString(key, hash, tail, 0);
            c.Reply.Integer(tail.Length);
            return;
        }
        Entry* e = *slot;
        if (e->Type != Engine.ValueType.String)
        {
            c.WrongType();
            return;
        }
        int oldLength = e->ValueLength;
        if (!CheckStringLength(ref c, key.Length, oldLength, tail.Length))
            return;
        e = GrowString(db, slot, oldLength + tail.Length);
        tail.CopyTo(Entry.ValueOf(e)[oldLength..]);
        e->Flags |= EntryFlags.RawString;
        c.Reply.Integer(e->ValueLength);
    }

    private static void StrLen(ref CommandContext c)
    {
        Entry* e = c.Read(c.Arg(1), out _);
        if (e == null)
            c.Reply.Integer(0);
        else if (e->Type != Engine.ValueType.String)
            c.WrongType();
        else
            c.Reply.Integer(e->ValueLength);
    }

    private static void GetRange(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long start) || !c.TryInt64(3, out long end))
            return;
        Entry* e = c.Read(c.Arg(1), out _);
        if (e == null)
        {
            c.Reply.Bulk(ReadOnlySpan<byte>.Empty);
            return;
        }
        if (e->Type != Engine.ValueType.String)
        {
            c.WrongType();
            return;
        }
        Span<byte> value = Entry.ValueOf(e);
        long length = value.Length;
        // Both ends negative and reversed: empty, before clamping could turn them into a range.
        if (start < 0 && end < 0 && start > end)
        {
            c.Reply.Bulk(ReadOnlySpan<byte>.Empty);
            return;
        }
        if (start < 0) start += length;
        if (end < 0) end += length;
        if (start < 0) start = 0;
        if (end < 0) end = 0;
        if (end >= length) end = length - 1;
        if (start > end || length == 0)
            c.Reply.Bulk(ReadOnlySpan<byte>.Empty);
        else
            c.Reply.Bulk(value.Slice((int)start, (int)(end - start + 1)));
    }

    private static void SetRange(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long offset))
            return;
        if (offset < 0)
        {
            c.Error(Errors.OffsetOutOfRange);
            return;
        }
        ReadOnlySpan<byte> key = c.Arg(1);
        ReadOnlySpan<byte> patch = c.Arg(3);
        Entry** slot = WriteSlot(ref c, key, out Database db, out uint hash);
        if (slot == null)
        {
            // Nothing to write creates nothing.
            if (patch.IsEmpty)
            {
                c.Reply.Integer(0);
                return;
            }
            if (!CheckStringLength(ref c, key.Length, offset, patch.Length))
                return;
            Entry* created = EntryStore.Allocate(key, (int)offset + patch.Length, Engine.ValueType.String);
            Span<byte> bytes = Entry.ValueOf(created);
            bytes[..(int)offset].Clear();
            patch.CopyTo(bytes[(int)offset..]);
            created->Flags |= EntryFlags.RawString;
            db.Add(created, hash);
            c.Reply.Integer(created->ValueLength);
            return;
        }
        Entry* e = *slot;
        if (e->Type != Engine.ValueType.String)
        {
            c.WrongType();
            return;
        }
        if (patch.IsEmpty)
        {
            c.Reply.Integer(e->ValueLength);
            return;
        }
        if (!CheckStringLength(ref c, key.Length, offset, patch.Length))
            return;
        int oldLength = e->ValueLength;
        int end = (int)offset + patch.Length;
        if (end > oldLength)
        {
            e = GrowString(db, slot, end);
            if (offset > oldLength)
                Entry.ValueOf(e)[oldLength..(int)offset].Clear();
        }
        patch.CopyTo(Entry.ValueOf(e)[(int)offset..]);
        e->Flags |= EntryFlags.RawString;
        c.Reply.Integer(e->ValueLength);
    }

    /// <summary>
    /// A string may grow to proto-max-bulk-len, and its entry (header, key and value in one block)
    /// must also fit the allocator's largest block; otherwise Redis's size error.
    /// </summary>
    private static bool CheckStringLength(ref CommandContext c, int keyLength, long size, long append)
    {
        long limit = Math.Min(c.Server.Config.Limits.ProtoMaxBulkLength, TrackedAllocator.MaxBlockBytes - Entry.HeaderSize - keyLength);
        if (size <= limit && append <= limit - size)
            return true;
        c.Error(Errors.StringTooLong);
        return false;
    }

    /// <summary>
    /// Lengthens a string value, keeping its bytes. When the block must move it is given room to
    /// spare (double, or +1MB past 1MB, like Redis's sds), so repeated APPENDs stay amortized O(1).
    /// </summary>
    internal static Entry* GrowString(Database db, Entry** slot, int length)
    {
        Entry* e = *slot;
        if ((long)Entry.HeaderSize + e->KeyLength + length <= (long)TrackedAllocator.UsableSize((byte*)e))
        {
            e->ValueLength = length;
            return e;
        }
        long capacity = length < MaxPreallocation ? 2L * length : (long)length + MaxPreallocation;
        long largest = TrackedAllocator.MaxBlockBytes - Entry.HeaderSize - e->KeyLength;
        capacity = Math.Max(length, Math.Min(capacity, largest));
        e = db.ResizeString(slot, (int)capacity);
        e->ValueLength = length;
        return e;
    }

    // ---- counters ------------------------------------------------------------------------

    private static void Incr(ref CommandContext c) => IncrementBy(ref c, 1);

    private static void Decr(ref CommandContext c) => IncrementBy(ref c, -1);

    private static void IncrBy(ref CommandContext c)
    {
        if (c.TryInt64(2, out long increment))
            IncrementBy(ref c, increment);
    }

    private static void DecrBy(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long decrement))
            return;
        // -long.MinValue does not exist.
        if (decrement == long.MinValue)
        {
            c.Error(Errors.DecrementOverflow);
            return;
        }
        IncrementBy(ref c, -decrement);
    }

    private static void IncrementBy(ref CommandContext c, long increment)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        Entry** slot = WriteSlot(ref c, key, out Database db, out uint hash);
        long value = 0;
        if (slot != null)
        {
            Entry* e = *slot;
            if (e->Type != Engine.ValueType.String)
            {
                c.WrongType();
                return;
            }
            if (!NumberFormat.TryParseInt64(Entry.ValueOf(e), out value))
            {
                c.Error(Errors.NotInteger);
                return;
            }
        }
        if ((increment < 0 && value < 0 && increment < long.MinValue - value)
            || (increment > 0 && value > 0 && increment > long.MaxValue - value))
        {
            c.Error(Errors.Overflow);
            return;
        }
        value += increment;
        Span<byte> digits = stackalloc byte[20];
        Utf8Formatter.TryFormat(value, digits, out int length);
        if (slot == null)
            db.AddString(key, hash, digits[..length], 0);
        else
            db.OverwriteString(slot, digits[..length], -1);
        c.Reply.Integer(value);
    }

    private static void IncrByFloat(ref CommandContext c)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        Entry** slot = WriteSlot(ref c, key, out Database db, out uint hash);
        LongDouble value = LongDouble.Zero;
        if (slot != null)
        {
            if ((*slot)->Type != Engine.ValueType.String)
            {
                c.WrongType();
                return;
            }
            if (!LongDouble.TryParse(Entry.ValueOf(*slot), out value))
            {
                c.Error(Errors.NotFloat);
                return;
            }
        }
        if (!LongDouble.TryParse(c.Arg(2), out LongDouble increment))
        {
            c.Error(Errors.NotFloat);
            return;
        }
        LongDouble sum = LongDouble.Add(value, increment);
        if (!sum.IsFinite)
        {
            c.Error(Errors.FloatIncrementNotFinite);
            return;
        }
        byte[] text = sum.ToHumanFriendlyText();
        if (slot == null)
            db.AddString(key, hash, text, 0);
        else
            db.OverwriteString(slot, text, -1);
        c.Reply.Bulk(text);
        // Logged as the result, as Redis does: replaying the addition could round differently.
        if (c.LogAs(4) is { } log)
        {
            log.Argument("SET"u8);
            log.Argument(key);
            log.Argument(text);
            log.Argument("KEEPTTL"u8);
            log.EndCommand();
        }
    }
}
