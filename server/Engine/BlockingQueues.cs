namespace Diagnostics.Server.Engine;

/// <summary>
/// The clients blocked on keys of one database of one shard, per key in arrival order, so the
/// first to block is the first served (Redis's fairness rule). Touched only by whoever holds the
/// shard. Clients that stopped waiting (served on another key, timed out, killed) are dropped
/// lazily: when the key is served, when someone blocks on it again, and by the shard cron.
/// </summary>
public sealed class BlockingQueues
{
    private readonly Dictionary<byte[], Queue<BlockedClient>> _byKey = new(ByteArrayComparer.Instance);
    private readonly Dictionary<byte[], Queue<BlockedClient>>.AlternateLookup<ReadOnlySpan<byte>> _lookup;

    public BlockingQueues() => _lookup = _byKey.GetAlternateLookup<ReadOnlySpan<byte>>();

    /// <summary>Keys with at least one queued client (INFO total_blocking_keys).</summary>
    public int KeyCount => _byKey.Count;

    public bool HasWaiters(ReadOnlySpan<byte> key) => _lookup.ContainsKey(key);

    /// <summary>The keys clients wait on; do not change the queues while enumerating.</summary>
    public IEnumerable<byte[]> Keys => _byKey.Keys;

    public void Add(ReadOnlySpan<byte> key, BlockedClient client)
    {
        if (!_lookup.TryGetValue(key, out var queue))
        {
            queue = new Queue<BlockedClient>();
            _byKey.Add(key.ToArray(), queue);
        }
        else
        {
            Compact(queue);
        }
        queue.Enqueue(client);
    }

    /// <summary>The clients queued on <paramref name="key"/>, oldest first, or null.</summary>
    public Queue<BlockedClient>? QueueOf(ReadOnlySpan<byte> key) => _lookup.TryGetValue(key, out var queue) ? queue : null;

    /// <summary>Forgets a key whose queue ran empty.</summary>
    public void RemoveIfEmpty(ReadOnlySpan<byte> key)
    {
        if (_lookup.TryGetValue(key, out var queue) && queue.Count == 0)
            _lookup.Remove(key);
    }

    /// <summary>Drops clients that stopped waiting, and keys left with none (shard cron).</summary>
    public void Purge()
    {
        List<byte[]>? empty = null;
        foreach (var (key, queue) in _byKey)
        {
            Compact(queue);
            if (queue.Count == 0)
                (empty ??= []).Add(key);
        }
        if (empty is not null)
            foreach (var key in empty)
                _byKey.Remove(key);
    }

    private static void Compact(Queue<BlockedClient> queue)
    {
        for (int i = queue.Count; i > 0; i--)
        {
            var client = queue.Dequeue();
            if (client.IsWaiting)
                queue.Enqueue(client);
        }
    }
}

/// <summary>Byte arrays compared by content, looked up by span without allocating.</summary>
public sealed class ByteArrayComparer : IEqualityComparer<byte[]>, IAlternateEqualityComparer<ReadOnlySpan<byte>, byte[]>
{
    public static readonly ByteArrayComparer Instance = new();

    public bool Equals(byte[]? x, byte[]? y) => x.AsSpan().SequenceEqual(y);
    public int GetHashCode(byte[] bytes) => (int)Keyspace.Hash(bytes);
    public bool Equals(ReadOnlySpan<byte> alternate, byte[] other) => alternate.SequenceEqual(other);
    public int GetHashCode(ReadOnlySpan<byte> alternate) => (int)Keyspace.Hash(alternate);
    public byte[] Create(ReadOnlySpan<byte> alternate) => alternate.ToArray();
}
