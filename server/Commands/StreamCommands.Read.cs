using System.Buffers;
using System.Runtime.InteropServices;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// XREAD and XREADGROUP: served at once when a stream has what the caller asks for, else (with
/// BLOCK) the client waits on the keys until an XADD makes one ready. A blocked XREAD remembers
/// the IDs it resolved ("$" is the last ID when it blocked); a blocked XREADGROUP reads its group's
/// last delivered ID when served. Deliveries to a group are logged as Redis propagates them:
/// the consumer's creation, an XCLAIM per entry, and the group's new last ID.
/// </summary>
public static unsafe partial class StreamCommands
{
    /// <summary>Entries a blocked read gets at most when it gave no COUNT (Redis's XREAD_BLOCKED_DEFAULT_COUNT).</summary>
    private const int BlockedDefaultCount = 1000;
    /// <summary>Marks ">" (new entries) among XREADGROUP's IDs.</summary>
    private static readonly StreamId NewEntries = StreamId.Max;

    private static void RegisterRead(CommandTable table, string g, CommandArgument key)
    {
        CommandArgument streams = new("streams", "block", Token: "STREAMS", Children: [new("key", "key", Multiple: true), new("id", "string", Multiple: true)]);
        table.Add(new CommandSpec("xread", -4, ReadOnly | Blocking, 0, 0, 0, XRead, g,
            "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", "5.0.0")
        {
            KeyRange = ReadKeys,
            Arguments = [new("count", "integer", Optional: true, Token: "COUNT"), new("milliseconds", "integer", Optional: true, Token: "BLOCK"), streams],
        });
        table.Add(new CommandSpec("xreadgroup", -7, Write | Blocking, 0, 0, 0, XReadGroup, g,
            "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", "5.0.0",
            "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.")
        {
            KeyRange = ReadKeys,
            Arguments = [new("group-block", "block", Token: "GROUP", Children: [new("group", "string"), new("consumer", "string")]),
                new("count", "integer", Optional: true, Token: "COUNT"), new("milliseconds", "integer", Optional: true, Token: "BLOCK"),
                new("noack", "pure-token", Optional: true, Token: "NOACK"), streams],
        });
    }

    /// <summary>The keys after STREAMS (half of what follows it), found as Redis's key spec finds them.</summary>
    private static (int First, int Last) ReadKeys(ArgList args)
    {
        for (int i = 1; i < args.Count; i++)
        {
            ReadOnlySpan<byte> arg = args[i];
            if (NumberFormat.EqualsIgnoreCase(arg, "block"u8) || NumberFormat.EqualsIgnoreCase(arg, "count"u8))
                i++;
            else if (NumberFormat.EqualsIgnoreCase(arg, "group"u8))
                i += 2;
            else if (NumberFormat.EqualsIgnoreCase(arg, "noack"u8))
                continue;
            else if (NumberFormat.EqualsIgnoreCase(arg, "streams"u8))
            {
                // Half of what follows, rounded down, as Redis's key spec reads it (an odd count is
                // the handler's error to report).
                int after = args.Count - i - 1;
                return after < 2 ? (0, -1) : (i + 1, i + after / 2);
            }
            else
                break;
        }
        return (0, -1);
    }

    /// <summary>XREAD's and XREADGROUP's options.</summary>
    private struct ReadOptions
    {
        public long Count;
        public long Deadline;   // unix ms; 0 waits for ever
        public bool Blocks;
        public int Streams;     // index of the first key
        public int StreamCount;
        public int Group;       // index of the group name (the consumer follows); 0 for XREAD
        public bool NoAck;
    }

    private static void XRead(ref CommandContext c) => Read(ref c, group: false);

    private static void XReadGroup(ref CommandContext c) => Read(ref c, group: true);

