using System.Buffers;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Consumer groups: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER), XACK,
/// XPENDING, XCLAIM and XAUTOCLAIM, with Redis 7.0's checks in its order. Claims are logged as
/// Redis propagates them (XCLAIM ... FORCE JUSTID per entry, XGROUP SETID for the last ID).
/// </summary>
public static unsafe partial class StreamCommands
{
    private static readonly string[] GroupHelp =
    [
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Prints this help.",
    ];

    private static void RegisterGroups(CommandTable table, string g, CommandArgument key)
    {
        CommandArgument group = new("group", "string");
        CommandArgument consumer = new("consumer", "string");
        CommandArgument idSelector = new("id-selector", "oneof", Children: [new("id", "string"), new("new-id", "pure-token", Token: "$")]);
        CommandArgument entriesRead = new("entries-read", "integer", Optional: true, Token: "ENTRIESREAD");
        table.Add(new CommandSpec("xgroup", -2, None, 0, 0, 0, null, g, "A container for consumer groups commands.", "5.0.0", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("create", -5, Write | DenyOom, 2, 2, 1, GroupCreate, g, "Creates a consumer group.", "5.0.0")
                { Arguments = [key, group, idSelector, new("mkstream", "pure-token", Optional: true, Token: "MKSTREAM"), entriesRead] },
                new CommandSpec("setid", -5, Write, 2, 2, 1, GroupSetId, g, "Sets the last-delivered ID of a consumer group.", "5.0.0")
                { Arguments = [key, group, idSelector, entriesRead] },
                new CommandSpec("destroy", 4, Write, 2, 2, 1, GroupDestroy, g, "Destroys a consumer group.", "5.0.0",
                    "O(N) where N is the number of entries in the group's pending entries list (PEL).")
                { Arguments = [key, group] },
                new CommandSpec("createconsumer", 5, Write | DenyOom, 2, 2, 1, GroupCreateConsumer, g, "Creates a consumer in a consumer group.", "6.2.0")
                { Arguments = [key, group, consumer] },
                new CommandSpec("delconsumer", 5, Write, 2, 2, 1, GroupDelConsumer, g, "Deletes a consumer from a consumer group.", "5.0.0")
                { Arguments = [key, group, consumer] },
                new CommandSpec("help", 2, ReadOnly | Loading | Stale, 0, 0, 0, GroupHelpReply, g,
                    "Returns helpful text about the different subcommands.", "5.0.0")));
        table.Add(new CommandSpec("xack", -4, Write | Fast, 1, 1, 1, XAck, g,
            "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", "5.0.0",
            "O(1) for each message ID processed.")
        { Arguments = [key, group, new("id", "string", Multiple: true)] });
        table.Add(new CommandSpec("xpending", -3, ReadOnly, 1, 1, 1, XPending, g,
            "Returns the information and entries from a stream consumer group's pending entries list.", "5.0.0",
            "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.")
        {
            Arguments = [key, group, new("filters", "block", Optional: true, Children: [
                new("min-idle-time", "integer", Optional: true, Token: "IDLE"), new("start", "string"), new("end", "string"),
                new("count", "integer"), new("consumer", "string", Optional: true)])],
        });
        table.Add(new CommandSpec("xclaim", -6, Write | Fast, 1, 1, 1, XClaim, g,
            "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", "5.0.0",
            "O(log N) with N being the number of messages in the PEL of the consumer group.")
        {
            Arguments = [key, group, consumer, new("min-idle-time", "string"), new("id", "string", Multiple: true),
                new("ms", "integer", Optional: true, Token: "IDLE"), new("unix-time-milliseconds", "unix-time", Optional: true, Token: "TIME"),
                new("count", "integer", Optional: true, Token: "RETRYCOUNT"), new("force", "pure-token", Optional: true, Token: "FORCE"),
                new("justid", "pure-token", Optional: true, Token: "JUSTID"), new("lastid", "string", Optional: true, Token: "LASTID")],
        });
        table.Add(new CommandSpec("xautoclaim", -6, Write | Fast, 1, 1, 1, XAutoClaim, g,
            "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", "6.2.0",
            "O(1) if COUNT is small.")
        {
            Arguments = [key, group, consumer, new("min-idle-time", "string"), new("start", "string"),
                new("count", "integer", Optional: true, Token: "COUNT"), new("justid", "pure-token", Optional: true, Token: "JUSTID")],
        });
    }

