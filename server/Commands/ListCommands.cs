using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>List commands over a <see cref="ListValue"/>: pushes, pops, indexes, ranges and moves between lists.</summary>
public static unsafe class ListCommands
{
    /// <summary>Room for an integer element's text (20 digits and a sign).</summary>
    internal const int ElementScratch = 24;

    private const string CountNotPositive = "ERR value is out of range, must be positive";
    private const string IndexOutOfRange = "ERR index out of range";

    public static void Register(CommandTable table)
    {
        const string g = "list";
        CommandArgument key = new("key", "key");
        CommandArgument elements = new("element", "string", Multiple: true);
        CommandArgument count = new("count", "integer", Optional: true);
        CommandArgument whereFrom = new("wherefrom", "oneof", Children: [new("left", "pure-token", Token: "LEFT"), new("right", "pure-token", Token: "RIGHT")]);
        CommandArgument whereTo = new("whereto", "oneof", Children: [new("left", "pure-token", Token: "LEFT"), new("right", "pure-token", Token: "RIGHT")]);
        const string pushComplexity = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.";
        const string popComplexity = "O(N) where N is the number of elements returned";

        table.Add(new CommandSpec("lpush", -3, Write | DenyOom | Fast, 1, 1, 1, LPush, g,
            "Prepends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0", pushComplexity)
        { Arguments = [key, elements] });
        table.Add(new CommandSpec("rpush", -3, Write | DenyOom | Fast, 1, 1, 1, RPush, g,
            "Appends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0", pushComplexity)
        { Arguments = [key, elements] });
        table.Add(new CommandSpec("lpushx", -3, Write | DenyOom | Fast, 1, 1, 1, LPushX, g,
            "Prepends one or more elements to a list only when the list exists.", "2.2.0", pushComplexity)
        { Arguments = [key, elements] });
        table.Add(new CommandSpec("rpushx", -3, Write | DenyOom | Fast, 1, 1, 1, RPushX, g,
            "Appends an element to a list only when the list exists.", "2.2.0", pushComplexity)
        { Arguments = [key, elements] });
        table.Add(new CommandSpec("lpop", -2, Write | Fast, 1, 1, 1, LPop, g,
            "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", "1.0.0", popComplexity)
        { Arguments = [key, count] });
        table.Add(new CommandSpec("rpop", -2, Write | Fast, 1, 1, 1, RPop, g,
            "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", "1.0.0", popComplexity)
        { Arguments = [key, count] });
        table.Add(new CommandSpec("llen", 2, ReadOnly | Fast, 1, 1, 1, LLen, g, "Returns the length of a list.")
        { Arguments = [key] });
        table.Add(new CommandSpec("lrange", 4, ReadOnly, 1, 1, 1, LRange, g, "Returns a range of elements from a list.", "1.0.0",
            "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.")
        { Arguments = [key, new("start", "integer"), new("stop", "integer")] });
        table.Add(new CommandSpec("lindex", 3, ReadOnly, 1, 1, 1, LIndex, g, "Returns an element from a list by its index.", "1.0.0",
            "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).")
        { Arguments = [key, new("index", "integer")] });
        table.Add(new CommandSpec("lset", 4, Write | DenyOom, 1, 1, 1, LSet, g, "Sets the value of an element in a list by its index.", "1.0.0",
            "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).")
        { Arguments = [key, new("index", "integer"), new("element", "string")] });
        table.Add(new CommandSpec("linsert", 5, Write | DenyOom, 1, 1, 1, LInsert, g, "Inserts an element before or after another element in a list.", "2.2.0",
            "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).")
        {
            Arguments = [key, new("where", "oneof", Children: [new("before", "pure-token", Token: "BEFORE"), new("after", "pure-token", Token: "AFTER")]),
                new("pivot", "string"), new("element", "string")],
        });
        table.Add(new CommandSpec("lrem", 4, Write, 1, 1, 1, LRem, g, "Removes elements from a list. Deletes the list if the last element was removed.", "1.0.0",
            "O(N+M) where N is the length of the list and M is the number of elements removed.")
        { Arguments = [key, new("count", "integer"), new("element", "string")] });
        table.Add(new CommandSpec("ltrim", 4, Write, 1, 1, 1, LTrim, g, "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", "1.0.0",
            "O(N) where N is the number of elements to be removed by the operation.")
        { Arguments = [key, new("start", "integer"), new("stop", "integer")] });
        table.Add(new CommandSpec("lpos", -3, ReadOnly, 1, 1, 1, LPos, g, "Returns the index of matching elements in a list.", "6.0.6",
            "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.")
        {
            Arguments = [key, new("element", "string"), new("rank", "integer", Optional: true, Token: "RANK"),
                new("num-matches", "integer", Optional: true, Token: "COUNT"), new("len", "integer", Optional: true, Token: "MAXLEN")],
        });
        table.Add(new CommandSpec("lmove", 5, Write | DenyOom, 1, 2, 1, LMove, g,
            "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", "6.2.0")
        { Arguments = [new("source", "key"), new("destination", "key"), whereFrom, whereTo] });
        table.Add(new CommandSpec("rpoplpush", 3, Write | DenyOom, 1, 2, 1, RPopLPush, g,
            "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", "1.2.0")
        { Arguments = [new("source", "key"), new("destination", "key")] });
        table.Add(new CommandSpec("lmpop", -4, Write, 0, 0, 0, LMPop, g,
            "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", "7.0.0",
            "O(N+M) where N is the number of provided keys and M is the number of elements returned.")
        {
            KeyCountIndex = 1,
            Arguments = [new("numkeys", "integer"), new("key", "key", Multiple: true), whereFrom, new("count", "integer", Optional: true, Token: "COUNT")],
        });
    }

