using Diagnostics.Server.Persistence;

namespace Diagnostics.Server.DataTypes.Streams;

/// <summary>
/// Checks a stream node's listpack read from outside (an RDB file, RESTORE) before the stream
/// code, which reads its nodes without bounds checks, may keep it: the listpack itself (through the
/// bounds-checked <see cref="Listpack"/> reader), the master entry, every entry's shape and element
/// count, IDs rising from the master ID, and the live and deleted counters. Redis does the same
/// with sanitize-dump-payload; here it is always on, since a bad node could make the server read
/// outside its memory.
/// </summary>
public static class StreamNodeValidator
{
    /// <summary>Null when the node is sound, else what is wrong with it.</summary>
    public static string? Check(ReadOnlySpan<byte> blob, StreamId master)
    {
        try
        {
            return Walk(blob, master);
        }
        catch (InvalidDataException ex)
        {
            return ex.Message;
        }
    }

    private static string? Walk(ReadOnlySpan<byte> blob, StreamId master)
    {
        var lp = new Listpack(blob);
        Span<byte> scratch = stackalloc byte[24];
        if (!TryInteger(ref lp, out long live) || !TryInteger(ref lp, out long deleted) || !TryInteger(ref lp, out long masterFields))
            return "a stream node's master entry is incomplete";
        if (live < 0 || deleted < 0 || masterFields < 0 || masterFields > blob.Length)
            return "a stream node's master entry has negative or impossible counters";
        for (long i = 0; i < masterFields; i++)
            if (!lp.Next(out _))
                return "a stream node's master fields are cut short";
        if (!TryInteger(ref lp, out long terminator) || terminator != 0)
            return "a stream node's master entry does not end with 0";
        long liveSeen = 0, deletedSeen = 0;
        StreamId previous = default;
        bool first = true;
        while (lp.Next(out PackedElement flagsElement))
        {
            if (!flagsElement.IsInteger || flagsElement.Integer is < 0 or > 3)
                return "a stream entry has bad flags";
            long flags = flagsElement.Integer;
            if (!TryInteger(ref lp, out long msDelta) || !TryInteger(ref lp, out long seqDelta))
                return "a stream entry's ID is incomplete";
            var id = new StreamId(master.Ms + (ulong)msDelta, master.Seq + (ulong)seqDelta);
            if (id < master || (!first && id <= previous))
                return $"stream entry {id} is out of order in its node";
            previous = id;
            first = false;
            long elements;
            if ((flags & StreamNode.FlagSameFields) != 0)
                elements = masterFields;
            else
            {
                if (!TryInteger(ref lp, out long fields) || fields < 0 || fields > blob.Length)
                    return "a stream entry has a bad field count";
                elements = fields * 2;
            }
            for (long i = 0; i < elements; i++)
                if (!lp.Next(out _))
                    return "a stream entry is cut short";
            long expected = 3 + elements + ((flags & StreamNode.FlagSameFields) != 0 ? 0 : 1);
            if (!TryInteger(ref lp, out long count) || count != expected)
                return "a stream entry's element count is wrong";
            if ((flags & StreamNode.FlagDeleted) != 0)
                deletedSeen++;
            else
                liveSeen++;
        }
        if (first)
            return "a stream node holds no entry";
        if (liveSeen != live || deletedSeen != deleted)
            return $"a stream node says {live} live and {deleted} deleted entries but holds {liveSeen} and {deletedSeen}";
        return null;
    }

    private static bool TryInteger(ref Listpack lp, out long value)
    {
        value = 0;
        if (!lp.Next(out PackedElement element) || !element.IsInteger)
            return false;
        value = element.Integer;
        return true;
    }
}
