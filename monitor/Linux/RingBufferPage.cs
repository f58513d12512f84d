using System.Buffers.Binary;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// Walks one page read from a per-CPU trace_pipe_raw file: the page header (a full timestamp and
/// the committed length, whose top bits say events were lost before this page), then event
/// headers of 32 bits (5 bits of type/length, 27 bits of time delta) with their records.
/// Layout from the kernel's ring buffer (kernel/trace/ring_buffer.c) and header_page, whose
/// field offsets are read at run time. Hand-written for the same reason as <see cref="EventFormat"/>.
/// </summary>
public sealed class RingBufferPage(int commitOffset, int commitSize, int dataOffset)
{
    private const int TypePadding = 29;
    private const int TypeTimeExtend = 30;
    private const int TypeTimeStamp = 31;
    private const int DataTypeLengthMax = 28;
    private const long MissedEvents = 1L << 31;
    private const long MissedStored = 1L << 30;
    private const int TimeShift = 27;

    /// <summary>The layout events/header_page describes.</summary>
    public static RingBufferPage FromHeaderPage(string headerPageText)
    {
        var format = EventFormat.Parse("ftrace", "header_page", "ID: 0\n" + headerPageText.Replace("field: ", "field:", StringComparison.Ordinal));
        var commit = format.Field("commit");
        return new RingBufferPage(commit.Offset, commit.Size, format.Field("data").Offset);
    }

    /// <summary>Called for each event: its timestamp (trace clock ns) and its record (common fields first).</summary>
    public delegate void EventHandler(long timestamp, ReadOnlySpan<byte> record);

    /// <summary>
    /// Calls <paramref name="onEvent"/> for every event in <paramref name="page"/>; returns the
    /// events the kernel says it lost before this page (-1 when it lost some but did not count them).
    /// </summary>
    public long Walk(ReadOnlySpan<byte> page, EventHandler onEvent)
    {
        long timestamp = BinaryPrimitives.ReadInt64LittleEndian(page);
        long commit = commitSize == 8 ? BinaryPrimitives.ReadInt64LittleEndian(page[commitOffset..]) : BinaryPrimitives.ReadInt32LittleEndian(page[commitOffset..]);
        int length = (int)(commit & (MissedStored - 1));
        long missed = 0;
        if ((commit & MissedEvents) != 0)
            missed = (commit & MissedStored) != 0 && dataOffset + length + 8 <= page.Length
                ? BinaryPrimitives.ReadInt64LittleEndian(page[(dataOffset + length)..])
                : -1;
        var data = page.Slice(dataOffset, Math.Min(length, page.Length - dataOffset));
        int at = 0;
        while (at + 4 <= data.Length)
        {
            uint header = BinaryPrimitives.ReadUInt32LittleEndian(data[at..]);
            int typeLength = (int)(header & 0x1F);
            long delta = header >> 5;
            switch (typeLength)
            {
                case TypePadding:
                    if (delta == 0)
                        return missed; // the rest of the page is unused
                    at += 4 + (int)BinaryPrimitives.ReadUInt32LittleEndian(data[(at + 4)..]);
                    continue;
                case TypeTimeExtend:
                    timestamp += ((long)BinaryPrimitives.ReadUInt32LittleEndian(data[(at + 4)..]) << TimeShift) + delta;
                    at += 8;
                    continue;
                case TypeTimeStamp:
                    // An absolute stamp of the low 59 bits; the page's timestamp gives the rest.
                    long absolute = ((long)BinaryPrimitives.ReadUInt32LittleEndian(data[(at + 4)..]) << TimeShift) | delta;
                    timestamp = (timestamp & ~((1L << 59) - 1)) | absolute;
                    at += 8;
                    continue;
                case 0:
                    int size = (int)BinaryPrimitives.ReadUInt32LittleEndian(data[(at + 4)..]) - 4;
                    timestamp += delta;
                    if (size > 0 && at + 8 + size <= data.Length)
                        onEvent(timestamp, data.Slice(at + 8, size));
                    at += 8 + ((size + 3) & ~3);
                    continue;
                default:
                    int small = typeLength * 4;
                    timestamp += delta;
                    if (typeLength <= DataTypeLengthMax && at + 4 + small <= data.Length)
                        onEvent(timestamp, data.Slice(at + 4, small));
                    at += 4 + small;
                    continue;
            }
        }
        return missed;
    }
}
