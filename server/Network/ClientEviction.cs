using Diagnostics.Server.Configuration;

namespace Diagnostics.Server.Network;

/// <summary>
/// maxmemory-clients, as Redis 7.0's client eviction: when the buffers of all clients together
/// (<see cref="ClientConnection.MemoryUsage"/>) go over the limit, the clients using the most are
/// disconnected until the rest fit, except those that asked for CLIENT NO-EVICT.
///
/// The total is recomputed by the clients cron once a second, and kept current in between by the
/// connections whose input is growing: one reading a large command reports its growth after each
/// read and is evicted while it is still sending, as in Redis. Connections do not report per
/// command, so the data path pays nothing; a change that no read or cron pass saw yet counts a
/// second late.
/// </summary>
public sealed class ClientEviction(ServerConfig config, ClientRegistry clients)
{
    private long _total;
    private long _evicted;
    private int _evicting;

    /// <summary>Clients disconnected by maxmemory-clients since start (INFO stats evicted_clients).</summary>
    public long EvictedClients => Volatile.Read(ref _evicted);

    /// <summary>The limit in bytes now; 0 when off (a percentage of an unset maxmemory is off too).</summary>
    public long Limit => config.MaxMemoryClientsPercent > 0
        ? config.MaxMemory / 100 * config.MaxMemoryClientsPercent
        : config.MaxMemoryClientsBytes;

    /// <summary>A connection whose input grew (a command still arriving): adds its growth, evicts when over.</summary>
    internal void InputGrew(ClientConnection client)
    {
        long limit = Limit;
        if (limit == 0)
            return;
        if (Interlocked.Add(ref _total, client.TakeMemoryDelta()) > limit)
            Evict(limit);
    }

    internal void Closed(ClientConnection client) => Interlocked.Add(ref _total, -client.ForgetReportedMemory());

    /// <summary>The clients cron's pass: the exact total, then eviction if it is over.</summary>
    internal void Sum(List<ClientConnection> connected)
    {
        long total = 0;
        foreach (var client in connected)
        {
            client.TakeMemoryDelta();
            total += client.MemoryUsage;
        }
        Volatile.Write(ref _total, total);
        long limit = Limit;
        if (limit != 0 && total > limit)
            Evict(limit);
    }

    /// <summary>Disconnects the biggest evictable clients until the rest fit; one evictor at a time.</summary>
    private void Evict(long limit)
    {
        if (Interlocked.Exchange(ref _evicting, 1) != 0)
            return;
        try
        {
            var connected = clients.Snapshot();
            // Sizes taken once: they change while we look, and a sort needs them to hold still.
            var sizes = new long[connected.Count];
            var order = connected.ToArray();
            long total = 0;
            for (int i = 0; i < order.Length; i++)
            {
                // One already on its way out frees what it holds without anyone else going too.
                if (order[i].Killed || order[i].OutputLimitReached)
                    continue;
                order[i].TakeMemoryDelta();
                sizes[i] = order[i].MemoryUsage;
                total += sizes[i];
            }
            Array.Sort(sizes, order);
            long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            for (int i = order.Length - 1; i >= 0 && total > limit; i--)
            {
                var client = order[i];
                if (client.NoEvict || client.Killed || client.OutputLimitReached)
                    continue; // never evicted, or already going (its size was not counted)
                Interlocked.Increment(ref _evicted);
                client.EvictForClientMemory(now);
                client.ForgetReportedMemory(); // out of the total now, not again when it closes
                total -= sizes[i];
            }
            Volatile.Write(ref _total, total);
        }
        finally
        {
            Volatile.Write(ref _evicting, 0);
        }
    }
}
