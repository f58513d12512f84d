using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>XINFO STREAM [FULL [COUNT n]], GROUPS, CONSUMERS and HELP, field for field as Redis 7.0 replies.</summary>
public static unsafe partial class StreamCommands
{
    private static readonly string[] InfoHelp =
    [
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Prints this help.",
    ];

    private static void RegisterInfo(CommandTable table, string g, CommandArgument key)
    {
        table.Add(new CommandSpec("xinfo", -2, None, 0, 0, 0, null, g, "A container for stream introspection commands.", "5.0.0", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("stream", -3, ReadOnly, 2, 2, 1, InfoStream, g, "Returns information about a stream.", "5.0.0")
                {
                    Arguments = [key, new("full-block", "block", Optional: true, Token: "FULL", Children: [new("count", "integer", Optional: true, Token: "COUNT")])],
                },
                new CommandSpec("groups", 3, ReadOnly, 2, 2, 1, InfoGroups, g, "Returns a list of the consumer groups of a stream.", "5.0.0")
                { Arguments = [key] },
                new CommandSpec("consumers", 4, ReadOnly, 2, 2, 1, InfoConsumers, g, "Returns a list of the consumers in a consumer group.", "5.0.0")
                { Arguments = [key, new("group", "string")] },
                new CommandSpec("help", 2, ReadOnly | Loading | Stale, 0, 0, 0, InfoHelpReply, g,
                    "Returns helpful text about the different subcommands.", "5.0.0")));
    }

    private static void InfoHelpReply(ref CommandContext c) => HelpReply.Write(c.Reply, InfoHelp);

    private static void InfoSyntaxError(ref CommandContext c)
        => c.Error($"ERR unknown subcommand or wrong number of arguments for '{Printable(c.Arg(1))}'. Try XINFO HELP.");

    /// <summary>The stream XINFO names, or null after "no such key" or WRONGTYPE.</summary>
    private static StreamValue* InfoTarget(ref CommandContext c)
    {
        StreamValue* stream = ReadStream(ref c, c.Arg(2), out bool failed);
        if (failed)
            return null;
        if (stream == null)
            c.Error("ERR no such key");
        return stream;
    }

    private static void InfoStream(ref CommandContext c)
    {
        StreamValue* stream = InfoTarget(ref c);
        if (stream == null)
            return;
        bool full = c.ArgCount > 3;
        long count = 10;
        if (full)
        {
            if (!c.ArgIs(3, "full"u8))
            {
                InfoSyntaxError(ref c);
                return;
            }
            if (c.ArgCount > 4)
            {
                if (c.ArgCount != 6 || !c.ArgIs(4, "count"u8))
                {
                    InfoSyntaxError(ref c);
                    return;
                }
                if (!c.TryInt64(5, out count))
                    return;
                if (count < 0)
                    count = 10;
            }
        }
        c.Reply.MapHeader(full ? 9 : 10);
        c.Reply.Bulk("length"u8);
        c.Reply.Integer(stream->Length);
        c.Reply.Bulk("radix-tree-keys"u8);
        c.Reply.Integer(stream->NodeCount);
        c.Reply.Bulk("radix-tree-nodes"u8);
        c.Reply.Integer(RadixTreeNodes(stream));
        c.Reply.Bulk("last-generated-id"u8);
        WriteId(ref c, stream->LastId);
        c.Reply.Bulk("max-deleted-entry-id"u8);
        WriteId(ref c, stream->MaxDeletedId);
        c.Reply.Bulk("entries-added"u8);
        c.Reply.Integer(stream->EntriesAdded);
        c.Reply.Bulk("recorded-first-entry-id"u8);
        WriteId(ref c, stream->FirstId);
        if (!full)
        {
            c.Reply.Bulk("groups"u8);
            c.Reply.Integer(stream->Groups == null ? 0 : stream->Groups->Count);
            c.Reply.Bulk("first-entry"u8);
            WriteEdge(ref c, stream, reverse: false);
            c.Reply.Bulk("last-entry"u8);
            WriteEdge(ref c, stream, reverse: true);
            return;
        }
        c.Reply.Bulk("entries"u8);
        WriteRange(ref c, stream, StreamId.Min, StreamId.Max, count, reverse: false);
        c.Reply.Bulk("groups"u8);
        if (stream->Groups == null)
        {
            c.Reply.ArrayHeader(0);
            return;
        }
        var groups = stream->Groups->Sorted();
        c.Reply.ArrayHeader(groups.Count);
        foreach (var (name, pointer) in groups)
            WriteFullGroup(ref c, stream, name, (ConsumerGroup*)pointer, count);
    }

