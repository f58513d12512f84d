namespace Diagnostics.Monitor.Aggregation;

/// <summary>
/// A uniform sample of at most <see cref="Capacity"/> events per interval (Vitter's algorithm R):
/// the live event list sees a fair picture of a busy second at a fixed cost.
/// </summary>
public sealed class EventReservoir(int capacity = EventReservoir.DefaultCapacity)
{
    public const int DefaultCapacity = 64;
    private readonly IoEvent[] _events = new IoEvent[capacity];
    private long _seen;

    public int Capacity => _events.Length;

    public void Offer(in IoEvent e)
    {
        long seen = _seen++;
        if (seen < _events.Length)
        {
            _events[seen] = e;
            return;
        }
        long slot = Random.Shared.NextInt64(seen + 1);
        if (slot < _events.Length)
            _events[slot] = e;
    }

    /// <summary>The sample, oldest first, and an empty reservoir for the next interval.</summary>
    public IoEvent[] Cut()
    {
        int count = (int)Math.Min(_seen, _events.Length);
        var sample = _events.AsSpan(0, count).ToArray();
        Array.Sort(sample, static (a, b) => a.UnixMicros.CompareTo(b.UnixMicros));
        _seen = 0;
        return sample;
    }
}
