namespace Diagnostics.Server.DataTypes.Streams;

/// <summary>
/// Redis 7's consumer group progress counters: how many entries a group has read (entries-read)
/// and how many it still has to (lag), kept exact while no deletion lies ahead of the group and
/// estimated from the stream's counters otherwise, with Redis's rules for when that is possible.
/// </summary>
public static unsafe class StreamLag
{
    /// <summary>An entries-read counter that could not be obtained (Redis's SCG_INVALID_ENTRIES_READ).</summary>
    public const long Unknown = -1;

    /// <summary>True when an XDEL tombstone may lie at or after <paramref name="start"/> (streamRangeHasTombstones with no end).</summary>
    public static bool HasTombstonesFrom(StreamValue* stream, StreamId start)
    {
        if (stream->Length == 0 || stream->MaxDeletedId.IsZero)
            return false;
        if (stream->FirstId > stream->MaxDeletedId)
            return false;
        return start <= stream->MaxDeletedId;
    }

    /// <summary>
    /// The number of entries added before and including <paramref name="id"/> (its logical read
    /// counter), or <see cref="Unknown"/> when it cannot be told: an ID between the first and last
    /// entries, or in the future, or tombstones in the way (streamEstimateDistanceFromFirstEverEntry).
    /// </summary>
    public static long EntriesBefore(StreamValue* stream, StreamId id)
    {
        if (stream->EntriesAdded == 0)
            return 0;
        if (stream->Length == 0 && id <= stream->LastId)
            return stream->EntriesAdded;
        int toLast = id.CompareTo(stream->LastId);
        if (toLast == 0)
            return stream->EntriesAdded;
        if (toLast > 0)
            return Unknown;
        int toFirst = id.CompareTo(stream->FirstId);
        if (stream->MaxDeletedId.IsZero || stream->MaxDeletedId < stream->FirstId)
        {
            if (toFirst < 0)
                return stream->EntriesAdded - stream->Length;
            if (toFirst == 0)
                return stream->EntriesAdded - stream->Length + 1;
        }
        return Unknown;
    }

    /// <summary>The group's lag (entries not yet delivered to it); false when it cannot be told (XINFO replies nil).</summary>
    public static bool TryLag(StreamValue* stream, ConsumerGroup* group, out long lag)
    {
        lag = 0;
        if (stream->EntriesAdded == 0)
            return true;
        if (group->EntriesRead != Unknown && !HasTombstonesFrom(stream, group->LastDelivered))
        {
            lag = stream->EntriesAdded - group->EntriesRead;
            return true;
        }
        long read = EntriesBefore(stream, group->LastDelivered);
        if (read == Unknown)
            return false;
        lag = stream->EntriesAdded - read;
        return true;
    }
}