    private static void WriteEdge(ref CommandContext c, StreamValue* stream, bool reverse)
    {
        var iterator = new StreamIterator(stream, StreamId.Min, StreamId.Max, reverse);
        if (iterator.Next(out StreamEntry entry))
            WriteEntry(ref c, entry);
        else
            c.Reply.Null();
    }

    private static void WriteFullGroup(ref CommandContext c, StreamValue* stream, byte[] name, ConsumerGroup* group, long count)
    {
        c.Reply.MapHeader(7);
        c.Reply.Bulk("name"u8);
        c.Reply.Bulk(name);
        c.Reply.Bulk("last-delivered-id"u8);
        WriteId(ref c, group->LastDelivered);
        WriteGroupCounters(ref c, stream, group);
        c.Reply.Bulk("pel-count"u8);
        c.Reply.Integer(group->Pending->Count);
        c.Reply.Bulk("pending"u8);
        long shown = count == 0 ? group->Pending->Count : Math.Min(count, group->Pending->Count);
        c.Reply.ArrayHeader(shown);
        var cursor = group->Pending->From(StreamId.Min);
        for (long i = 0; i < shown; i++, group->Pending->MoveNext(ref cursor))
        {
            PendingEntry* nack = group->Pending->At(cursor);
            c.Reply.ArrayHeader(4);
            WriteId(ref c, nack->Id);
            c.Reply.Bulk(StreamConsumer.NameOf(nack->Consumer));
            c.Reply.Integer(nack->DeliveryTime);
            c.Reply.Integer(nack->DeliveryCount);
        }
        c.Reply.Bulk("consumers"u8);
        var consumers = group->SortedConsumers();
        c.Reply.ArrayHeader(consumers.Count);
        foreach (nint pointer in consumers)
        {
            var consumer = (StreamConsumer*)pointer;
            c.Reply.MapHeader(4);
            c.Reply.Bulk("name"u8);
            c.Reply.Bulk(StreamConsumer.NameOf(consumer));
            c.Reply.Bulk("seen-time"u8);
            c.Reply.Integer(consumer->SeenTime);
            c.Reply.Bulk("pel-count"u8);
            c.Reply.Integer(consumer->Pending->Count);
            c.Reply.Bulk("pending"u8);
            long own = count == 0 ? consumer->Pending->Count : Math.Min(count, consumer->Pending->Count);
            c.Reply.ArrayHeader(own);
            var at = consumer->Pending->From(StreamId.Min);
            for (long i = 0; i < own; i++, consumer->Pending->MoveNext(ref at))
            {
                PendingEntry* nack = group->Pending->Find(consumer->Pending->At(at)->Id);
                c.Reply.ArrayHeader(3);
                WriteId(ref c, nack->Id);
                c.Reply.Integer(nack->DeliveryTime);
                c.Reply.Integer(nack->DeliveryCount);
            }
        }
    }

    /// <summary>entries-read (nil when unknown) and lag (nil when it cannot be told).</summary>
    private static void WriteGroupCounters(ref CommandContext c, StreamValue* stream, ConsumerGroup* group)
    {
        c.Reply.Bulk("entries-read"u8);
        if (group->EntriesRead != StreamLag.Unknown)
            c.Reply.Integer(group->EntriesRead);
        else
            c.Reply.Null();
        c.Reply.Bulk("lag"u8);
        if (StreamLag.TryLag(stream, group, out long lag))
            c.Reply.Integer(lag);
        else
            c.Reply.Null();
    }

