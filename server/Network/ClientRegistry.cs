using System.Collections.Concurrent;

namespace Diagnostics.Server.Network;

/// <summary>The connected clients, by id (CLIENT LIST, CLIENT KILL, INFO clients, maxclients).</summary>
public sealed class ClientRegistry
{
    private readonly ConcurrentDictionary<long, ClientConnection> _clients = new();
    private long _nextId;
    private int _admitted;

    public int Count => _clients.Count;

    /// <summary>Largest unsent client output of the last seconds (INFO client_recent_max_output_buffer).</summary>
    public RecentMaximum RecentMaxOutputBuffer { get; } = new();
    /// <summary>The last clients disconnected for a limit, and why.</summary>
    public ClosedClients Closed { get; } = new();

    public long NextId() => Interlocked.Increment(ref _nextId);

    /// <summary>
    /// Takes one of <paramref name="maxClients"/> places, atomically: connections accepted at the
    /// same moment on several I/O threads cannot all see room for one more. Give it back with
    /// <see cref="Release"/> when the client goes.
    /// </summary>
    public bool TryAdmit(int maxClients)
    {
        if (Interlocked.Increment(ref _admitted) <= maxClients)
            return true;
        Interlocked.Decrement(ref _admitted);
        return false;
    }

    public void Release() => Interlocked.Decrement(ref _admitted);

    public void Add(ClientConnection client) => _clients[client.Id] = client;

    public void Remove(ClientConnection client) => _clients.TryRemove(client.Id, out _);

    public ClientConnection? Find(long id) => _clients.GetValueOrDefault(id);

    /// <summary>
    /// INFO's per-client figures in one pass. Enumerating the dictionary itself takes no lock and
    /// copies nothing, where <see cref="Snapshot"/> (its Values) locks every bucket, copies and sorts.
    /// </summary>
    public ClientTotals Totals()
    {
        int blocked = 0;
        long maxInput = 0, maxOutput = 0, arenas = 0;
        foreach (var (_, client) in _clients)
        {
            if (client.Blocked is not null || client.Paused)
                blocked++;
            long arena = client.ArenaCapacity;
            arenas += arena;
            maxInput = Math.Max(maxInput, client.QueryBufferBytes + arena);
            maxOutput = Math.Max(maxOutput, client.OutputBufferBytes);
        }
        return new ClientTotals(blocked, maxInput, maxOutput, arenas);
    }

    /// <summary>Clients ordered by id, as CLIENT LIST prints them.</summary>
    public List<ClientConnection> Snapshot()
    {
        var list = new List<ClientConnection>(_clients.Values);
        list.Sort((a, b) => a.Id.CompareTo(b.Id));
        return list;
    }
}

/// <summary>Summed and largest per-client figures (INFO clients, INFO memory's mem_clients_normal).</summary>
public readonly record struct ClientTotals(int Blocked, long MaxInputBuffer, long MaxOutputBuffer, long ArenaBytes);
