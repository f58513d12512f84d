using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.DataTypes.Streams;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Streams as RDB_TYPE_STREAM_LISTPACKS_2 (Redis 7.0): the nodes as they are (their 16-byte
/// big-endian master ID, then the listpack), the counters, then every consumer group in name order
/// with its pending entries (ID, delivery time, delivery count) and its consumers in name order
/// (seen time, then the IDs each owns; the loader finds them in the group's list).
/// </summary>
public sealed unsafe partial class RdbWriter
{
    private void WriteStream(StreamValue* stream)
    {
        Span<byte> id = stackalloc byte[16];
        WriteLength((ulong)stream->NodeCount);
        for (int i = 0; i < stream->NodeCount; i++)
        {
            StreamNode* node = stream->Node(i);
            node->Master.WriteBigEndian(id);
            WriteString(id);
            WriteString(NativeListpack.AsSpan(node->Listpack));
        }
        WriteLength((ulong)stream->Length);
        WriteStreamId(stream->LastId);
        WriteStreamId(stream->FirstId);
        WriteStreamId(stream->MaxDeletedId);
        WriteLength((ulong)stream->EntriesAdded);
        ConsumerGroups* groups = stream->Groups;
        WriteLength(groups == null ? 0 : (ulong)groups->Count);
        if (groups == null)
            return;
        // Sorted() allocates (a list and the names): only streams with consumer groups pay it.
        foreach (var (name, pointer) in groups->Sorted())
        {
            var group = (ConsumerGroup*)pointer;
            WriteString(name);
            WriteStreamId(group->LastDelivered);
            // -1 ("unknown") goes out as Redis writes it: the unsigned 64-bit length 2^64-1.
            WriteLength((ulong)group->EntriesRead);
            WritePending(group->Pending, withDeliveries: true, id);
            WriteLength((ulong)group->ConsumerCount);
            foreach (nint c in group->SortedConsumers())
            {
                var consumer = (StreamConsumer*)c;
                WriteString(StreamConsumer.NameOf(consumer));
                WriteMilliseconds(consumer->SeenTime);
                WritePending(consumer->Pending, withDeliveries: false, id);
            }
        }
    }

    private void WriteStreamId(StreamId id)
    {
        WriteLength(id.Ms);
        WriteLength(id.Seq);
    }

    /// <summary>rdbSaveStreamPEL: the count, then each ID raw (16 bytes), with its delivery time and count for a group's list.</summary>
    private void WritePending(PendingEntries* pending, bool withDeliveries, Span<byte> id)
    {
        WriteLength((ulong)pending->Count);
        var cursor = pending->From(StreamId.Min);
        for (PendingEntry* entry; (entry = pending->At(cursor)) != null; pending->MoveNext(ref cursor))
        {
            entry->Id.WriteBigEndian(id);
            WriteRaw(id);
            if (!withDeliveries)
                continue;
            WriteMilliseconds(entry->DeliveryTime);
            WriteLength((ulong)entry->DeliveryCount);
        }
    }
}