    private static bool TryReadOptions(ref CommandContext c, bool group, out ReadOptions options)
    {
        options = default;
        for (int i = 1; i < c.ArgCount; i++)
        {
            int more = c.ArgCount - i - 1;
            if (c.ArgIs(i, "block"u8) && more > 0)
            {
                if (c.Client is Scripting.ScriptClient)
                {
                    c.Error($"ERR {(group ? "xreadgroup" : "xread")} command is not allowed with BLOCK option from scripts");
                    return false;
                }
                i++;
                if (!TryBlockDeadline(ref c, i, out options.Deadline))
                    return false;
                options.Blocks = true;
            }
            else if (c.ArgIs(i, "count"u8) && more > 0)
            {
                i++;
                if (!c.TryInt64(i, out options.Count))
                    return false;
                if (options.Count < 0)
                    options.Count = 0;
            }
            else if (c.ArgIs(i, "streams"u8) && more > 0)
            {
                options.Streams = i + 1;
                if (more % 2 != 0)
                {
                    c.Error(group
                        ? "ERR Unbalanced XREADGROUP list of streams: for each stream key an ID or '>' must be specified."
                        : "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.");
                    return false;
                }
                options.StreamCount = more / 2;
                break;
            }
            else if (c.ArgIs(i, "group"u8) && more >= 2)
            {
                if (!group)
                {
                    c.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                    return false;
                }
                options.Group = i + 1;
                i += 2;
            }
            else if (c.ArgIs(i, "noack"u8))
            {
                if (!group)
                {
                    c.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                    return false;
                }
                options.NoAck = true;
            }
            else
            {
                c.SyntaxError();
                return false;
            }
        }
        if (options.Streams == 0)
        {
            c.SyntaxError();
            return false;
        }
        if (group && options.Group == 0)
        {
            c.Error("ERR Missing GROUP option for XREADGROUP");
            return false;
        }
        return true;
    }

    /// <summary>BLOCK's milliseconds as a unix-ms deadline (0: for ever), with Redis's errors.</summary>
    private static bool TryBlockDeadline(ref CommandContext c, int index, out long deadline)
    {
        deadline = 0;
        if (!c.TryInt64(index, out long ms, "ERR timeout is not an integer or out of range"))
            return false;
        if (ms < 0)
        {
            c.Error("ERR timeout is negative");
            return false;
        }
        if (ms > 0)
        {
            if (ms > long.MaxValue - c.NowMs)
            {
                c.Error("ERR timeout is out of range");
                return false;
            }
            deadline = c.NowMs + ms;
        }
        return true;
    }

