using Diagnostics.Contracts;

namespace Diagnostics.Server.Network;

/// <summary>
/// The last clients the server disconnected for a limit, for the doctor and the API: the log says
/// it once and a counter says how many, but an operator needs to know who. Bounded; a close is
/// rare, so a lock is fine.
/// </summary>
public sealed class ClosedClients
{
    private const int Kept = 32;
    private readonly Lock _gate = new();
    private readonly Queue<ClosedClient> _recent = new();

    public void Record(ClosedClient closed)
    {
        lock (_gate)
        {
            if (_recent.Count == Kept)
                _recent.Dequeue();
            _recent.Enqueue(closed);
        }
    }

    /// <summary>Newest first.</summary>
    public ClosedClient[] Recent()
    {
        lock (_gate)
        {
            var list = _recent.ToArray();
            Array.Reverse(list);
            return list;
        }
    }
}