    // ---- XGROUP ---------------------------------------------------------------------------

    private static void GroupHelpReply(ref CommandContext c) => HelpReply.Write(c.Reply, GroupHelp);

    /// <summary>
    /// The checks every XGROUP subcommand with a key shares, in Redis's order: the options of
    /// CREATE/SETID, the key's type, the key's existence (unless MKSTREAM), the group's (for SETID,
    /// CREATECONSUMER, DELCONSUMER). False after an error reply.
    /// </summary>
    private static bool TryGroupTarget(ref CommandContext c, bool options, bool create, bool groupNeeded,
        out Entry* e, out ConsumerGroup* group, out bool makeStream, out long entriesRead)
    {
        e = null;
        group = null;
        makeStream = false;
        entriesRead = StreamLag.Unknown;
        if (options)
        {
            for (int i = 5; i < c.ArgCount;)
            {
                if (create && c.ArgIs(i, "mkstream"u8))
                {
                    makeStream = true;
                    i++;
                }
                else if (c.ArgIs(i, "entriesread"u8) && i + 1 < c.ArgCount)
                {
                    if (!c.TryInt64(i + 1, out entriesRead))
                        return false;
                    if (entriesRead < 0 && entriesRead != StreamLag.Unknown)
                    {
                        c.Error("ERR value for ENTRIESREAD must be positive or -1");
                        return false;
                    }
                    i += 2;
                }
                else
                {
                    SubcommandSyntaxError(ref c);
                    return false;
                }
            }
        }
        e = TypedKeys.Write(ref c, c.Arg(2), Engine.ValueType.Stream, out bool failed);
        if (failed)
            return false;
        if (makeStream)
            return true;
        if (e == null)
        {
            c.Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.");
            return false;
        }
        StreamValue* stream = Values.Stream(e);
        group = stream->Groups == null ? null : stream->Groups->Find(c.Arg(3));
        if (group == null && groupNeeded)
        {
            c.Error($"NOGROUP No such consumer group '{Printable(c.Arg(3))}' for key name '{Printable(c.Arg(2))}'");
            return false;
        }
        return true;
    }

    /// <summary>XPENDING's, XCLAIM's and XAUTOCLAIM's error for a missing stream (key 1) or group (argument 2).</summary>
    private static void NoSuchKeyOrGroup(ref CommandContext c)
        => c.Error($"NOGROUP No such key '{Printable(c.Arg(1))}' or consumer group '{Printable(c.Arg(2))}'");

    private static void SubcommandSyntaxError(ref CommandContext c)
        => c.Error($"ERR unknown subcommand or wrong number of arguments for '{Printable(c.Arg(1))}'. Try XGROUP HELP.");

    private static void GroupCreate(ref CommandContext c)
    {
        if (!TryGroupTarget(ref c, options: true, create: true, groupNeeded: false, out Entry* e, out _, out _, out long entriesRead))
            return;
        if (c.ArgCount > 8)
        {
            SubcommandSyntaxError(ref c);
            return;
        }
        StreamId id;
        if (c.Arg(4).SequenceEqual("$"u8))
            id = e == null ? default : Values.Stream(e)->LastId;
        else if (!TryId(ref c, 4, 0, strict: true, out id))
            return;
        ReadOnlySpan<byte> key = c.Arg(2);
        if (e == null)
        {
            Database db = c.Database(key, out uint hash);
            e = Values.NewEntry(key, Engine.ValueType.Stream);
            db.Add(e, hash);
        }
        ConsumerGroups* groups = Values.Stream(e)->GroupsOrCreate();
        if (groups->Find(c.Arg(3)) != null)
        {
            c.Error("BUSYGROUP Consumer Group name already exists");
            return;
        }
        groups->Add(c.Arg(3), id, entriesRead);
        TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xgroup-create"u8, key);
        c.Reply.Ok();
    }

    private static void GroupSetId(ref CommandContext c)
    {
        if (!TryGroupTarget(ref c, options: true, create: false, groupNeeded: true, out Entry* e, out ConsumerGroup* group, out _, out long entriesRead))
            return;
        if (c.ArgCount is not (5 or 7))
        {
            SubcommandSyntaxError(ref c);
            return;
        }
        StreamId id;
        if (c.Arg(4).SequenceEqual("$"u8))
            id = Values.Stream(e)->LastId;
        else if (!TryId(ref c, 4, 0, strict: false, out id))
            return;
        group->LastDelivered = id;
        group->EntriesRead = entriesRead;
        TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xgroup-setid"u8, c.Arg(2));
        c.Reply.Ok();
    }