    private static void InfoGroups(ref CommandContext c)
    {
        StreamValue* stream = InfoTarget(ref c);
        if (stream == null)
            return;
        if (stream->Groups == null)
        {
            c.Reply.ArrayHeader(0);
            return;
        }
        var groups = stream->Groups->Sorted();
        c.Reply.ArrayHeader(groups.Count);
        foreach (var (name, pointer) in groups)
        {
            var group = (ConsumerGroup*)pointer;
            c.Reply.MapHeader(6);
            c.Reply.Bulk("name"u8);
            c.Reply.Bulk(name);
            c.Reply.Bulk("consumers"u8);
            c.Reply.Integer(group->ConsumerCount);
            c.Reply.Bulk("pending"u8);
            c.Reply.Integer(group->Pending->Count);
            c.Reply.Bulk("last-delivered-id"u8);
            WriteId(ref c, group->LastDelivered);
            WriteGroupCounters(ref c, stream, group);
        }
    }

    private static void InfoConsumers(ref CommandContext c)
    {
        StreamValue* stream = InfoTarget(ref c);
        if (stream == null)
            return;
        ConsumerGroup* group = stream->Groups == null ? null : stream->Groups->Find(c.Arg(3));
        if (group == null)
        {
            c.Error($"NOGROUP No such consumer group '{Printable(c.Arg(3))}' for key name '{Printable(c.Arg(2))}'");
            return;
        }
        var consumers = group->SortedConsumers();
        c.Reply.ArrayHeader(consumers.Count);
        foreach (nint pointer in consumers)
        {
            var consumer = (StreamConsumer*)pointer;
            c.Reply.MapHeader(3);
            c.Reply.Bulk("name"u8);
            c.Reply.Bulk(StreamConsumer.NameOf(consumer));
            c.Reply.Bulk("pending"u8);
            c.Reply.Integer(consumer->Pending->Count);
            c.Reply.Bulk("idle"u8);
            c.Reply.Integer(Math.Max(0, c.NowMs - consumer->SeenTime));
        }
    }

    /// <summary>
    /// The node count of the radix tree Redis would keep for these node keys (16-byte big-endian
    /// first IDs): its canonical compressed form, one node per branching point and leaf, one per
    /// run of bytes between them, the root. Computed from the sorted keys on demand (XINFO only).
    /// </summary>
    private static long RadixTreeNodes(StreamValue* stream)
    {
        int n = stream->NodeCount;
        if (n == 0)
            return 1;
        Span<byte> a = stackalloc byte[16], b = stackalloc byte[16];
        int top = n == 1 ? 16 : CommonPrefix(stream, 0, n - 1, a, b);
        // A shared prefix is one compressed root above the first branching point (or the leaf).
        long nodes = top > 0 ? 2 : 1;
        return n == 1 ? nodes : nodes + BranchNodes(stream, 0, n - 1, top, a, b);
    }

    /// <summary>Nodes below the branching point at <paramref name="depth"/> over nodes [lo, hi].</summary>
    private static long BranchNodes(StreamValue* stream, int lo, int hi, int depth, Span<byte> a, Span<byte> b)
    {
        long nodes = 0;
        int start = lo;
        while (start <= hi)
        {
            stream->Node(start)->Master.WriteBigEndian(a);
            byte edge = a[depth];
            int end = start;
            while (end < hi)
            {
                stream->Node(end + 1)->Master.WriteBigEndian(b);
                if (b[depth] != edge)
                    break;
                end++;
            }
            int childDepth = end == start ? 16 : CommonPrefix(stream, start, end, a, b);
            // The child, and a compressed run when more than the branching byte lies before it.
            nodes += 1 + (childDepth - depth > 1 ? 1 : 0);
            if (end > start)
                nodes += BranchNodes(stream, start, end, childDepth, a, b);
            start = end + 1;
        }
        return nodes;
    }

    /// <summary>The common prefix length of the first and last keys of a sorted run (that of the whole run).</summary>
    private static int CommonPrefix(StreamValue* stream, int lo, int hi, Span<byte> a, Span<byte> b)
    {
        stream->Node(lo)->Master.WriteBigEndian(a);
        stream->Node(hi)->Master.WriteBigEndian(b);
        return a.CommonPrefixLength(b);
    }
}
