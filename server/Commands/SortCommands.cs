using System.Buffers;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// SORT and SORT_RO over a list, set or sorted set, as Redis 7.0 sorts: numerically (or ALPHA,
/// byte order), by the element or by the value of keys a BY pattern names, with LIMIT, GET
/// patterns (keys, hash fields with "->", "#" for the element), ASC/DESC and STORE. A call whose
/// patterns name keys holds every shard (<see cref="CommandSpec.ReadsPatternKeys"/>): those keys
/// may live in any of them, and the sort must see one consistent keyspace.
/// </summary>
public static unsafe class SortCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "generic";
        const string complexity = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).";
        CommandArgument by = new("by-pattern", "pattern", Optional: true, Token: "BY");
        CommandArgument limit = new("limit", "block", Optional: true, Token: "LIMIT", Children: [new("offset", "integer"), new("count", "integer")]);
        CommandArgument get = new("get-pattern", "pattern", Optional: true, Multiple: true, Token: "GET");
        CommandArgument order = new("order", "oneof", Optional: true, Children: [new("asc", "pure-token", Token: "ASC"), new("desc", "pure-token", Token: "DESC")]);
        CommandArgument sorting = new("sorting", "pure-token", Optional: true, Token: "ALPHA");

        table.Add(new CommandSpec("sort", -2, Write | DenyOom, 1, 1, 1, Sort, g,
            "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", "1.0.0", complexity)
        {
            StoreKey = StoreKeyOf,
            ReadsPatternKeys = NamesKeys,
            Arguments = [new("key", "key"), by, limit, get, order, sorting, new("destination", "key", Optional: true, Token: "STORE")],
        });
        table.Add(new CommandSpec("sort_ro", -2, ReadOnly, 1, 1, 1, SortReadOnly, g,
            "Returns the sorted elements of a list, a set, or a sorted set.", "7.0.0", complexity)
        {
            ReadsPatternKeys = NamesKeys,
            Arguments = [new("key", "key"), by, limit, get, order, sorting],
        });
    }

    private static void Sort(ref CommandContext c) => Run(ref c, readOnly: false);

    private static void SortReadOnly(ref CommandContext c) => Run(ref c, readOnly: true);

    /// <summary>The options of one call, parsed as Redis's sortCommandGeneric reads them (the last STORE and BY win).</summary>
    private struct SortOptions
    {
        public bool Descending, Alpha, DontSort;
        public long LimitStart, LimitCount;
        public int By;       // argument index of the BY pattern, 0 for none
        public int Store;    // argument index of the destination, 0 for none
        public int GetCount; // GET patterns, found again by walking the arguments
    }

    /// <summary>
    /// Walks the options from argument 2 as Redis reads them, left to right; routing calls it too,
    /// so it replies nothing. False at the first bad option: <paramref name="badLimit"/> is then the
    /// index of a LIMIT number that is not an integer (Redis's integer error), or 0 for an unknown
    /// option (a syntax error).
    /// </summary>
    private static bool TryParse(ArgList args, bool readOnly, out SortOptions options, out int badLimit)
    {
        options = default;
        options.LimitCount = -1;
        badLimit = 0;
        for (int j = 2; j < args.Count; j++)
        {
            int left = args.Count - j - 1;
            ReadOnlySpan<byte> arg = args[j];
            if (NumberFormat.EqualsIgnoreCase(arg, "asc"u8)) options.Descending = false;
            else if (NumberFormat.EqualsIgnoreCase(arg, "desc"u8)) options.Descending = true;
            else if (NumberFormat.EqualsIgnoreCase(arg, "alpha"u8)) options.Alpha = true;
            else if (NumberFormat.EqualsIgnoreCase(arg, "limit"u8) && left >= 2)
            {
                if (!NumberFormat.TryParseInt64(args[j + 1], out options.LimitStart))
                    badLimit = j + 1;
                else if (!NumberFormat.TryParseInt64(args[j + 2], out options.LimitCount))
                    badLimit = j + 2;
                if (badLimit != 0)
                    return false;
                j += 2;
            }
            else if (!readOnly && NumberFormat.EqualsIgnoreCase(arg, "store"u8) && left >= 1) options.Store = ++j;
            else if (NumberFormat.EqualsIgnoreCase(arg, "by"u8) && left >= 1)
            {
                options.By = ++j;
                // BY without a '*' names no key: the elements keep their order.
                options.DontSort = args[j].IndexOf((byte)'*') < 0;
            }
            else if (NumberFormat.EqualsIgnoreCase(arg, "get"u8) && left >= 1)
            {
                options.GetCount++;
                j++;
            }
            else
                return false;
        }
        return true;
    }

    private static int StoreKeyOf(ArgList args) => TryParse(args, readOnly: false, out var options, out _) ? options.Store : 0;

    /// <summary>True when a BY pattern with '*' or a GET pattern other than "#" may name keys.</summary>
    private static bool NamesKeys(ArgList args)
    {
        for (int j = 2; j + 1 < args.Count; j++)
        {
            if (NumberFormat.EqualsIgnoreCase(args[j], "by"u8) && args[j + 1].IndexOf((byte)'*') >= 0)
                return true;
            if (NumberFormat.EqualsIgnoreCase(args[j], "get"u8) && !args[j + 1].SequenceEqual("#"u8))
                return true;
        }
        return false;
    }

    /// <summary>One element being sorted: its bytes, and what it is compared by.</summary>
    private struct SortItem
    {
        public byte* Element;
        public int ElementLength;
        public double Score;
        /// <summary>The BY value compared with ALPHA, when <see cref="HasBy"/> (its key exists).</summary>
        public byte* By;
        public int ByLength;
        public bool HasBy;

        public readonly ReadOnlySpan<byte> ElementBytes => new(Element, ElementLength);
    }

    private static void Run(ref CommandContext c, bool readOnly)
    {
        ArgList args = c.Args;
        if (!TryParse(args, readOnly, out SortOptions options, out int badLimit))
        {
            if (badLimit == 0)
                c.SyntaxError();
            else
                c.TryInt64(badLimit, out _); // replies Redis's integer error
            return;
        }
        Entry* source = c.Read(c.Arg(1), out _);
        if (source != null && source->Type is not (Engine.ValueType.List or Engine.ValueType.Set or Engine.ValueType.SortedSet))
        {
            c.WrongType();
            return;
        }
        // Redis 7.0 converts a listpack sorted set to its skip list before sorting it (even SORT_RO), and it stays one.
        if (source != null && source->Type == Engine.ValueType.SortedSet && source->Form == Engine.ValueForm.Listpack)
            SortedSets.ConvertToSkipList(source);
        Engine.ValueType type = source == null ? Engine.ValueType.List : source->Type;
        bool byPattern = options.By > 0 && !options.DontSort;
        // A set has no order of its own: stored, or read by a script, without sorting, it is
        // sorted ALPHA so the result (and what the script does with it) is deterministic.
        if (options.DontSort && type == Engine.ValueType.Set && (options.Store > 0 || c.Client is Scripting.ScriptClient))
        {
            options.DontSort = false;
            options.Alpha = true;
            byPattern = false;
        }
        long length = source == null ? 0 : Values.Length(source);
        long start = options.LimitStart < 0 ? 0 : options.LimitStart;
        long end = options.LimitCount < 0 ? length - 1 : start + options.LimitCount - 1;
        if (start >= length)
        {
            start = length - 1;
            end = length - 2;
        }
        if (end >= length)
            end = length - 1;

        // Lists and sorted sets kept in their own order load only the range LIMIT asks for.
        bool direct = options.DontSort && type != Engine.ValueType.Set;
        long count = direct ? Math.Max(0, end - start + 1) : length;
        SortItem[] items = ArrayPool<SortItem>.Shared.Rent((int)Math.Max(count, 1));
        byte[]? keyBuffer = null;
        byte[]? integerTexts = null;
        byte* memberText = null;
        try
        {
            int loaded = source == null ? 0 : Load(source, items, direct, start, count, options.Descending, ref integerTexts, ref memberText);
            if (direct)
            {
                end -= start;
                start = 0;
            }
            if (!options.DontSort)
            {
                if (!Score(ref c, items.AsSpan(0, loaded), options, byPattern, ref keyBuffer))
                {
                    c.Error("ERR One or more scores can't be converted into double");
                    return;
                }
                items.AsSpan(0, loaded).Sort(new SortComparer(options.Alpha, byPattern, options.Descending));
            }
            if (options.Store == 0)
            {
                c.LogNothing();
                Reply(ref c, items, start, end, options.GetCount, ref keyBuffer);
            }
            else
                Store(ref c, options.Store, items, start, end, options.GetCount, ref keyBuffer);
        }
        finally
        {
            ArrayPool<SortItem>.Shared.Return(items);
            GC.KeepAlive(integerTexts); // items point into it until here
            Memory.TrackedAllocator.Free(memberText);
            if (keyBuffer is not null)
                ArrayPool<byte>.Shared.Return(keyBuffer);
        }
    }

    /// <summary>
    /// Fills <paramref name="items"/> with the elements; returns how many. Elements with no text
    /// of their own get one that outlives the load: a list's integer elements in
    /// <paramref name="integerTexts"/> (pinned, allocated on the first one, kept alive by the
    /// caller), a packed set's members in <paramref name="memberText"/> (a block the caller frees).
    /// </summary>
    private static int Load(Entry* source, SortItem[] items, bool direct, long start, long count, bool descending, ref byte[]? integerTexts, ref byte* memberText)
    {
        int n = 0;
        switch (source->Type)
        {
            case Engine.ValueType.List:
            {
                ListValue* list = Values.List(source);
                if (count == 0)
                    break;
                long first = !direct ? 0 : descending ? list->Count - start - 1 : start;
                var iterator = list->From(first, forward: !direct || !descending);
                int textUsed = 0;
                for (long i = 0; i < count && iterator.Next(out var element); i++)
                {
                    if (!element.IsInteger)
                    {
                        Put(items, ref n, element.Span);
                        continue;
                    }
                    integerTexts ??= GC.AllocateUninitializedArray<byte>((int)Math.Min(count * 20, int.MaxValue), pinned: true);
                    ReadOnlySpan<byte> text = element.AsBytes(integerTexts.AsSpan(textUsed));
                    textUsed += text.Length;
                    Put(items, ref n, text);
                }
                break;
            }
            case Engine.ValueType.Set when source->Form == ValueForm.Structure:
                foreach (FieldNode* node in *Values.Set(source))
                    Put(items, ref n, FieldNode.FieldOf(node));
                break;
            case Engine.ValueType.Set:
            {
                long bytes = 0;
                foreach (ReadOnlySpan<byte> member in Sets.Members(source))
                    bytes += member.Length;
                memberText = Memory.TrackedAllocator.Alloc((nuint)Math.Max(bytes, 1));
                byte* at = memberText;
                foreach (ReadOnlySpan<byte> member in Sets.Members(source))
                {
                    member.CopyTo(new Span<byte>(at, member.Length));
                    Put(items, ref n, new ReadOnlySpan<byte>(at, member.Length));
                    at += member.Length;
                }
                break;
            }
            default:
            {
                var set = SortedSetView.Of(source);
                Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
                if (direct)
                {
                    var at = count == 0 ? default : set.AtRank(descending ? set.Count - 1 - start : start);
                    for (long i = 0; i < count && !at.IsEnd; i++)
                    {
                        Put(items, ref n, at.Member(scratch));
                        at = at.Step(descending);
                    }
                }
                else
                    for (var at = set.First; !at.IsEnd; at = at.Next)
                        Put(items, ref n, at.Member(scratch));
                break;
            }
        }
        return n;
    }

    private static void Put(SortItem[] items, ref int n, ReadOnlySpan<byte> element)
    {
        fixed (byte* p = element) // native memory: the pointer stays valid while the shard is held
            items[n++] = new SortItem { Element = p, ElementLength = element.Length };
    }

    /// <summary>Gives each element what it is compared by; false when a numeric value is not a number.</summary>
    private static bool Score(ref CommandContext c, Span<SortItem> items, in SortOptions options, bool byPattern, ref byte[]? keyBuffer)
    {
        bool ok = true;
        for (int i = 0; i < items.Length; i++)
        {
            ref SortItem item = ref items[i];
            ReadOnlySpan<byte> value;
            if (byPattern)
            {
                if (!TryLookup(ref c, c.Arg(options.By), item.ElementBytes, ref keyBuffer, out value))
                    continue;
            }
            else
                value = item.ElementBytes;
            if (options.Alpha)
            {
                if (byPattern)
                    fixed (byte* p = value)
                    {
                        item.By = p;
                        item.ByLength = value.Length;
                        item.HasBy = true;
                    }
            }
            else if (!TryParseScore(value, out item.Score))
                ok = false;
        }
        return ok;
    }

    /// <summary>
    /// A score as C's strtod reads it, which Redis uses here: leading spaces allowed, nothing after
    /// the number, an empty value reads 0; NaN and values out of a double's normal range refused.
    /// </summary>
    internal static bool TryParseScore(ReadOnlySpan<byte> text, out double score)
    {
        score = 0;
        int i = 0;
        while (i < text.Length && text[i] is (byte)' ' or (byte)'\t' or (byte)'\n' or (byte)'\v' or (byte)'\f' or (byte)'\r')
            i++;
        if (i == text.Length)
            return i == 0; // "" is 0; spaces alone are not a number
        text = text[i..];
        if (!NumberFormat.TryParseDouble(text, out score))
            return false;
        if (double.IsInfinity(score))
            return IsInfinityLiteral(text);
        // strtod reports ERANGE for results below the normal range (Redis then refuses them).
        return score == 0 ? !HasNonZeroDigit(text) : Math.Abs(score) >= SmallestNormal;
    }

    /// <summary>The smallest positive normal double (DBL_MIN).</summary>
    private const double SmallestNormal = 2.2250738585072014E-308;

    private static bool IsInfinityLiteral(ReadOnlySpan<byte> text)
    {
        if (text.Length > 0 && text[0] is (byte)'+' or (byte)'-')
            text = text[1..];
        return NumberFormat.EqualsIgnoreCase(text, "inf"u8) || NumberFormat.EqualsIgnoreCase(text, "infinity"u8);
    }

    private static bool HasNonZeroDigit(ReadOnlySpan<byte> text)
    {
        foreach (byte b in text)
        {
            if (b is (byte)'e' or (byte)'E')
                return false;
            if (b is >= (byte)'1' and <= (byte)'9')
                return true;
        }
        return false;
    }

    /// <summary>Redis's order: numbers, ties by the elements' bytes; ALPHA by bytes (missing BY values first).</summary>
    private readonly struct SortComparer(bool alpha, bool byPattern, bool descending) : IComparer<SortItem>
    {
        public int Compare(SortItem a, SortItem b)
        {
            int cmp;
            if (!alpha)
                cmp = a.Score > b.Score ? 1 : a.Score < b.Score ? -1 : Sign(a.ElementBytes.SequenceCompareTo(b.ElementBytes));
            else if (byPattern)
            {
                if (!a.HasBy || !b.HasBy)
                    cmp = a.HasBy == b.HasBy ? 0 : a.HasBy ? 1 : -1;
                else
                    cmp = Sign(new ReadOnlySpan<byte>(a.By, a.ByLength).SequenceCompareTo(new ReadOnlySpan<byte>(b.By, b.ByLength)));
            }
            else
                cmp = Sign(a.ElementBytes.SequenceCompareTo(b.ElementBytes));
            return descending ? -cmp : cmp;
        }

        private static int Sign(int value) => value > 0 ? 1 : value < 0 ? -1 : 0;
    }

    private static void Reply(ref CommandContext c, SortItem[] items, long start, long end, int getCount, ref byte[]? keyBuffer)
    {
        long rows = Math.Max(0, end - start + 1);
        c.Reply.ArrayHeader(getCount == 0 ? rows : rows * getCount);
        for (long i = start; i <= end; i++)
        {
            ReadOnlySpan<byte> element = items[i].ElementBytes;
            if (getCount == 0)
            {
                c.Reply.Bulk(element);
                continue;
            }
            for (int j = 2; j + 1 < c.ArgCount; j++)
            {
                if (!IsGet(ref c, ref j))
                    continue;
                if (TryLookup(ref c, c.Arg(j), element, ref keyBuffer, out ReadOnlySpan<byte> value))
                    c.Reply.Bulk(value);
                else
                    c.Reply.Null();
            }
        }
    }

    /// <summary>
    /// STORE: the result as a list at the destination (GET values missing as empty strings),
    /// replacing what was there; logged as that list, so a replay does not depend on the order
    /// a set or hash is walked in.
    /// </summary>
    private static void Store(ref CommandContext c, int destinationIndex, SortItem[] items, long start, long end, int getCount, ref byte[]? keyBuffer)
    {
        ReadOnlySpan<byte> destination = c.Arg(destinationIndex);
        // Redis 7.0's SORT creates the list with quicklist's defaults (8 KB nodes, no compression),
        // not list-max-listpack-size: so does this, so its nodes (and DUMP) match.
        ListValue* list = ListValue.Create();
        for (long i = start; i <= end; i++)
        {
            ReadOnlySpan<byte> element = items[i].ElementBytes;
            if (getCount == 0)
            {
                list->PushTail(element);
                continue;
            }
            for (int j = 2; j + 1 < c.ArgCount; j++)
                if (IsGet(ref c, ref j))
                    list->PushTail(TryLookup(ref c, c.Arg(j), element, ref keyBuffer, out ReadOnlySpan<byte> value) ? value : default);
        }
        long stored = list->Count;
        Database db = c.Database(destination, out uint hash);
        bool existed = db.Lookup(destination, hash, c.ExpireClockMs) != null;
        TypedKeys.Store(ref c, destination, Engine.ValueType.List, list, stored);
        if (stored > 0)
        {
            TypedKeys.Notify(ref c, KeyspaceEventTypes.List, "sortstore"u8, destination);
            LogStored(ref c, destination, db, hash);
        }
        else if (existed)
        {
            TypedKeys.Notify(ref c, KeyspaceEventTypes.Generic, "del"u8, destination);
            if (c.LogAs(2) is { } log)
            {
                log.Argument("DEL"u8);
                log.Argument(destination);
                log.EndCommand();
            }
        }
        else
            c.LogNothing();
        c.Reply.Integer(stored);
    }

    private static void LogStored(ref CommandContext c, ReadOnlySpan<byte> destination, Database db, uint hash)
    {
        if (c.LogAs(2) is not { } log)
            return;
        log.Argument("DEL"u8);
        log.Argument(destination);
        log.EndCommand();
        ListValue* list = Values.List(db.Lookup(destination, hash, c.ExpireClockMs));
        log = c.LogAs(2 + list->Count)!;
        log.Argument("RPUSH"u8);
        log.Argument(destination);
        Span<byte> scratch = stackalloc byte[24];
        var iterator = list->From(0, forward: true);
        while (iterator.Next(out var element))
            log.Argument(element.AsBytes(scratch));
        log.EndCommand();
    }

    /// <summary>True when argument <paramref name="j"/> is a GET option; then <paramref name="j"/> points at its pattern. Other options are skipped.</summary>
    private static bool IsGet(ref CommandContext c, ref int j)
    {
        if (c.ArgIs(j, "get"u8))
        {
            j++;
            return true;
        }
        if (c.ArgIs(j, "limit"u8))
            j += 2;
        else if (c.ArgIs(j, "store"u8) || c.ArgIs(j, "by"u8))
            j++;
        return false;
    }

    /// <summary>
    /// Redis's lookupKeyByPattern: "#" is the element itself; otherwise the first '*' is replaced by
    /// the element and the key read as a string, or, with "->field" after the '*', the field of a
    /// hash. False when the key, the field or a '*' is missing, or the key holds another type.
    /// </summary>
    private static bool TryLookup(scoped ref CommandContext c, ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> element, scoped ref byte[]? buffer, out ReadOnlySpan<byte> value)
    {
        value = default;
        if (pattern.SequenceEqual("#"u8))
        {
            value = element;
            return true;
        }
        int star = pattern.IndexOf((byte)'*');
        if (star < 0)
            return false;
        ReadOnlySpan<byte> field = default;
        int arrow = pattern[(star + 1)..].IndexOf("->"u8);
        bool hasField = arrow >= 0 && star + 1 + arrow + 2 < pattern.Length;
        ReadOnlySpan<byte> suffix = pattern[(star + 1)..];
        if (hasField)
        {
            field = pattern[(star + 1 + arrow + 2)..];
            suffix = pattern[(star + 1)..(star + 1 + arrow)];
        }
        int length = star + element.Length + suffix.Length;
        if (buffer is null || buffer.Length < length)
        {
            if (buffer is not null)
                ArrayPool<byte>.Shared.Return(buffer);
            buffer = ArrayPool<byte>.Shared.Rent(Math.Max(length, 256));
        }
        pattern[..star].CopyTo(buffer);
        element.CopyTo(buffer.AsSpan(star));
        suffix.CopyTo(buffer.AsSpan(star + element.Length));
        Entry* e = c.Read(buffer.AsSpan(0, length), out _);
        if (e == null)
            return false;
        if (!hasField)
        {
            if (e->Type != Engine.ValueType.String)
                return false;
            value = Entry.ValueOf(e);
            return true;
        }
        if (e->Type != Engine.ValueType.Hash)
            return false;
        // The key is read: its buffer (at least 256 bytes) takes a listpack integer's text.
        return Hashes.TryGet(e, field, buffer, out value);
    }
}
