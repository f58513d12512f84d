namespace Diagnostics.Server.Engine;

/// <summary>
/// Keys that became ready for blocked clients during the command running on this thread (a list
/// or sorted set created where clients wait), and the clients served because of them. The
/// thread that made a key ready serves its clients right after the command, still holding the
/// shard, so no other command can take the elements first; the served clients are released only
/// after the command's writes, and the pops made for them, were handed to the AOF in that order.
/// </summary>
public static unsafe class ReadyKeys
{
    [ThreadStatic] private static List<(Database Database, byte[] Key)>? t_ready;
    [ThreadStatic] private static List<(BlockedClient Client, BlockOutcome Outcome)>? t_served;

    public static bool AnyReady => t_ready is { Count: > 0 };

    /// <summary>Notes that <paramref name="key"/> now holds a value blocked clients may want.</summary>
    public static void Signal(Database database, ReadOnlySpan<byte> key) => (t_ready ??= []).Add((database, key.ToArray()));

    /// <summary>
    /// Serves the clients queued on every ready key, oldest first, while the key still holds
    /// something of the type each wants. Serving may make more keys ready (BLMOVE creates its
    /// destination), which are served in turn.
    /// </summary>
    public static void ServeAll(long nowMs)
    {
        var ready = t_ready;
        if (ready is null)
            return;
        for (int i = 0; i < ready.Count; i++)
        {
            var (database, key) = ready[i];
            var queue = database.Blocked?.QueueOf(key);
            if (queue is null)
                continue;
            int remaining = queue.Count;
            while (remaining-- > 0)
            {
                Entry* entry = database.Lookup(key, Keyspace.Hash(key), nowMs);
                if (entry == null)
                    break;
                var client = queue.Dequeue();
                if (!client.IsWaiting)
                    continue;
                if (entry->Type != client.Wanted)
                {
                    queue.Enqueue(client); // still waiting for its own type
                    continue;
                }
                if (!client.TryClaim())
                    continue;
                bool served = client.Serve(client, database, key, entry);
                if (served)
                    database.Watched?.Touch(key);
                PubSub.KeyspaceNotifier.FlushDeferred();
                (t_served ??= []).Add((client, served ? BlockOutcome.Served : BlockOutcome.Retry));
            }
            database.Blocked?.RemoveIfEmpty(key);
        }
        ready.Clear();
    }

    /// <summary>Wakes the clients served on this thread; call once their pops are in the AOF's hands.</summary>
    public static void ReleaseServed()
    {
        var served = t_served;
        if (served is null || served.Count == 0)
            return;
        foreach (var (client, outcome) in served)
            client.Done.TrySetResult(outcome);
        served.Clear();
    }
}
