namespace Diagnostics.Server.Network;

/// <summary>
/// The largest value seen over the last few seconds, as Redis keeps its "recent" client buffer
/// peaks (CLIENTS_PEAK_MEM_USAGE_SLOTS: one slot per second, 8 of them). Written once a second by
/// the clients cron, read by INFO: a lock is cheap at that pace.
/// </summary>
public sealed class RecentMaximum
{
    private const int Slots = 8;
    private readonly long[] _values = new long[Slots];
    private readonly long[] _seconds = new long[Slots];
    private readonly Lock _gate = new();

    public void Record(long value, long second)
    {
        int slot = (int)(second % Slots);
        lock (_gate)
        {
            if (_seconds[slot] != second)
            {
                _seconds[slot] = second;
                _values[slot] = 0;
            }
            _values[slot] = Math.Max(_values[slot], value);
        }
    }

    /// <summary>The largest value recorded in the <see cref="Slots"/> seconds up to <paramref name="second"/>.</summary>
    public long Max(long second)
    {
        long max = 0;
        lock (_gate)
        {
            for (int i = 0; i < Slots; i++)
                if (second - _seconds[i] < Slots)
                    max = Math.Max(max, _values[i]);
        }
        return max;
    }
}