    private static void GroupDestroy(ref CommandContext c)
    {
        if (!TryGroupTarget(ref c, options: false, create: false, groupNeeded: false, out Entry* e, out ConsumerGroup* group, out _, out _))
            return;
        if (group == null)
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        Values.Stream(e)->Groups->Remove(c.Arg(3));
        TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xgroup-destroy"u8, c.Arg(2));
        // Clients blocked reading through the group are told it is gone.
        c.Database(c.Arg(2), out _).SignalWaiters(c.Arg(2));
        c.Reply.Integer(1);
    }

    private static void GroupCreateConsumer(ref CommandContext c)
    {
        if (!TryGroupTarget(ref c, options: false, create: false, groupNeeded: true, out _, out ConsumerGroup* group, out _, out _))
            return;
        if (group->FindConsumer(c.Arg(4)) != null)
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        group->AddConsumer(c.Arg(4), c.NowMs);
        TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xgroup-createconsumer"u8, c.Arg(2));
        c.Reply.Integer(1);
    }

    private static void GroupDelConsumer(ref CommandContext c)
    {
        if (!TryGroupTarget(ref c, options: false, create: false, groupNeeded: true, out _, out ConsumerGroup* group, out _, out _))
            return;
        long pending = group->RemoveConsumer(c.Arg(4));
        if (pending < 0)
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xgroup-delconsumer"u8, c.Arg(2));
        c.Reply.Integer(pending);
    }

    // ---- XACK / XPENDING --------------------------------------------------------------------

    /// <summary>The stream at key 1 and its group named at argument 2; null group when either is missing.</summary>
    private static StreamValue* StreamAndGroup(ref CommandContext c, out ConsumerGroup* group, out bool failed)
    {
        group = null;
        StreamValue* stream = ReadStream(ref c, c.Arg(1), out failed);
        if (stream != null && stream->Groups != null)
            group = stream->Groups->Find(c.Arg(2));
        return stream;
    }

