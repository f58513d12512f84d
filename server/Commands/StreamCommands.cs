using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Stream commands on <see cref="StreamValue"/>, with Redis 7.0's argument order, replies and
/// errors: adding and trimming here, reading in StreamCommands.Read.cs, consumer groups in
/// StreamCommands.Groups.cs, XINFO in StreamCommands.Info.cs. Writes are logged as their effects
/// (the generated ID, the resulting trim), as Redis propagates them, so a replay never depends on
/// the clock or on where approximate trimming stopped.
/// </summary>
public static unsafe partial class StreamCommands
{
    private const string InvalidId = "ERR Invalid stream ID specified as stream command argument";

    public static void Register(CommandTable table)
    {
        const string g = "stream";
        CommandArgument key = new("key", "key");
        CommandArgument trim = new("trim", "block", Optional: true, Children: [
            new("strategy", "oneof", Children: [new("maxlen", "pure-token", Token: "MAXLEN"), new("minid", "pure-token", Token: "MINID")]),
            new("operator", "oneof", Optional: true, Children: [new("equal", "pure-token", Token: "="), new("approximately", "pure-token", Token: "~")]),
            new("threshold", "string"),
            new("count", "integer", Optional: true, Token: "LIMIT")]);

        table.Add(new CommandSpec("xadd", -5, Write | DenyOom | Fast, 1, 1, 1, XAdd, g,
            "Appends a new message to a stream. Creates the key if it doesn't exist.", "5.0.0",
            "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.")
        {
            Arguments = [key, new("nomkstream", "pure-token", Optional: true, Token: "NOMKSTREAM"), trim,
                new("id-selector", "oneof", Children: [new("auto-id", "pure-token", Token: "*"), new("id", "string")]),
                new("data", "block", Multiple: true, Children: [new("field", "string"), new("value", "string")])],
        });
        table.Add(new CommandSpec("xrange", -4, ReadOnly, 1, 1, 1, XRange, g,
            "Returns the messages from a stream within a range of IDs.", "5.0.0",
            "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
        { Arguments = [key, new("start", "string"), new("end", "string"), new("count", "integer", Optional: true, Token: "COUNT")] });
        table.Add(new CommandSpec("xrevrange", -4, ReadOnly, 1, 1, 1, XRevRange, g,
            "Returns the messages from a stream within a range of IDs in reverse order.", "5.0.0",
            "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
        { Arguments = [key, new("end", "string"), new("start", "string"), new("count", "integer", Optional: true, Token: "COUNT")] });
        table.Add(new CommandSpec("xlen", 2, ReadOnly | Fast, 1, 1, 1, XLen, g,
            "Return the number of messages in a stream.", "5.0.0")
        { Arguments = [key] });
        table.Add(new CommandSpec("xdel", -3, Write | Fast, 1, 1, 1, XDel, g,
            "Returns the number of messages after removing them from a stream.", "5.0.0",
            "O(1) for each single item to delete in the stream, regardless of the stream size.")
        { Arguments = [key, new("id", "string", Multiple: true)] });
        table.Add(new CommandSpec("xtrim", -4, Write, 1, 1, 1, XTrim, g,
            "Deletes messages from the beginning of a stream.", "5.0.0",
            "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.")
        { Arguments = [key, trim with { Optional = false }] });
        table.Add(new CommandSpec("xsetid", -3, Write | DenyOom | Fast, 1, 1, 1, XSetId, g,
            "An internal command for replicating stream values.", "5.0.0")
        {
            Arguments = [key, new("last-id", "string"), new("entries-added", "integer", Optional: true, Token: "ENTRIESADDED"),
                new("max-deleted-id", "string", Optional: true, Token: "MAXDELETEDID")],
        });
        RegisterRead(table, g, key);
        RegisterGroups(table, g, key);
        RegisterInfo(table, g, key);
    }

    // ---- shared -------------------------------------------------------------------------------

    /// <summary>An ID argument; "-" and "+" only when not <paramref name="strict"/>. Replies Redis's error when invalid.</summary>
    private static bool TryId(ref CommandContext c, int index, ulong missingSeq, bool strict, out StreamId id)
    {
        if (StreamId.TryParse(c.Arg(index), missingSeq, strict, allowAutoSeq: false, out id, out _))
            return true;
        c.Error(InvalidId);
        return false;
    }

    /// <summary>An interval end: an ID, "-", "+", or "(" and an ID for an exclusive end (XRANGE, XPENDING, XAUTOCLAIM).</summary>
    private static bool TryIntervalId(ref CommandContext c, int index, ulong missingSeq, bool isStart, out StreamId id)
    {
        ReadOnlySpan<byte> text = c.Arg(index);
        if (text.Length > 1 && text[0] == (byte)'(')
        {
            if (!StreamId.TryParse(text[1..], missingSeq, strict: true, allowAutoSeq: false, out id, out _))
            {
                c.Error(InvalidId);
                return false;
            }
            bool moved = isStart ? id.TryIncrement(out id) : id.TryDecrement(out id);
            if (!moved)
            {
                c.Error(isStart ? "ERR invalid start ID for the interval" : "ERR invalid end ID for the interval");
                return false;
            }
            return true;
        }
        return TryId(ref c, index, missingSeq, strict: false, out id);
    }

    /// <summary>
    /// Checks every ID from argument <paramref name="first"/> before any is acted on (XDEL, XACK):
    /// the command runs whole or not at all.
    /// </summary>
    private static bool AllIdsValid(ref CommandContext c, int first)
    {
        for (int j = first; j < c.ArgCount; j++)
            if (!TryId(ref c, j, 0, strict: true, out _))
                return false;
        return true;
    }

    private static void WriteId(ref CommandContext c, StreamId id)
    {
        Span<byte> text = stackalloc byte[StreamId.MaxTextLength];
        c.Reply.Bulk(text[..id.Format(text)]);
    }

    /// <summary>An entry as Redis replies it: [id, [field, value, ...]].</summary>
    private static void WriteEntry(ref CommandContext c, in StreamEntry entry)
    {
        c.Reply.ArrayHeader(2);
        WriteId(ref c, entry.Id);
        c.Reply.ArrayHeader(entry.FieldCount * 2L);
        Span<byte> scratch = stackalloc byte[20];
        var fields = entry.Fields();
        for (int i = 0; i < entry.FieldCount; i++)
        {
            fields.Next(out ListpackElement field, out ListpackElement value);
            c.Reply.Bulk(field.AsBytes(scratch));
            c.Reply.Bulk(value.AsBytes(scratch));
        }
    }

    /// <summary>The entries in [start, end] (at most <paramref name="count"/>, 0: all) as an array.</summary>
    private static void WriteRange(ref CommandContext c, StreamValue* stream, StreamId start, StreamId end, long count, bool reverse)
    {
        long total = 0;
        var counting = new StreamIterator(stream, start, end, reverse);
        while ((count == 0 || total < count) && counting.Next(out _))
            total++;
        c.Reply.ArrayHeader(total);
        var iterator = new StreamIterator(stream, start, end, reverse);
        for (long i = 0; i < total && iterator.Next(out StreamEntry entry); i++)
            WriteEntry(ref c, entry);
    }

    /// <summary>The stream at key 1 for reading, or null (missing: nothing replied; other type: WRONGTYPE, <paramref name="failed"/>).</summary>
    private static StreamValue* ReadStream(ref CommandContext c, ReadOnlySpan<byte> key, out bool failed)
    {
        Entry* e = TypedKeys.Read(ref c, key, Engine.ValueType.Stream, out failed);
        return e == null ? null : Values.Stream(e);
    }

    private static StreamValue* WriteStream(ref CommandContext c, ReadOnlySpan<byte> key, out bool failed)
    {
        Entry* e = TypedKeys.Write(ref c, key, Engine.ValueType.Stream, out failed);
        return e == null ? null : Values.Stream(e);
    }

    // ---- XADD / XTRIM -----------------------------------------------------------------------

    private enum TrimStrategy : byte { None, MaxLength, MinId }

    /// <summary>XADD's and XTRIM's options, as Redis's streamParseAddOrTrimArgsOrReply reads them.</summary>
    private struct AddTrimOptions
    {
        public TrimStrategy Strategy;
        public bool Approximate;
        public long MaxLength;
        public StreamId MinId;
        public long Limit;
        public bool NoMakeStream;
        public bool IdGiven;
        public bool SeqGiven;
        public StreamId Id;
    }

    /// <summary>Parses from argument 2; for XADD returns the index of the ID argument, for XTRIM the end. -1 after an error reply.</summary>
    private static int ParseAddOrTrim(ref CommandContext c, bool xadd, out AddTrimOptions options)
    {
        options = default;
        bool limitGiven = false;
        int i = 2;
        for (; i < c.ArgCount; i++)
        {
            int more = c.ArgCount - 1 - i;
            ReadOnlySpan<byte> option = c.Arg(i);
            if (xadd && option.Length == 1 && option[0] == (byte)'*')
                break;
            bool maxlen = c.ArgIs(i, "maxlen"u8);
            if ((maxlen || c.ArgIs(i, "minid"u8)) && more > 0)
            {
                if (options.Strategy != TrimStrategy.None)
                {
                    c.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                    return -1;
                }
                options.Approximate = false;
                ReadOnlySpan<byte> next = c.Arg(i + 1);
                if (more >= 2 && next.Length == 1 && next[0] == (byte)'~')
                {
                    options.Approximate = true;
                    i++;
                }
                else if (more >= 2 && next.Length == 1 && next[0] == (byte)'=')
                    i++;
                if (maxlen)
                {
                    if (!c.TryInt64(i + 1, out options.MaxLength))
                        return -1;
                    if (options.MaxLength < 0)
                    {
                        c.Error("ERR The MAXLEN argument must be >= 0.");
                        return -1;
                    }
                }
                else if (!TryId(ref c, i + 1, 0, strict: true, out options.MinId))
                    return -1;
                i++;
                options.Strategy = maxlen ? TrimStrategy.MaxLength : TrimStrategy.MinId;
            }
            else if (c.ArgIs(i, "limit"u8) && more > 0)
            {
                if (!c.TryInt64(i + 1, out options.Limit))
                    return -1;
                if (options.Limit < 0)
                {
                    c.Error("ERR The LIMIT argument must be >= 0.");
                    return -1;
                }
                limitGiven = true;
                i++;
            }
            else if (xadd && c.ArgIs(i, "nomkstream"u8))
                options.NoMakeStream = true;
            else if (xadd)
            {
                if (!StreamId.TryParse(option, 0, strict: true, allowAutoSeq: true, out options.Id, out options.SeqGiven))
                {
                    c.Error(InvalidId);
                    return -1;
                }
                options.IdGiven = true;
                break;
            }
            else
            {
                c.SyntaxError();
                return -1;
            }
        }
        if (options.Limit != 0 && options.Strategy == TrimStrategy.None)
        {
            c.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
            return -1;
        }
        if (!xadd && options.Strategy == TrimStrategy.None)
        {
            c.Error("ERR syntax error, XTRIM must be called with a trimming strategy");
            return -1;
        }
        if (limitGiven)
        {
            if (!options.Approximate)
            {
                c.Error("ERR syntax error, LIMIT cannot be used without the special ~ option");
                return -1;
            }
        }
        else if (options.Approximate)
        {
            // Redis bounds an approximate trim's work when no LIMIT says otherwise.
            long limit = 100L * c.Server.Config.StreamNodeMaxEntries;
            options.Limit = limit <= 0 || limit > 10000 ? 10000 : limit;
        }
        return i;
    }

    private static long Trim(StreamValue* stream, in AddTrimOptions options)
        => options.Strategy == TrimStrategy.None ? 0
            : stream->Trim(options.Strategy == TrimStrategy.MaxLength, options.MaxLength, options.MinId, options.Approximate, options.Limit);

    private static void XAdd(ref CommandContext c)
    {
        int idIndex = ParseAddOrTrim(ref c, xadd: true, out AddTrimOptions options);
        if (idIndex < 0)
            return;
        int first = idIndex + 1;
        if (c.ArgCount - first < 2 || (c.ArgCount - first) % 2 == 1)
        {
            c.Error("ERR wrong number of arguments for 'xadd' command");
            return;
        }
        if (options.IdGiven && options.SeqGiven && options.Id.IsZero)
        {
            c.Error("ERR The ID specified in XADD must be greater than 0-0");
            return;
        }
        ReadOnlySpan<byte> key = c.Arg(1);
        Entry* e = TypedKeys.Write(ref c, key, Engine.ValueType.Stream, out bool failed);
        if (failed)
            return;
        bool created = e == null;
        if (created && options.NoMakeStream)
        {
            c.LogNothing();
            c.Reply.Null();
            return;
        }
        StreamValue* stream = created ? StreamValue.Create() : Values.Stream(e);
        if (stream->LastId == StreamId.Max)
        {
            Discard(stream, created);
            c.Error("ERR The stream has exhausted the last possible ID, unable to add more items");
            return;
        }
        if (!TryNextId(stream, options, c.NowMs, out StreamId id))
        {
            Discard(stream, created);
            c.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item");
            return;
        }
        stream->Append(id, c.Args, first, c.Server.Config.StreamNodeMaxBytes, c.Server.Config.StreamNodeMaxEntries);
        Database db = c.Database(key, out uint hash);
        if (created)
            db.Add(Values.NewEntry(key, Engine.ValueType.Stream, stream), hash);
        WriteId(ref c, id);
        TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xadd"u8, key);
        long trimmed = Trim(stream, options);
        if (trimmed > 0)
            TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xtrim"u8, key);
        LogAdd(ref c, key, id, first, trimmed > 0 ? stream->Length : -1);
        if (!created)
            db.SignalWaiters(key);
    }

    /// <summary>A stream made for an XADD that then failed is freed, never added.</summary>
    private static void Discard(StreamValue* stream, bool created)
    {
        if (created)
            StreamValue.Destroy(stream);
    }

    /// <summary>The new entry's ID: the one given (with its sequence filled in for "ms-*"), or the next one after the clock.</summary>
    private static bool TryNextId(StreamValue* stream, in AddTrimOptions options, long nowMs, out StreamId id)
    {
        StreamId last = stream->LastId;
        if (!options.IdGiven)
        {
            ulong ms = (ulong)Math.Max(0, nowMs);
            if (ms > last.Ms)
                id = new StreamId(ms, 0);
            else if (!last.TryIncrement(out id))
                return false;
            return true;
        }
        id = options.Id;
        if (!options.SeqGiven && last.Ms == options.Id.Ms)
        {
            if (last.Seq == ulong.MaxValue)
                return false;
            id = new StreamId(last.Ms, last.Seq + 1);
        }
        return id > last;
    }

    /// <summary>XADD as its effect: the entry with its final ID, then the exact trim it caused (when it trimmed).</summary>
    private static void LogAdd(ref CommandContext c, ReadOnlySpan<byte> key, StreamId id, int first, long trimmedTo)
    {
        if (c.LogAs(3 + c.ArgCount - first) is not { } log)
            return;
        Span<byte> text = stackalloc byte[StreamId.MaxTextLength];
        log.Argument("XADD"u8);
        log.Argument(key);
        log.Argument(text[..id.Format(text)]);
        for (int i = first; i < c.ArgCount; i++)
            log.Argument(c.Arg(i));
        log.EndCommand();
        if (trimmedTo >= 0)
            LogTrim(ref c, key, trimmedTo);
    }

    /// <summary>A trim as the exact MAXLEN it left, which a replay of the same stream reproduces.</summary>
    private static void LogTrim(ref CommandContext c, ReadOnlySpan<byte> key, long length)
    {
        if (c.LogAs(5) is not { } log)
            return;
        log.Argument("XTRIM"u8);
        log.Argument(key);
        log.Argument("MAXLEN"u8);
        log.Argument("="u8);
        log.Argument(length);
        log.EndCommand();
    }

    private static void XTrim(ref CommandContext c)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        if (ParseAddOrTrim(ref c, xadd: false, out AddTrimOptions options) < 0)
            return;
        StreamValue* stream = WriteStream(ref c, key, out bool failed);
        if (failed)
            return;
        if (stream == null)
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        long trimmed = Trim(stream, options);
        if (trimmed > 0)
        {
            TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xtrim"u8, key);
            LogTrim(ref c, key, stream->Length);
        }
        else
            c.LogNothing();
        c.Reply.Integer(trimmed);
    }

    // ---- XRANGE / XREVRANGE / XLEN / XDEL / XSETID ------------------------------------------

    private static void XRange(ref CommandContext c) => Range(ref c, reverse: false);

    private static void XRevRange(ref CommandContext c) => Range(ref c, reverse: true);

    private static void Range(ref CommandContext c, bool reverse)
    {
        int startIndex = reverse ? 3 : 2, endIndex = reverse ? 2 : 3;
        if (!TryIntervalId(ref c, startIndex, 0, isStart: true, out StreamId start)
            || !TryIntervalId(ref c, endIndex, ulong.MaxValue, isStart: false, out StreamId end))
            return;
        long count = -1;
        for (int j = 4; j < c.ArgCount; j++)
        {
            if (c.ArgIs(j, "count"u8) && j + 1 < c.ArgCount)
            {
                if (!c.TryInt64(j + 1, out count))
                    return;
                if (count < 0)
                    count = 0;
                j++;
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }
        StreamValue* stream = ReadStream(ref c, c.Arg(1), out bool failed);
        if (failed)
            return;
        if (stream == null)
            c.Reply.ArrayHeader(0);
        else if (count == 0)
            c.Reply.NullArray();
        else
            WriteRange(ref c, stream, start, end, count < 0 ? 0 : count, reverse);
    }

    private static void XLen(ref CommandContext c)
    {
        StreamValue* stream = ReadStream(ref c, c.Arg(1), out bool failed);
        if (!failed)
            c.Reply.Integer(stream == null ? 0 : stream->Length);
    }

    private static void XDel(ref CommandContext c)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        StreamValue* stream = WriteStream(ref c, key, out bool failed);
        if (failed)
            return;
        if (stream == null)
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        if (!AllIdsValid(ref c, 2))
            return;
        long deleted = 0;
        for (int j = 2; j < c.ArgCount; j++)
        {
            TryId(ref c, j, 0, strict: true, out StreamId id);
            if (stream->Delete(id))
                deleted++;
        }
        if (deleted > 0)
            TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xdel"u8, key);
        else
            c.LogNothing();
        c.Reply.Integer(deleted);
    }

    private static void XSetId(ref CommandContext c)
    {
        if (!TryId(ref c, 2, 0, strict: true, out StreamId id))
            return;
        long entriesAdded = -1;
        StreamId maxDeleted = default;
        for (int i = 3; i < c.ArgCount;)
        {
            bool more = i + 1 < c.ArgCount;
            if (c.ArgIs(i, "entriesadded"u8) && more)
            {
                if (!c.TryInt64(i + 1, out entriesAdded))
                    return;
                if (entriesAdded < 0)
                {
                    c.Error("ERR entries_added must be positive");
                    return;
                }
                i += 2;
            }
            else if (c.ArgIs(i, "maxdeletedid"u8) && more)
            {
                if (!TryId(ref c, i + 1, 0, strict: true, out maxDeleted))
                    return;
                if (id < maxDeleted)
                {
                    c.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                    return;
                }
                i += 2;
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }
        ReadOnlySpan<byte> key = c.Arg(1);
        Entry* e = TypedKeys.Write(ref c, key, Engine.ValueType.Stream, out bool failed);
        if (failed)
            return;
        if (e == null)
        {
            c.Error("ERR no such key");
            return;
        }
        StreamValue* stream = Values.Stream(e);
        if (stream->Length > 0)
        {
            if (id < StreamValue.LastEntry(stream).Id)
            {
                c.Error("ERR The ID specified in XSETID is smaller than the target stream top item");
                return;
            }
            if (entriesAdded != -1 && stream->Length > entriesAdded)
            {
                c.Error("ERR The entries_added specified in XSETID is smaller than the target stream length");
                return;
            }
        }
        stream->LastId = id;
        if (entriesAdded != -1)
            stream->EntriesAdded = entriesAdded;
        if (!maxDeleted.IsZero)
            stream->MaxDeletedId = maxDeleted;
        TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xsetid"u8, key);
        c.Reply.Ok();
    }
}