    private static void Read(ref CommandContext c, bool group)
    {
        if (!TryReadOptions(ref c, group, out ReadOptions options))
            return;
        StreamId[]? rented = null;
        Span<StreamId> ids = options.StreamCount <= 16
            ? stackalloc StreamId[options.StreamCount]
            : (rented = ArrayPool<StreamId>.Shared.Rent(options.StreamCount)).AsSpan(0, options.StreamCount);
        try
        {
            if (!TryResolveIds(ref c, options, ids))
                return;
            if (ServeNow(ref c, options, ids))
                return;
            if (!options.Blocks)
            {
                c.LogNothing();
                c.Reply.NullArray();
                return;
            }
            // Inside MULTI (or wherever a client may not block) an empty read is a timeout.
            if (c.Client.InTransaction)
            {
                c.LogNothing();
                c.Reply.NullArray();
                return;
            }
            BlockingCommands.Block(ref c, options.Streams, options.Streams + options.StreamCount - 1, Engine.ValueType.Stream, options.Deadline,
                ServeBlocked, ready: ReadyForWaiter, state: ids.ToArray());
        }
        finally
        {
            if (rented is not null)
                ArrayPool<StreamId>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// The ID each stream is read after: "$" (XREAD) is the stream's last ID now; ">" (XREADGROUP)
    /// means new entries. XREADGROUP also needs every key and group to exist.
    /// </summary>
    private static bool TryResolveIds(ref CommandContext c, in ReadOptions options, scoped Span<StreamId> ids)
    {
        for (int i = 0; i < options.StreamCount; i++)
        {
            ReadOnlySpan<byte> key = c.Arg(options.Streams + i);
            int idIndex = options.Streams + options.StreamCount + i;
            StreamValue* stream = ReadStream(ref c, key, out bool failed);
            if (failed)
                return false;
            if (options.Group != 0 && (stream == null || stream->Groups == null || stream->Groups->Find(c.Arg(options.Group)) == null))
            {
                c.Error($"NOGROUP No such key '{Printable(key)}' or consumer group '{Printable(c.Arg(options.Group))}' in XREADGROUP with GROUP option");
                return false;
            }
            ReadOnlySpan<byte> text = c.Arg(idIndex);
            if (text.SequenceEqual("$"u8))
            {
                if (options.Group != 0)
                {
                    c.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.");
                    return false;
                }
                ids[i] = stream == null ? default : stream->LastId;
                continue;
            }
            if (text.SequenceEqual(">"u8))
            {
                if (options.Group == 0)
                {
                    c.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
                    return false;
                }
                ids[i] = NewEntries;
                continue;
            }
            if (!TryId(ref c, idIndex, 0, strict: true, out ids[i]))
                return false;
        }
        return true;
    }

    /// <summary>Text for an error message (keys and names are client bytes).</summary>
    private static string Printable(ReadOnlySpan<byte> bytes) => System.Text.Encoding.UTF8.GetString(bytes);

    /// <summary>What one stream of a read serves: nothing, its new entries after an ID, or (XREADGROUP with an ID) the consumer's history.</summary>
    private enum ServeKind : byte { None, After, History }

    private static ServeKind KindFor(StreamValue* stream, ConsumerGroup* group, ref StreamId after)
    {
        if (stream == null)
            return ServeKind.None;
        if (group != null)
        {
            if (after != NewEntries)
                return ServeKind.History;
            if (stream->Length > 0 && StreamValue.LastEntry(stream).Id > group->LastDelivered)
            {
                after = group->LastDelivered;
                return ServeKind.After;
            }
            return ServeKind.None;
        }
        return stream->Length > 0 && StreamValue.LastEntry(stream).Id > after ? ServeKind.After : ServeKind.None;
    }

    /// <summary>
    /// Replies for every stream that has something now; false (nothing written) when none has.
    /// What each stream serves is decided once, in order, before the reply's length is written;
    /// a key named twice to a group (">" both times) sees the group where the earlier read leaves it,
    /// as Redis decides each stream right before serving it.
    /// </summary>
    private static bool ServeNow(ref CommandContext c, in ReadOptions options, scoped Span<StreamId> ids)
    {
        byte[]? rented = null;
        Span<ServeKind> kinds = options.StreamCount <= 64
            ? stackalloc ServeKind[options.StreamCount]
            : MemoryMarshal.Cast<byte, ServeKind>((rented = ArrayPool<byte>.Shared.Rent(options.StreamCount)).AsSpan(0, options.StreamCount));
        try
        {
            int served = 0;
            for (int i = 0; i < options.StreamCount; i++)
            {
                StreamValue* stream = StreamAt(ref c, options.Streams + i);
                ConsumerGroup* group = GroupOf(ref c, options, stream);
                kinds[i] = KindFor(stream, group, ref ids[i]);
                if (kinds[i] == ServeKind.After && group != null)
                    kinds[i] = AfterEarlierReads(ref c, options, stream, ids, kinds, i);
                if (kinds[i] != ServeKind.None)
                    served++;
            }
            if (served == 0)
                return false;
            if (c.Reply.Protocol == 3)
                c.Reply.MapHeader(served);
            else
                c.Reply.ArrayHeader(served);
            bool logged = false;
            for (int i = 0; i < options.StreamCount; i++)
            {
                if (kinds[i] == ServeKind.None)
                    continue;
                StreamValue* stream = StreamAt(ref c, options.Streams + i);
                logged |= ServeStream(ref c, options, options.Streams + i, stream, GroupOf(ref c, options, stream), kinds[i], ids[i], options.Count);
            }
            if (!logged)
                c.LogNothing();
            return true;
        }
        finally
        {
            if (rented is not null)
                ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// A group read of new entries from a key an earlier stream of the same call also reads new
    /// entries from: it starts where that read leaves the group (its COUNT entries further, or the
    /// end), and serves nothing when nothing is left.
    /// </summary>
    private static ServeKind AfterEarlierReads(ref CommandContext c, in ReadOptions options, StreamValue* stream, scoped Span<StreamId> ids, scoped Span<ServeKind> kinds, int i)
    {
        for (int j = 0; j < i; j++)
        {
            if (kinds[j] != ServeKind.After || !c.Arg(options.Streams + j).SequenceEqual(c.Arg(options.Streams + i)))
                continue;
            // Where the earlier read leaves the group: its last entry delivered.
            StreamId left = ids[j];
            var iterator = new StreamIterator(stream, ids[j].TryIncrement(out StreamId start) ? start : StreamId.Max, StreamId.Max);
            for (long n = 0; (options.Count == 0 || n < options.Count) && iterator.Next(out StreamEntry entry); n++)
                left = entry.Id;
            if (left > ids[i])
                ids[i] = left;
        }
        return StreamValue.LastEntry(stream).Id > ids[i] ? ServeKind.After : ServeKind.None;
    }

    /// <summary>The stream at argument <paramref name="index"/> without counting a keyspace hit again.</summary>
    private static StreamValue* StreamAt(ref CommandContext c, int index)
    {
        Entry* e = c.Database(c.Arg(index), out uint hash).Lookup(c.Arg(index), hash, c.ExpireClockMs);
        return e == null || e->Type != Engine.ValueType.Stream ? null : Values.Stream(e);
    }

    private static ConsumerGroup* GroupOf(ref CommandContext c, in ReadOptions options, StreamValue* stream)
        => options.Group == 0 || stream == null || stream->Groups == null ? null : stream->Groups->Find(c.Arg(options.Group));

    /// <summary>
    /// One stream's part of the reply: [key, entries] (RESP3: a map entry). For a group, delivers
    /// the entries (pending entries, last ID, entries read) and logs the effects; true when it logged.
    /// </summary>
    private static bool ServeStream(ref CommandContext c, in ReadOptions options, int keyIndex, StreamValue* stream, ConsumerGroup* group,
        ServeKind kind, StreamId after, long count)
    {
        ReadOnlySpan<byte> key = c.Arg(keyIndex);
        if (c.Reply.Protocol != 3)
            c.Reply.ArrayHeader(2);
        c.Reply.Bulk(key);
        if (group == null)
        {
            if (after.TryIncrement(out StreamId start))
                WriteRange(ref c, stream, start, StreamId.Max, count, reverse: false);
            else
                c.Reply.ArrayHeader(0);
            return false;
        }
        ReadOnlySpan<byte> groupName = c.Arg(options.Group);
        ReadOnlySpan<byte> consumerName = c.Arg(options.Group + 1);
        StreamConsumer* consumer = group->FindConsumer(consumerName);
        bool logged = false;
        if (consumer == null)
        {
            consumer = group->AddConsumer(consumerName, c.NowMs);
            TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xgroup-createconsumer"u8, key);
            LogCreateConsumer(ref c, key, groupName, consumerName);
            logged = true;
        }
        consumer->SeenTime = c.NowMs;
        if (kind == ServeKind.History)
        {
            // From the entry after the one given (the last possible ID stays itself: nothing follows it).
            after.TryIncrement(out StreamId start);
            WriteHistory(ref c, stream, group, consumer, start, count);
            return logged;
        }
        return DeliverNew(ref c, key, groupName, stream, group, consumer, after, count, options.NoAck) || logged;
    }

    /// <summary>
    /// The consumer's pending entries from <paramref name="start"/>: each as its entry (delivered
    /// again: its delivery time and count updated), or [id, nil] when the entry was deleted since.
    /// </summary>
    private static void WriteHistory(ref CommandContext c, StreamValue* stream, ConsumerGroup* group, StreamConsumer* consumer, StreamId start, long count)
    {
        PendingEntries* pending = consumer->Pending;
        long total = 0;
        for (var cursor = pending->From(start); pending->At(cursor) != null && (count == 0 || total < count); pending->MoveNext(ref cursor))
            total++;
        c.Reply.ArrayHeader(total);
        var at = pending->From(start);
        for (long i = 0; i < total; i++, pending->MoveNext(ref at))
        {
            StreamId id = pending->At(at)->Id;
            StreamEntry entry = stream->Find(id);
            if (!entry.Exists)
            {
                c.Reply.ArrayHeader(2);
                WriteId(ref c, id);
                c.Reply.NullArray();
                continue;
            }
            WriteEntry(ref c, entry);
            PendingEntry* nack = group->Pending->Find(id);
            nack->DeliveryTime = c.NowMs;
            nack->DeliveryCount++;
        }
    }

    /// <summary>
    /// Delivers the entries after <paramref name="after"/> to the consumer (XREADGROUP with ">"):
    /// the group's last ID and read counter advance, and unless NOACK each entry becomes pending for
    /// the consumer (taken from another consumer if an XGROUP SETID made it pending there). Logged
    /// as Redis propagates it: an XCLAIM per pending entry, then XGROUP SETID. True when it logged.
    /// </summary>
    private static bool DeliverNew(ref CommandContext c, ReadOnlySpan<byte> key, ReadOnlySpan<byte> groupName, StreamValue* stream,
        ConsumerGroup* group, StreamConsumer* consumer, StreamId after, long count, bool noAck)
    {
        after.TryIncrement(out StreamId start);
        long total = 0;
        var counting = new StreamIterator(stream, start, StreamId.Max);
        while ((count == 0 || total < count) && counting.Next(out _))
            total++;
        c.Reply.ArrayHeader(total);
        bool advanced = false;
        long delivered = 0;
        var iterator = new StreamIterator(stream, start, StreamId.Max);
        for (long i = 0; i < total && iterator.Next(out StreamEntry entry); i++)
        {
            StreamId id = entry.Id;
            if (id > group->LastDelivered)
            {
                group->EntriesRead = group->EntriesRead != StreamLag.Unknown && !StreamLag.HasTombstonesFrom(stream, id)
                    ? group->EntriesRead + 1
                    : stream->EntriesAdded != 0 ? StreamLag.EntriesBefore(stream, id) : group->EntriesRead;
                group->LastDelivered = id;
                advanced = true;
            }
            WriteEntry(ref c, entry);
            if (noAck)
                continue;
            PendingEntry* nack = group->Pending->Find(id);
            if (nack == null)
                nack = group->Pending->Insert(id);
            else
                nack->Consumer->Pending->Remove(id);
            nack->Consumer = consumer;
            nack->DeliveryTime = c.NowMs;
            nack->DeliveryCount = 1;
            if (consumer->Pending->Find(id) == null)
                consumer->Pending->Insert(id);
            LogClaim(ref c, key, groupName, group, nack);
            delivered++;
        }
        Diagnostics.Threads.ThreadCounters.Current.StreamDeliveries += delivered;
        if (advanced)
            LogSetId(ref c, key, groupName, group);
        return advanced || (!noAck && total > 0);
    }

    // ---- blocked reads ------------------------------------------------------------------------

    /// <summary>Whether the stream now holds something for this blocked reader (a group's reader: its group gone counts, to be told so).</summary>
    private static bool ReadyForWaiter(BlockedClient waiter, Database db, ReadOnlySpan<byte> key, Entry* e)
    {
        var c = BlockingCommands.ContextOf(waiter, db);
        if (!TryWaiterPosition(ref c, waiter, key, out ReadOptions options, out StreamId after))
            return false;
        StreamValue* stream = Values.Stream(e);
        if (options.Group == 0)
            return stream->Length > 0 && StreamValue.LastEntry(stream).Id > after;
        ConsumerGroup* group = GroupOf(ref c, options, stream);
        return group == null || (stream->Length > 0 && StreamValue.LastEntry(stream).Id > group->LastDelivered);
    }

    /// <summary>The options the blocked command was given, and the ID it reads <paramref name="key"/> after.</summary>
    private static bool TryWaiterPosition(ref CommandContext c, BlockedClient waiter, ReadOnlySpan<byte> key, out ReadOptions options, out StreamId after)
    {
        after = default;
        options = default;
        var ids = (StreamId[])waiter.State!;
        // The options parsed when it blocked; parsing again replies nothing on this valid input.
        for (int i = 1; i < c.ArgCount; i++)
        {
            if (c.ArgIs(i, "streams"u8))
            {
                options.Streams = i + 1;
                options.StreamCount = (c.ArgCount - i - 1) / 2;
                break;
            }
            if (c.ArgIs(i, "count"u8))
                NumberFormat.TryParseInt64(c.Arg(++i), out options.Count);
            else if (c.ArgIs(i, "block"u8))
                i++;
            else if (c.ArgIs(i, "group"u8))
            {
                options.Group = i + 1;
                i += 2;
            }
            else if (c.ArgIs(i, "noack"u8))
                options.NoAck = true;
        }
        for (int i = 0; i < options.StreamCount; i++)
        {
            if (c.Arg(options.Streams + i).SequenceEqual(key))
            {
                after = ids[i];
                options.Count = options.Count <= 0 ? BlockedDefaultCount : options.Count;
                return true;
            }
        }
        return false;
    }

    /// <summary>Serves a blocked XREAD or XREADGROUP on the stream that became ready: a reply of that one stream.</summary>
    private static bool ServeBlocked(BlockedClient waiter, Database db, ReadOnlySpan<byte> key, Entry* e)
    {
        var c = BlockingCommands.ContextOf(waiter, db);
        TryWaiterPosition(ref c, waiter, key, out ReadOptions options, out StreamId after);
        StreamValue* stream = Values.Stream(e);
        ConsumerGroup* group = null;
        if (options.Group != 0)
        {
            group = GroupOf(ref c, options, stream);
            if (group == null)
            {
                c.Error("NOGROUP the consumer group this client was blocked on no longer exists");
                return true;
            }
            after = group->LastDelivered;
        }
        if (c.Reply.Protocol == 3)
            c.Reply.MapHeader(1);
        else
            c.Reply.ArrayHeader(1);
        int keyIndex = options.Streams;
        while (!c.Arg(keyIndex).SequenceEqual(key))
            keyIndex++;
        ServeStream(ref c, options, keyIndex, stream, group, ServeKind.After, after, options.Count);
        return true;
    }

    // ---- propagation ------------------------------------------------------------------------

    /// <summary>XGROUP CREATECONSUMER key group consumer.</summary>
    private static void LogCreateConsumer(ref CommandContext c, ReadOnlySpan<byte> key, ReadOnlySpan<byte> group, ReadOnlySpan<byte> consumer)
    {
        if (c.LogAs(5) is not { } log)
            return;
        log.Argument("XGROUP"u8);
        log.Argument("CREATECONSUMER"u8);
        log.Argument(key);
        log.Argument(group);
        log.Argument(consumer);
        log.EndCommand();
    }

    /// <summary>
    /// A pending entry as Redis propagates it: XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n
    /// FORCE JUSTID LASTID last-id, which recreates it exactly (or, for an entry no longer in the
    /// stream, deletes it there too).
    /// </summary>
    private static void LogClaim(ref CommandContext c, ReadOnlySpan<byte> key, ReadOnlySpan<byte> groupName, ConsumerGroup* group, PendingEntry* nack)
    {
        if (c.LogAs(14) is not { } log)
            return;
        Span<byte> text = stackalloc byte[StreamId.MaxTextLength];
        log.Argument("XCLAIM"u8);
        log.Argument(key);
        log.Argument(groupName);
        log.Argument(StreamConsumer.NameOf(nack->Consumer));
        log.Argument("0"u8);
        log.Argument(text[..nack->Id.Format(text)]);
        log.Argument("TIME"u8);
        log.Argument(nack->DeliveryTime);
        log.Argument("RETRYCOUNT"u8);
        log.Argument(nack->DeliveryCount);
        log.Argument("FORCE"u8);
        log.Argument("JUSTID"u8);
        log.Argument("LASTID"u8);
        log.Argument(text[..group->LastDelivered.Format(text)]);
        log.EndCommand();
    }

    /// <summary>XGROUP SETID key group last-id ENTRIESREAD n.</summary>
    private static void LogSetId(ref CommandContext c, ReadOnlySpan<byte> key, ReadOnlySpan<byte> groupName, ConsumerGroup* group)
    {
        if (c.LogAs(7) is not { } log)
            return;
        Span<byte> text = stackalloc byte[StreamId.MaxTextLength];
        log.Argument("XGROUP"u8);
        log.Argument("SETID"u8);
        log.Argument(key);
        log.Argument(groupName);
        log.Argument(text[..group->LastDelivered.Format(text)]);
        log.Argument("ENTRIESREAD"u8);
        log.Argument(group->EntriesRead);
        log.EndCommand();
    }
}
