using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Writes a keyspace as the fewest commands that rebuild it, the content of a base file: per
/// database a SELECT, then per key: SET key value (with PXAT when it has a deadline), or for the
/// other types RPUSH, SADD, HMSET or ZADD in commands of up to 64 elements, then PEXPIREAT.
/// Keys already past their deadline are left out. The caller holds the keyspace still.
/// </summary>
public static unsafe class KeyspaceDumper
{
    /// <summary>
    /// Dumps <paramref name="keyspace"/> into <paramref name="output"/>; when <paramref name="drain"/>
    /// is given it is called each time the buffer holds more than <paramref name="drainBytes"/>, to
    /// move the bytes to disk and clear the buffer. Returns the number of keys written.
    /// </summary>
    public static long Dump(Keyspace keyspace, long nowMs, AofRecordBuffer output, Action<AofRecordBuffer>? drain = null, int drainBytes = 4 * 1024 * 1024)
    {
        long keys = 0;
        for (int db = 0; db < keyspace.DatabaseCount; db++)
        {
            bool selected = false;
            foreach (var shard in keyspace.Shards)
            {
                Database database = shard.Databases[db];
                if (database.Count == 0)
                    continue;
                if (!selected)
                {
                    output.BeginCommand(db, 2);
                    output.Argument("SELECT"u8);
                    output.Argument(db);
                    output.EndCommand();
                    selected = true;
                }
                var visitor = new DumpVisitor(output, database, db, nowMs, drain, drainBytes);
                database.Keys.ForEach(ref visitor);
                keys += visitor.Keys;
            }
        }
        return keys;
    }

    /// <summary>Elements per command for aggregates, as Redis's AOF_REWRITE_ITEMS_PER_CMD: big values become several commands.</summary>
    private const int ItemsPerCommand = 64;

    private struct DumpVisitor(AofRecordBuffer output, Database database, int db, long nowMs, Action<AofRecordBuffer>? drain, int drainBytes) : IEntryVisitor
    {
        public long Keys;

        public void Visit(Entry* e)
        {
            long expireAt = database.ExpireAtOf(e);
            if (expireAt != 0 && expireAt <= nowMs)
                return;
            if (e->Type == Engine.ValueType.String)
            {
                output.BeginCommand(db, expireAt != 0 ? 5 : 3);
                output.Argument("SET"u8);
                output.Argument(Entry.KeyOf(e));
                output.Argument(Entry.ValueOf(e));
                if (expireAt != 0)
                {
                    output.Argument("PXAT"u8);
                    output.Argument(expireAt);
                }
                output.EndCommand();
            }
            else
            {
                WriteAggregate(e);
                if (expireAt != 0)
                {
                    output.BeginCommand(db, 3);
                    output.Argument("PEXPIREAT"u8);
                    output.Argument(Entry.KeyOf(e));
                    output.Argument(expireAt);
                    output.EndCommand();
                }
            }
            Keys++;
            if (drain is not null && output.Length > drainBytes)
                drain(output);
        }

        /// <summary>RPUSH, SADD, HMSET or ZADD commands of up to <see cref="ItemsPerCommand"/> elements each.</summary>
        private readonly void WriteAggregate(Entry* e)
        {
            ReadOnlySpan<byte> key = Entry.KeyOf(e);
            long remaining = Values.Length(e);
            int inCommand = 0;
            switch (e->Type)
            {
                case Engine.ValueType.List:
                {
                    Span<byte> scratch = stackalloc byte[24];
                    var iterator = Values.List(e)->From(0, forward: true);
                    while (iterator.Next(out var element))
                    {
                        Begin("RPUSH"u8, key, ref inCommand, ref remaining, 1);
                        output.Argument(element.AsBytes(scratch));
                        End(ref inCommand);
                    }
                    break;
                }
                case Engine.ValueType.Set:
                    foreach (ReadOnlySpan<byte> member in Sets.Members(e))
                    {
                        Begin("SADD"u8, key, ref inCommand, ref remaining, 1);
                        output.Argument(member);
                        End(ref inCommand);
                    }
                    break;
                case Engine.ValueType.Hash:
                {
                    var pairs = Hashes.Pairs(e);
                    while (pairs.MoveNext())
                    {
                        Begin("HMSET"u8, key, ref inCommand, ref remaining, 2);
                        output.Argument(pairs.Field);
                        output.Argument(pairs.Value);
                        End(ref inCommand);
                    }
                    break;
                }
                case Engine.ValueType.SortedSet:
                {
                    Span<byte> score = stackalloc byte[40];
                    Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
                    for (var at = SortedSetView.Of(e).First; !at.IsEnd; at = at.Next)
                    {
                        Begin("ZADD"u8, key, ref inCommand, ref remaining, 2);
                        output.Argument(score[..Protocol.NumberFormat.FormatDouble(at.Score, score)]);
                        output.Argument(at.Member(scratch));
                        End(ref inCommand);
                    }
                    break;
                }
                case Engine.ValueType.Stream:
                    WriteStream(key, Values.Stream(e));
                    break;
                default:
                    throw new InvalidOperationException($"no AOF form for value type {e->Type}");
            }
        }

