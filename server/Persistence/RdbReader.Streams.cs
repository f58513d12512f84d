using System.Buffers.Binary;
using Diagnostics.Server.DataTypes.Streams;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Streams in RDB files (types 15, 19 and 21): the nodes (a 16-byte master ID and a listpack each,
/// every listpack validated before it is handed on), the counters, then each consumer group with
/// its pending entries and consumers, as Redis's rdbLoadObject reads them.
/// </summary>
public sealed partial class RdbReader
{
    private const byte TypeStreamListpacks = 15;
    private const byte TypeStreamListpacks2 = 19;
    private const byte TypeStreamListpacks3 = 21;

    private static bool IsStreamType(byte type) => type is TypeStreamListpacks or TypeStreamListpacks2 or TypeStreamListpacks3;

    private void ReadStream(byte type, IRdbVisitor visitor, long expireAtUnixMs, bool keyGiven = false)
    {
        if (!keyGiven)
        {
            _reading = "a key";
            ReadString(_key);
        }
        _reading = $"the stream value of key '{Printable(_key.Span)}'";
        visitor.BeginStream(_key.Span, expireAtUnixMs);
        long nodes = ReadCount();
        StreamId lastMaster = default;
        for (long i = 0; i < nodes; i++)
        {
            long at = Offset;
            ReadString(_second);
            if (_second.Length != 16)
                throw new RdbFormatException($"a stream node key of {_second.Length} bytes (a stream ID has 16) while reading {_reading}", at);
            StreamId master = StreamId.ReadBigEndian(_second.Span);
            if (i > 0 && master <= lastMaster)
                throw new RdbFormatException($"stream nodes out of order ({master} after {lastMaster}) while reading {_reading}", at);
            lastMaster = master;
            at = Offset;
            ReadString(_value);
            if (StreamNodeValidator.Check(_value.Span, master) is { } problem)
                throw new RdbFormatException($"corrupt stream node {master} while reading {_reading}: {problem}", at);
            visitor.StreamNode(master, _value.Span);
        }
        long length = (long)ReadPlainLength();
        var last = new StreamId(ReadPlainLength(), ReadPlainLength());
        bool hasCounters = type != TypeStreamListpacks;
        StreamId firstId = default, maxDeleted = default;
        long entriesAdded = -1;
        if (hasCounters)
        {
            firstId = new StreamId(ReadPlainLength(), ReadPlainLength());
            maxDeleted = new StreamId(ReadPlainLength(), ReadPlainLength());
            entriesAdded = (long)ReadPlainLength();
        }
        visitor.StreamCounters(length, last, firstId, maxDeleted, entriesAdded);
        long groups = ReadCount();
        for (long g = 0; g < groups; g++)
        {
            ReadString(_value);
            var lastDelivered = new StreamId(ReadPlainLength(), ReadPlainLength());
            long entriesRead = hasCounters ? (long)ReadPlainLength() : long.MinValue;
            visitor.StreamGroup(_value.Span, lastDelivered, entriesRead);
            long pending = ReadCount();
            for (long p = 0; p < pending; p++)
            {
                StreamId id = ReadRawStreamId();
                long deliveryTime = ReadMilliseconds();
                long deliveryCount = (long)ReadPlainLength();
                visitor.StreamGroupPending(id, deliveryTime, deliveryCount);
            }
            long consumers = ReadCount();
            for (long k = 0; k < consumers; k++)
            {
                ReadString(_value);
                long seen = ReadMilliseconds();
                if (type == TypeStreamListpacks3)
                    ReadMilliseconds(); // active-time (Redis 7.2): not kept here
                visitor.StreamConsumer(_value.Span, seen);
                long owned = ReadCount();
                for (long p = 0; p < owned; p++)
                    visitor.StreamConsumerPending(ReadRawStreamId());
            }
        }
        visitor.EndStream();
    }

    private StreamId ReadRawStreamId()
    {
        Fill(16);
        var id = StreamId.ReadBigEndian(_buffer.AsSpan(_pos, 16));
        _pos += 16;
        return id;
    }

    /// <summary>A millisecond time: 8 bytes little-endian (RDB 9 and later).</summary>
    private long ReadMilliseconds()
    {
        Fill(8);
        long value = BinaryPrimitives.ReadInt64LittleEndian(_buffer.AsSpan(_pos, 8));
        _pos += 8;
        return value;
    }
}
