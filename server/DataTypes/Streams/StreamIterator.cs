using Diagnostics.Server.DataTypes.Packed;

namespace Diagnostics.Server.DataTypes.Streams;

/// <summary>
/// Walks the live entries of a stream whose IDs are within [start, end], forwards or backwards
/// (XRANGE, XREVRANGE, XREAD, XREADGROUP, the AOF rewrite). The stream must not change while it
/// walks: entries are read in place from their nodes.
/// </summary>
public unsafe ref struct StreamIterator
{
    private readonly StreamValue* _stream;
    private readonly StreamId _start;
    private readonly StreamId _end;
    private readonly bool _reverse;
    private int _node;
    private int _offset;
    private int _firstOffset;

    public StreamIterator(StreamValue* stream, StreamId start, StreamId end, bool reverse = false)
    {
        _stream = stream;
        _start = start;
        _end = end;
        _reverse = reverse;
        if (!reverse)
        {
            _node = Math.Max(0, stream->NodeAtOrBefore(start));
            _offset = stream->NodeCount == 0 ? 0 : stream->Node(_node)->FirstEntry();
        }
        else
        {
            _node = stream->NodeAtOrBefore(end);
            if (_node >= 0)
                EnterFromEnd();
        }
    }

    private void EnterFromEnd()
    {
        StreamNode* node = _stream->Node(_node);
        _firstOffset = node->FirstEntry();
        int end = NativeListpack.Bytes(node->Listpack) - 1;
        _offset = end > _firstOffset ? node->PreviousEntry(end) : -1;
    }

    /// <summary>The next live entry in range; false when there are no more.</summary>
    public bool Next(out StreamEntry entry)
    {
        entry = default;
        return _reverse ? Backward(out entry) : Forward(out entry);
    }

    private bool Forward(out StreamEntry entry)
    {
        entry = default;
        while (_node < _stream->NodeCount)
        {
            StreamNode* node = _stream->Node(_node);
            if (NativeListpack.IsEnd(node->Listpack, _offset))
            {
                if (++_node < _stream->NodeCount)
                    _offset = _stream->Node(_node)->FirstEntry();
                continue;
            }
            entry = node->EntryAt(_offset);
            _offset = node->NextEntry(_offset);
            if (entry.Id > _end)
            {
                _node = int.MaxValue;
                return false;
            }
            if (!entry.Deleted && entry.Id >= _start)
                return true;
        }
        return false;
    }

    private bool Backward(out StreamEntry entry)
    {
        entry = default;
        while (_node >= 0)
        {
            if (_offset < _firstOffset)
            {
                if (--_node >= 0)
                    EnterFromEnd();
                continue;
            }
            StreamNode* node = _stream->Node(_node);
            entry = node->EntryAt(_offset);
            _offset = _offset == _firstOffset ? -1 : node->PreviousEntry(_offset);
            if (entry.Id < _start)
            {
                _node = -1;
                return false;
            }
            if (!entry.Deleted && entry.Id <= _end)
                return true;
        }
        return false;
    }
}
