using System.Collections.Concurrent;

namespace Diagnostics.Server.Network;

/// <summary>The connected clients, by id (CLIENT LIST, CLIENT KILL, INFO clients, maxclients).</summary>
public sealed class ClientRegistry
{
    private readonly ConcurrentDictionary<long, ClientConnection> _clients = new();
    private long _nextId;

    public int Count => _clients.Count;

    /// <summary>Largest unsent client output of the last seconds (INFO client_recent_max_output_buffer).</summary>
    public RecentMaximum RecentMaxOutputBuffer { get; } = new();

    public long NextId() => Interlocked.Increment(ref _nextId);

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