    // ---- push ----------------------------------------------------------------------------

    private static void LPush(ref CommandContext c) => Push(ref c, head: true, onlyExisting: false);
    private static void RPush(ref CommandContext c) => Push(ref c, head: false, onlyExisting: false);
    private static void LPushX(ref CommandContext c) => Push(ref c, head: true, onlyExisting: true);
    private static void RPushX(ref CommandContext c) => Push(ref c, head: false, onlyExisting: true);

    private static void Push(ref CommandContext c, bool head, bool onlyExisting)
    {
        Entry* e = TypedKeys.WriteOrCreate(ref c, c.Arg(1), Engine.ValueType.List, create: !onlyExisting, out bool failed);
        if (e == null)
        {
            if (!failed)
                c.Reply.Integer(0);
            return;
        }
        ListValue* list = Opened(ref c, e);
        for (int i = 2; i < c.ArgCount; i++)
        {
            if (head)
                list->PushHead(c.Arg(i));
            else
                list->PushTail(c.Arg(i));
        }
        c.Reply.Integer(list->Count);
    }

    /// <summary>
    /// The list of an entry about to be written. A list with no element is one just created
    /// (lists are deleted once empty), and takes the node limit and compress depth from the
    /// settings now, as Redis's quicklistSetOptions does when it creates a list.
    /// </summary>
    internal static ListValue* Opened(ref CommandContext c, Entry* e)
    {
        ListValue* list = Values.List(e);
        if (list->Count == 0)
            list->Configure(c.Server.Config.ListMaxListpackSize, c.Server.Config.ListCompressDepth);
        return list;
    }

    /// <summary>Replies with one element as a bulk string (an integer element as its digits).</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    internal static void ReplyElement(ref CommandContext c, in ListpackElement element)
    {
        if (element.IsInteger)
            c.Reply.BulkInteger(element.Integer);
        else
            c.Reply.Bulk(element.Span);
    }

    // ---- pop -----------------------------------------------------------------------------