    private static void XAck(ref CommandContext c)
    {
        StreamAndGroup(ref c, out ConsumerGroup* group, out bool failed);
        if (failed)
            return;
        if (group == null)
        {
            c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        if (!AllIdsValid(ref c, 3))
            return;
        long acknowledged = 0;
        for (int j = 3; j < c.ArgCount; j++)
        {
            TryId(ref c, j, 0, strict: true, out StreamId id);
            PendingEntry* nack = group->Pending->Find(id);
            if (nack == null)
                continue;
            nack->Consumer->Pending->Remove(id);
            group->Pending->Remove(id);
            acknowledged++;
        }
        if (acknowledged == 0)
            c.LogNothing();
        Diagnostics.Threads.ThreadCounters.Current.StreamAcks += acknowledged;
        c.Reply.Integer(acknowledged);
    }

    private static void XPending(ref CommandContext c)
    {
        bool summary = c.ArgCount == 3;
        if (!summary && (c.ArgCount < 6 || c.ArgCount > 9))
        {
            c.SyntaxError();
            return;
        }
        long minIdle = 0, count = 0;
        StreamId start = default, end = default;
        int consumerIndex = 0;
        if (!summary)
        {
            int first = 3;
            if (c.ArgIs(3, "idle"u8))
            {
                if (!c.TryInt64(4, out minIdle))
                    return;
                if (c.ArgCount < 8)
                {
                    c.SyntaxError();
                    return;
                }
                first += 2;
            }
            if (!c.TryInt64(first + 2, out count))
                return;
            if (count < 0)
                count = 0;
            if (!TryIntervalId(ref c, first, 0, isStart: true, out start) || !TryIntervalId(ref c, first + 1, ulong.MaxValue, isStart: false, out end))
                return;
            if (first + 3 < c.ArgCount)
                consumerIndex = first + 3;
        }
        StreamValue* stream = StreamAndGroup(ref c, out ConsumerGroup* group, out bool failed);
        if (failed)
            return;
        if (group == null)
        {
            NoSuchKeyOrGroup(ref c);
            return;
        }
        if (summary)
        {
            WritePendingSummary(ref c, group);
            return;
        }
        PendingEntries* pending = group->Pending;
        if (consumerIndex != 0)
        {
            StreamConsumer* consumer = group->FindConsumer(c.Arg(consumerIndex));
            if (consumer == null)
            {
                c.Reply.ArrayHeader(0);
                return;
            }
            pending = consumer->Pending;
        }
        long rows = 0;
        for (var cursor = pending->From(start); rows < count && pending->At(cursor) is var entry && entry != null && entry->Id <= end; pending->MoveNext(ref cursor))
            if (IdleEnough(ref c, group, entry->Id, minIdle))
                rows++;
        c.Reply.ArrayHeader(rows);
        long written = 0;
        for (var cursor = pending->From(start); written < rows; pending->MoveNext(ref cursor))
        {
            StreamId id = pending->At(cursor)->Id;
            if (!IdleEnough(ref c, group, id, minIdle))
                continue;
            PendingEntry* nack = group->Pending->Find(id);
            c.Reply.ArrayHeader(4);
            WriteId(ref c, id);
            c.Reply.Bulk(StreamConsumer.NameOf(nack->Consumer));
            c.Reply.Integer(Math.Max(0, c.NowMs - nack->DeliveryTime));
            c.Reply.Integer(nack->DeliveryCount);
            written++;
        }
    }

    /// <summary>A consumer's list holds IDs only: the group's record has the delivery time.</summary>
    private static bool IdleEnough(ref CommandContext c, ConsumerGroup* group, StreamId id, long minIdle)
        => minIdle == 0 || c.NowMs - group->Pending->Find(id)->DeliveryTime >= minIdle;

    /// <summary>[count, first ID, last ID, [[consumer, count as text]...]] (nils and a nil array when nothing is pending).</summary>
    private static void WritePendingSummary(ref CommandContext c, ConsumerGroup* group)
    {
        PendingEntries* pending = group->Pending;
        c.Reply.ArrayHeader(4);
        c.Reply.Integer(pending->Count);
        if (pending->Count == 0)
        {
            c.Reply.Null();
            c.Reply.Null();
            c.Reply.NullArray();
            return;
        }
        WriteId(ref c, pending->At(pending->From(StreamId.Min))->Id);
        WriteId(ref c, pending->At(pending->AtOrBefore(StreamId.Max))->Id);
        var consumers = group->SortedConsumers();
        int withPending = 0;
        foreach (nint consumer in consumers)
            if (((StreamConsumer*)consumer)->Pending->Count > 0)
                withPending++;
        c.Reply.ArrayHeader(withPending);
        foreach (nint pointer in consumers)
        {
            var consumer = (StreamConsumer*)pointer;
            if (consumer->Pending->Count == 0)
                continue;
            c.Reply.ArrayHeader(2);
            c.Reply.Bulk(StreamConsumer.NameOf(consumer));
            c.Reply.BulkInteger(consumer->Pending->Count);
        }
    }

    // ---- XCLAIM / XAUTOCLAIM ----------------------------------------------------------------

    private static void XClaim(ref CommandContext c)
    {
        StreamValue* stream = StreamAndGroup(ref c, out ConsumerGroup* group, out bool failed);
        if (failed)
            return;
        if (group == null)
        {
            NoSuchKeyOrGroup(ref c);
            return;
        }
        if (!c.TryInt64(4, out long minIdle, "ERR Invalid min-idle-time argument for XCLAIM"))
            return;
        if (minIdle < 0)
            minIdle = 0;
        // The IDs run up to the first argument that is not one; options follow.
        int j = 5;
        while (j < c.ArgCount && StreamId.TryParse(c.Arg(j), 0, strict: true, allowAutoSeq: false, out _, out _))
            j++;
        int lastIdArg = j - 1;
        long deliveryTime = -1, retryCount = -1;
        bool force = false, justId = false;
        StreamId lastId = default;
        for (; j < c.ArgCount; j++)
        {
            bool more = j + 1 < c.ArgCount;
            if (c.ArgIs(j, "force"u8))
                force = true;
            else if (c.ArgIs(j, "justid"u8))
                justId = true;
            else if (c.ArgIs(j, "idle"u8) && more)
            {
                if (!c.TryInt64(++j, out deliveryTime, "ERR Invalid IDLE option argument for XCLAIM"))
                    return;
                deliveryTime = c.NowMs - deliveryTime;
            }
            else if (c.ArgIs(j, "time"u8) && more)
            {
                if (!c.TryInt64(++j, out deliveryTime, "ERR Invalid TIME option argument for XCLAIM"))
                    return;
            }
            else if (c.ArgIs(j, "retrycount"u8) && more)
            {
                if (!c.TryInt64(++j, out retryCount, "ERR Invalid RETRYCOUNT option argument for XCLAIM"))
                    return;
            }
            else if (c.ArgIs(j, "lastid"u8) && more)
            {
                if (!TryId(ref c, ++j, 0, strict: true, out lastId))
                    return;
            }
            else
            {
                c.Error($"ERR Unrecognized XCLAIM option '{Printable(c.Arg(j))}'");
                return;
            }
        }
        ReadOnlySpan<byte> key = c.Arg(1), groupName = c.Arg(2), consumerName = c.Arg(3);
        bool logged = false;
        bool lastIdMoved = false;
        if (lastId > group->LastDelivered)
        {
            group->LastDelivered = lastId;
            lastIdMoved = true;
        }
        // A delivery time in the future or before the epoch is taken as now, as Redis does.
        if (deliveryTime < 0 || deliveryTime > c.NowMs)
            deliveryTime = c.NowMs;

        // First pass: decide and apply, remembering which IDs are replied; then the reply.
        StreamId[] claimed = ArrayPool<StreamId>.Shared.Rent(Math.Max(1, lastIdArg - 4));
        int claimedCount = 0;
        StreamConsumer* consumer = null;
        try
        {
            for (int k = 5; k <= lastIdArg; k++)
            {
                StreamId.TryParse(c.Arg(k), 0, strict: true, allowAutoSeq: false, out StreamId id, out _);
                PendingEntry* nack = group->Pending->Find(id);
                if (!stream->Find(id).Exists)
                {
                    // Gone from the stream: its pending entry goes too.
                    if (nack != null)
                    {
                        LogClaim(ref c, key, groupName, group, nack);
                        logged = true;
                        lastIdMoved = false;
                        nack->Consumer->Pending->Remove(id);
                        group->Pending->Remove(id);
                    }
                    continue;
                }
                if (force && nack == null)
                    nack = group->Pending->Insert(id);
                if (nack == null)
                    continue;
                if (nack->Consumer != null && minIdle > 0 && c.NowMs - nack->DeliveryTime < minIdle)
                    continue;
                consumer = ClaimingConsumer(ref c, group, consumer, key, groupName, consumerName, ref logged);
                if (nack->Consumer != consumer)
                {
                    if (nack->Consumer != null)
                        nack->Consumer->Pending->Remove(id);
                    consumer->Pending->Insert(id);
                    nack->Consumer = consumer;
                }
                nack->DeliveryTime = deliveryTime;
                if (retryCount >= 0)
                    nack->DeliveryCount = retryCount;
                else if (!justId)
                    nack->DeliveryCount++;
                claimed[claimedCount++] = id;
                consumer->SeenTime = c.NowMs;
                LogClaim(ref c, key, groupName, group, nack);
                logged = true;
                lastIdMoved = false;
            }
            if (lastIdMoved)
            {
                LogSetId(ref c, key, groupName, group);
                logged = true;
            }
            if (!logged)
                c.LogNothing();
            c.Reply.ArrayHeader(claimedCount);
            for (int k = 0; k < claimedCount; k++)
            {
                if (justId)
                    WriteId(ref c, claimed[k]);
                else
                    WriteEntry(ref c, stream->Find(claimed[k]));
            }
        }
        finally
        {
            ArrayPool<StreamId>.Shared.Return(claimed);
        }
    }

    /// <summary>The consumer claiming entries: found (and seen now) or created on first use, its creation logged.</summary>
    private static StreamConsumer* ClaimingConsumer(ref CommandContext c, ConsumerGroup* group, StreamConsumer* known,
        ReadOnlySpan<byte> key, ReadOnlySpan<byte> groupName, ReadOnlySpan<byte> name, ref bool logged)
    {
        if (known != null)
            return known;
        StreamConsumer* consumer = group->FindConsumer(name);
        if (consumer != null)
        {
            consumer->SeenTime = c.NowMs;
            return consumer;
        }
        consumer = group->AddConsumer(name, c.NowMs);
        TypedKeys.Notify(ref c, KeyspaceEventTypes.Stream, "xgroup-createconsumer"u8, key);
        LogCreateConsumer(ref c, key, groupName, name);
        logged = true;
        return consumer;
    }

    private static void XAutoClaim(ref CommandContext c)
    {
        if (!c.TryInt64(4, out long minIdle, "ERR Invalid min-idle-time argument for XAUTOCLAIM"))
            return;
        if (minIdle < 0)
            minIdle = 0;
        if (!TryIntervalId(ref c, 5, 0, isStart: true, out StreamId start))
            return;
        long count = 100;
        bool justId = false;
        for (int j = 6; j < c.ArgCount; j++)
        {
            if (c.ArgIs(j, "count"u8) && j + 1 < c.ArgCount)
            {
                if (!NumberFormat.TryParseInt64(c.Arg(j + 1), out count) || count < 1)
                {
                    c.Error("ERR COUNT must be > 0");
                    return;
                }
                j++;
            }
            else if (c.ArgIs(j, "justid"u8))
                justId = true;
            else
            {
                c.SyntaxError();
                return;
            }
        }
        StreamValue* stream = StreamAndGroup(ref c, out ConsumerGroup* group, out bool failed);
        if (failed)
            return;
        if (group == null)
        {
            NoSuchKeyOrGroup(ref c);
            return;
        }
        ReadOnlySpan<byte> key = c.Arg(1), groupName = c.Arg(2), consumerName = c.Arg(3);
        // Redis looks at no more than ten times COUNT pending entries per call.
        long attempts = count > long.MaxValue / 10 ? long.MaxValue : count * 10;
        // No call claims or drops more than the group has pending: COUNT sizes nothing beyond that.
        int capacity = (int)Math.Max(1, Math.Min(count, group->Pending->Count));
        StreamId[] claimed = ArrayPool<StreamId>.Shared.Rent(capacity);
        StreamId[] deleted = ArrayPool<StreamId>.Shared.Rent(capacity);
        int claimedCount = 0, deletedCount = 0;
        bool logged = false;
        StreamConsumer* consumer = null;
        try
        {
            PendingEntries* pending = group->Pending;
            StreamId next = start;
            PendingEntry* nack = pending->At(pending->From(next));
            while (attempts-- > 0 && count > 0 && nack != null)
            {
                StreamId id = nack->Id;
                if (!stream->Find(id).Exists)
                {
                    LogClaim(ref c, key, groupName, group, nack);
                    logged = true;
                    nack->Consumer->Pending->Remove(id);
                    pending->Remove(id);
                    deleted[deletedCount++] = id;
                    count--;
                    nack = pending->At(pending->From(id));
                    continue;
                }
                if (minIdle > 0 && c.NowMs - nack->DeliveryTime < minIdle)
                {
                    nack = NextAfter(pending, id);
                    continue;
                }
                consumer = ClaimingConsumer(ref c, group, consumer, key, groupName, consumerName, ref logged);
                if (nack->Consumer != consumer)
                {
                    nack->Consumer->Pending->Remove(id);
                    consumer->Pending->Insert(id);
                    nack->Consumer = consumer;
                }
                nack->DeliveryTime = c.NowMs;
                if (!justId)
                    nack->DeliveryCount++;
                claimed[claimedCount++] = id;
                count--;
                LogClaim(ref c, key, groupName, group, nack);
                logged = true;
                nack = NextAfter(pending, id);
            }
            if (!logged)
                c.LogNothing();
            // The cursor for the next call: the entry after the last one looked at, 0-0 at the end.
            c.Reply.ArrayHeader(3);
            WriteId(ref c, nack == null ? default : nack->Id);
            c.Reply.ArrayHeader(claimedCount);
            for (int k = 0; k < claimedCount; k++)
            {
                if (justId)
                    WriteId(ref c, claimed[k]);
                else
                    WriteEntry(ref c, stream->Find(claimed[k]));
            }
            c.Reply.ArrayHeader(deletedCount);
            for (int k = 0; k < deletedCount; k++)
                WriteId(ref c, deleted[k]);
        }
        finally
        {
            ArrayPool<StreamId>.Shared.Return(claimed);
            ArrayPool<StreamId>.Shared.Return(deleted);
        }
    }

    private static PendingEntry* NextAfter(PendingEntries* pending, StreamId id)
        => id.TryIncrement(out StreamId next) ? pending->At(pending->From(next)) : null;
}