        /// <summary>
        /// A stream as Redis's AOF rewrite writes one: an XADD per entry (an empty stream made by an
        /// XADD MAXLEN 0), XSETID with its counters, then each group (XGROUP CREATE) with its
        /// consumers' pending entries as XCLAIM ... FORCE, and consumers without any as
        /// XGROUP CREATECONSUMER.
        /// </summary>
        private readonly void WriteStream(ReadOnlySpan<byte> key, StreamValue* stream)
        {
            Span<byte> id = stackalloc byte[StreamId.MaxTextLength];
            Span<byte> scratch = stackalloc byte[20];
            if (stream->Length == 0)
            {
                output.BeginCommand(db, 7);
                output.Argument("XADD"u8);
                output.Argument(key);
                output.Argument("MAXLEN"u8);
                output.Argument("0"u8);
                output.Argument("0-1"u8);
                output.Argument("x"u8);
                output.Argument("y"u8);
                output.EndCommand();
            }
            var entries = new StreamIterator(stream, StreamId.Min, StreamId.Max);
            while (entries.Next(out StreamEntry entry))
            {
                output.BeginCommand(db, 3 + 2 * entry.FieldCount);
                output.Argument("XADD"u8);
                output.Argument(key);
                output.Argument(id[..entry.Id.Format(id)]);
                var fields = entry.Fields();
                for (int i = 0; i < entry.FieldCount; i++)
                {
                    fields.Next(out ListpackElement field, out ListpackElement value);
                    output.Argument(field.AsBytes(scratch));
                    output.Argument(value.AsBytes(scratch));
                }
                output.EndCommand();
            }
            output.BeginCommand(db, 7);
            output.Argument("XSETID"u8);
            output.Argument(key);
            output.Argument(id[..stream->LastId.Format(id)]);
            output.Argument("ENTRIESADDED"u8);
            output.Argument(stream->EntriesAdded);
            output.Argument("MAXDELETEDID"u8);
            output.Argument(id[..stream->MaxDeletedId.Format(id)]);
            output.EndCommand();
            if (stream->Groups == null)
                return;
            foreach (var (name, pointer) in stream->Groups->Sorted())
            {
                var group = (ConsumerGroup*)pointer;
                output.BeginCommand(db, 7);
                output.Argument("XGROUP"u8);
                output.Argument("CREATE"u8);
                output.Argument(key);
                output.Argument(name);
                output.Argument(id[..group->LastDelivered.Format(id)]);
                output.Argument("ENTRIESREAD"u8);
                output.Argument(group->EntriesRead);
                output.EndCommand();
                foreach (nint c in group->SortedConsumers())
                {
                    var consumer = (StreamConsumer*)c;
                    if (consumer->Pending->Count == 0)
                    {
                        output.BeginCommand(db, 5);
                        output.Argument("XGROUP"u8);
                        output.Argument("CREATECONSUMER"u8);
                        output.Argument(key);
                        output.Argument(name);
                        output.Argument(StreamConsumer.NameOf(consumer));
                        output.EndCommand();
                        continue;
                    }
                    var cursor = consumer->Pending->From(StreamId.Min);
                    for (PendingEntry* own; (own = consumer->Pending->At(cursor)) != null; consumer->Pending->MoveNext(ref cursor))
                    {
                        PendingEntry* nack = group->Pending->Find(own->Id);
                        output.BeginCommand(db, 12);
                        output.Argument("XCLAIM"u8);
                        output.Argument(key);
                        output.Argument(name);
                        output.Argument(StreamConsumer.NameOf(consumer));
                        output.Argument("0"u8);
                        output.Argument(id[..nack->Id.Format(id)]);
                        output.Argument("TIME"u8);
                        output.Argument(nack->DeliveryTime);
                        output.Argument("RETRYCOUNT"u8);
                        output.Argument(nack->DeliveryCount);
                        output.Argument("JUSTID"u8);
                        output.Argument("FORCE"u8);
                        output.EndCommand();
                    }
                }
            }
        }

        /// <summary>Opens a command for the next element when none is open: name, key, then up to a command's worth of elements.</summary>
        private readonly void Begin(ReadOnlySpan<byte> name, ReadOnlySpan<byte> key, ref int inCommand, ref long remaining, int argsPerItem)
        {
            if (inCommand > 0)
                return;
            long items = Math.Min(remaining, ItemsPerCommand);
            remaining -= items;
            output.BeginCommand(db, 2 + (int)items * argsPerItem);
            output.Argument(name);
            output.Argument(key);
            inCommand = (int)items;
        }

        private readonly void End(ref int inCommand)
        {
            if (--inCommand == 0)
                output.EndCommand();
        }
    }
}
