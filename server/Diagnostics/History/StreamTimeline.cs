namespace Diagnostics.Server.Diagnostics.History;

/// <summary>
/// The master's stream offset at each of the last hour's samples: when a given stream byte was
/// written, to the second, so a replica's acknowledged offset can be turned into how long ago the
/// data it lacks was written. Offsets only grow within one history; a smaller one starts over.
/// </summary>
public sealed class StreamTimeline(int capacity)
{
    private readonly long[] _times = new long[capacity];
    private readonly long[] _offsets = new long[capacity];
    private int _next;
    private int _count;

    public void Add(long unixMs, long offset)
    {
        if (_count > 0 && offset < _offsets[(_next - 1 + capacity) % capacity])
            _count = 0;
        _times[_next] = unixMs;
        _offsets[_next] = offset;
        _next = (_next + 1) % capacity;
        _count = Math.Min(_count + 1, capacity);
    }

    /// <summary>
    /// Seconds since the first sample whose offset was past <paramref name="acknowledged"/>: the
    /// oldest unacknowledged byte was written no later than then, so this is a lower bound, exact
    /// to the sample. 0 when the replica has everything sampled so far; the whole timeline when
    /// it lacks bytes older than it.
    /// </summary>
    public double SecondsBehind(long acknowledged, long nowUnixMs)
    {
        int first = (_next - _count + capacity) % capacity;
        for (int i = 0; i < _count; i++)
        {
            int slot = (first + i) % capacity;
            if (_offsets[slot] > acknowledged)
                return Math.Max(0, nowUnixMs - _times[slot]) / 1000.0;
        }
        return 0;
    }
}