    private static void LPop(ref CommandContext c) => Pop(ref c, head: true);
    private static void RPop(ref CommandContext c) => Pop(ref c, head: false);

    /// <summary>LPOP/RPOP key [count]: one element (or null) without a count; with one an array, null when the key is missing.</summary>
    private static void Pop(ref CommandContext c, bool head)
    {
        if (c.ArgCount > 3)
        {
            c.Error(Errors.WrongArity(c.Spec.FullName));
            return;
        }
        long count = 1;
        bool counted = c.ArgCount == 3;
        if (counted && !c.TryNonNegative(2, CountNotPositive, out count))
            return;
        Entry* e = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        if (e == null)
        {
            c.LogNothing();
            if (counted)
                c.Reply.NullArray();
            else
                c.Reply.Null();
            return;
        }
        ListValue* list = Values.List(e);
        if (counted)
        {
            long n = Math.Min(count, list->Count);
            c.Reply.ArrayHeader(n);
            if (n == 0)
                c.LogNothing();
            for (long i = 0; i < n; i++)
                PopOne(ref c, list, head);
        }
        else
        {
            PopOne(ref c, list, head);
        }
        TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
    }

    /// <summary>Replies with the head or tail element and removes it.</summary>
    internal static void PopOne(ref CommandContext c, ListValue* list, bool head)
    {
        if (head)
        {
            ReplyElement(ref c, list->Head);
            list->RemoveHead();
        }
        else
        {
            ReplyElement(ref c, list->Tail);
            list->RemoveTail();
        }
    }

    // ---- reads ---------------------------------------------------------------------------

    private static void LLen(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (!failed)
            c.Reply.Integer(e == null ? 0 : Values.List(e)->Count);
    }

    /// <summary>Clamps Redis's inclusive start/stop (negative from the end) to the list; false when the range is empty.</summary>
    internal static bool TryClamp(long start, long stop, long length, out long from, out long to)
    {
        if (start < 0) start = Math.Max(0, length + start);
        if (stop < 0) stop = length + stop;
        if (stop >= length) stop = length - 1;
        from = start;
        to = stop;
        return start <= stop && start < length;
    }

