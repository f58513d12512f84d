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

    /// <summary>Clients ordered by id, as CLIENT LIST prints them.</summary>
    public List<ClientConnection> Snapshot()
    {
        var list = new List<ClientConnection>(_clients.Values);
        list.Sort((a, b) => a.Id.CompareTo(b.Id));
        return list;
    }
}