    private static void LRange(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long start) || !c.TryInt64(3, out long stop))
            return;
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        if (e == null || !TryClamp(start, stop, Values.List(e)->Count, out long from, out long to))
        {
            c.Reply.ArrayHeader(0);
            return;
        }
        ListValue* list = Values.List(e);
        c.Reply.ArrayHeader(to - from + 1);
        // From the nearer end, as Redis walks it; the reply is in head-to-tail order either way.
        var iterator = list->From(from, forward: true);
        for (long i = from; i <= to && iterator.Next(out var element); i++)
            ReplyElement(ref c, element);
    }

    /// <summary>A Redis index (negative from the end) as a position in the list, or -1 when outside it.</summary>
    private static long Position(long index, long length)
    {
        if (index < 0)
            index += length;
        return index < 0 || index >= length ? -1 : index;
    }

    private static void LIndex(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long index))
            return;
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        long position = e == null ? -1 : Position(index, Values.List(e)->Count);
        if (position < 0)
            c.Reply.Null();
        else
            ReplyElement(ref c, Values.List(e)->Get(position));
    }

    // ---- in-place writes -----------------------------------------------------------------

    private static void LSet(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long index))
            return;
        Entry* e = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        if (e == null)
        {
            c.Error(Errors.NoSuchKey);
            return;
        }
        ListValue* list = Values.List(e);
        long position = Position(index, list->Count);
        if (position < 0)
        {
            c.Error(IndexOutOfRange);
            return;
        }
        list->Set(position, c.Arg(3));
        c.Reply.Ok();
    }

    private static void LInsert(ref CommandContext c)
    {
        bool after;
        if (c.ArgIs(2, "after"u8))
            after = true;
        else if (c.ArgIs(2, "before"u8))
            after = false;
        else
        {
            c.SyntaxError();
            return;
        }
        Entry* e = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        if (e == null)
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        ListValue* list = Values.List(e);
        if (list->InsertBeside(c.Arg(3), c.Arg(4), after))
        {
            c.Reply.Integer(list->Count);
            return;
        }
        c.LogNothing();
        c.Reply.Integer(-1);
    }

    private static void LRem(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long count))
            return;
        Entry* e = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        int removed = 0;
        if (e != null)
        {
            removed = Values.List(e)->RemoveMatching(c.Arg(3), count);
            TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
        }
        if (removed == 0)
            c.LogNothing();
        c.Reply.Integer(removed);
    }

    private static void LTrim(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long start) || !c.TryInt64(3, out long stop))
            return;
        Entry* e = TypedKeys.Write(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        if (e != null)
        {
            ListValue* list = Values.List(e);
            if (TryClamp(start, stop, list->Count, out long from, out long to))
                list->Trim(from, to);
            else
                list->Trim(1, 0);
            TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
        }
        c.Reply.Ok();
    }

    /// <summary>LPOS key element [RANK rank] [COUNT num] [MAXLEN len].</summary>
    private static void LPos(ref CommandContext c)
    {
        long rank = 1, count = -1, maxLength = 0;
        for (int i = 3; i < c.ArgCount; i += 2)
        {
            if (i + 1 >= c.ArgCount)
            {
                c.SyntaxError();
                return;
            }
            if (c.ArgIs(i, "rank"u8))
            {
                if (!c.TryInt64(i + 1, out rank))
                    return;
                if (rank == 0)
                {
                    c.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list");
                    return;
                }
                if (rank == long.MinValue)
                {
                    c.Error("ERR value is out of range");
                    return;
                }
            }
            else if (c.ArgIs(i, "count"u8))
            {
                if (!c.TryNonNegative(i + 1, "ERR COUNT can't be negative", out count))
                    return;
            }
            else if (c.ArgIs(i, "maxlen"u8))
            {
                if (!c.TryNonNegative(i + 1, "ERR MAXLEN can't be negative", out maxLength))
                    return;
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        bool many = count >= 0;
        if (e == null)
        {
            if (many)
                c.Reply.ArrayHeader(0);
            else
                c.Reply.Null();
            return;
        }
        ListValue* list = Values.List(e);
        var matcher = new ListValue.Matcher(c.Arg(2));
        int length = list->Count;
        long limit = maxLength == 0 ? length : Math.Min(maxLength, length);
        long wanted = !many ? 1 : count == 0 ? long.MaxValue : count;
        long skip = Math.Abs(rank) - 1;
        // Matches are collected first, since their count precedes them in the reply (a rare command: a list is fine).
        var found = new List<long>();
        var iterator = list->From(rank > 0 ? 0 : length - 1, forward: rank > 0);
        for (long scanned = 0; scanned < limit && found.Count < wanted && iterator.Next(out var candidate); scanned++)
        {
            long index = rank > 0 ? scanned : length - 1 - scanned;
            if (!matcher.Matches(candidate))
                continue;
            if (skip > 0)
            {
                skip--;
                continue;
            }
            found.Add(index);
        }
        if (!many)
        {
            if (found.Count == 0)
                c.Reply.Null();
            else
                c.Reply.Integer(found[0]);
            return;
        }
        c.Reply.ArrayHeader(found.Count);
        foreach (long index in found)
            c.Reply.Integer(index);
    }

    // ---- moves between lists -------------------------------------------------------------

    internal static bool TryParseEnd(ref CommandContext c, int index, out bool head)
    {
        head = c.ArgIs(index, "left"u8);
        if (head || c.ArgIs(index, "right"u8))
            return true;
        c.SyntaxError();
        return false;
    }

    private static void LMove(ref CommandContext c)
    {
        if (!TryParseEnd(ref c, 3, out bool fromHead) || !TryParseEnd(ref c, 4, out bool toHead))
            return;
        Move(ref c, fromHead, toHead);
    }

    private static void RPopLPush(ref CommandContext c) => Move(ref c, fromHead: false, toHead: true);

    /// <summary>
    /// Pops from the source end and pushes to the destination end, replying with the element;
    /// null when the source is missing. Both types are checked before anything moves.
    /// </summary>
    internal static void Move(ref CommandContext c, bool fromHead, bool toHead, bool logAsLMove = false)
    {
        ReadOnlySpan<byte> source = c.Arg(1), destination = c.Arg(2);
        Entry* from = TypedKeys.Write(ref c, source, Engine.ValueType.List, out bool failed);
        if (failed)
            return;
        if (from == null)
        {
            c.LogNothing();
            c.Reply.Null();
            return;
        }
        if (TypedKeys.Write(ref c, destination, Engine.ValueType.List, out failed) == null && failed)
            return;
        ListValue* list = Values.List(from);
        Span<byte> scratch = stackalloc byte[ElementScratch];
        ReadOnlySpan<byte> element = (fromHead ? list->Head : list->Tail).AsBytes(scratch);
        c.Reply.Bulk(element);
        // Pushed before it is popped: the element's bytes live in the source list until then,
        // and the destination may be the source itself (a rotation).
        Entry* to = TypedKeys.WriteOrCreate(ref c, destination, Engine.ValueType.List);
        ListValue* target = Opened(ref c, to);
        // Redis announces the push to the destination before the pop from the source.
        TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.List, toHead ? "lpush"u8 : "rpush"u8, destination);
        TypedKeys.Notify(ref c, Engine.KeyspaceEventTypes.List, fromHead ? "lpop"u8 : "rpop"u8, source);
        if (target == list)
        {
            Rotate(list, fromHead, toHead);
        }
        else
        {
            if (toHead)
                target->PushHead(element);
            else
                target->PushTail(element);
            if (fromHead)
                list->RemoveHead();
            else
                list->RemoveTail();
            TypedKeys.DeleteIfEmpty(ref c, source, from);
        }
        // The blocking forms are logged as the LMOVE they performed, which a replay cannot block on.
        if (logAsLMove && c.LogAs(5) is { } log)
        {
            log.Argument("LMOVE"u8);
            log.Argument(source);
            log.Argument(destination);
            log.Argument(fromHead ? "LEFT"u8 : "RIGHT"u8);
            log.Argument(toHead ? "LEFT"u8 : "RIGHT"u8);
            log.EndCommand();
        }
    }

    /// <summary>LMOVE of a list onto itself: the end element is popped and pushed back at the end named.</summary>
    private static void Rotate(ListValue* list, bool fromHead, bool toHead)
    {
        // Popped and pushed even when both ends are the same, as Redis does: the nodes can change
        // (a head node emptied by the pop is gone, and the push may then join the next one).
        Span<byte> scratch = stackalloc byte[ElementScratch];
        ReadOnlySpan<byte> element = (fromHead ? list->Head : list->Tail).AsBytes(scratch);
        // Copy out: the pop frees or moves the node the element lives in.
        Span<byte> copy = element.Length <= 256 ? stackalloc byte[element.Length] : new byte[element.Length];
        element.CopyTo(copy);
        if (fromHead)
            list->RemoveHead();
        else
            list->RemoveTail();
        if (toHead)
            list->PushHead(copy);
        else
            list->PushTail(copy);
    }

    /// <summary>LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]: pops from the first non-empty list; [key, elements] or null.</summary>
    private static void LMPop(ref CommandContext c)
    {
        if (!MultiPop.TryOptions(ref c, 1, Engine.ValueType.List, out int numKeys, out _, out _))
            return;
        if (MultiPop.TryPopFirst(ref c, 1, numKeys, Engine.ValueType.List, out bool failed) || failed)
            return;
        c.LogNothing();
        c.Reply.NullArray();
    }
}
