namespace Diagnostics.Server.Engine;

/// <summary>
/// The side effects of one command (or of one shard cron pass), gathered where they happen and
/// handed on once it is done, as Redis's call() does after the command: the command and the
/// deletions it caused as they must be replayed (<see cref="Propagation"/>: the AOF today, MONITOR
/// and replicas later), the keyspace events it raised (some deferred until its own are out), and
/// the keys it made ready for blocked clients, with the clients it served.
///
/// One instance per client (and one per shard for the cron), reused command after command, so
/// opening it allocates nothing. It reaches the code that causes effects explicitly, two ways:
/// commands get it in <c>CommandContext.Effects</c>; the Engine's own deep calls (a lookup that
/// finds a key expired, eviction, a list or sorted set created where clients wait) find it as
/// <see cref="Database.Effects"/>, the scope of whoever holds the database's shard, which the
/// holder attaches when it takes the shard (<see cref="Shard.Effects"/>) and detaches before
/// letting go. The shard rather than a parameter on every Database call because only its holder
/// may touch its data: the scope of the holder is the only one a deep call can mean, and a
/// hundred lookups that almost never expire anything stay as they are. Data no holder attached a
/// scope to (a rewrite's private copy, the keyspace while the AOF or an RDB loads) raises nothing.
/// </summary>
public sealed unsafe class CommandEffects(IKeyspaceEvents? events)
{
    private IKeyspaceEvents? _events = events;
    private List<(KeyspaceEventTypes Type, byte[] Event, byte[] Key, int Database)>? _deferred;
    private List<(Database Database, byte[] Key)>? _ready;
    private List<(BlockedClient Client, BlockOutcome Outcome)>? _served;

    /// <summary>Where the command, and the deletions it caused, are propagated; null while nothing is (AOF off).</summary>
    public ICommandPropagation? Propagation { get; set; }

    /// <summary>Where keyspace events go; null: nowhere (the AOF loader's scope).</summary>
    public IKeyspaceEvents? Events { get => _events; set => _events = value; }

    /// <summary>Opens the scope for the next command: its propagation target (null: nothing is logged).</summary>
    public void Open(ICommandPropagation? propagation, bool mayWrite)
    {
        Propagation = propagation;
        MayWrite = mayWrite;
    }

    /// <summary>
    /// False while a command that only reads runs: while CLIENT PAUSE holds writes, an expired key
    /// it meets is reported missing but left in place (Redis pauses expiry too); a write that got
    /// through before the pause began still deletes it, as it must before it adds the key again.
    /// </summary>
    public bool MayWrite { get; private set; } = true;

    /// <summary>
    /// The scope of the master's client on a replica: an expired key it meets still exists for it
    /// (Redis's expireIfNeeded returns "not expired" for the master), as the master decides when
    /// it goes and sends the DEL.
    /// </summary>
    public bool FromMaster { get; internal set; }

    // ---- keyspace events ---------------------------------------------------------------

    /// <summary>True when an event of <paramref name="type"/> would be published (one field read when none are).</summary>
    public bool Notifies(KeyspaceEventTypes type) => _events is not null && _events.Enabled(type);

    public void Notify(KeyspaceEventTypes type, ReadOnlySpan<byte> eventName, ReadOnlySpan<byte> key, int database)
    {
        if (_events is not null && _events.Enabled(type))
            _events.Notify(type, eventName, key, database);
    }

    /// <summary>
    /// An event that must follow the command's own (the "del" of a list its pop emptied comes after
    /// the "lpop", as in Redis); published by <see cref="FlushDeferred"/> once the command's are out.
    /// </summary>
    public void Defer(KeyspaceEventTypes type, ReadOnlySpan<byte> eventName, ReadOnlySpan<byte> key, int database)
    {
        if (_events is not null && _events.Enabled(type))
            (_deferred ??= []).Add((type, eventName.ToArray(), key.ToArray(), database));
    }

    public void FlushDeferred()
    {
        var deferred = _deferred;
        if (deferred is null || deferred.Count == 0)
            return;
        foreach (var (type, eventName, key, database) in deferred)
            Notify(type, eventName, key, database);
        deferred.Clear();
    }

    // ---- deletions the replay must repeat ---------------------------------------------

    /// <summary>
    /// A key deleted because it expired or was evicted, propagated as DEL, as Redis does: a replay
    /// expires nothing (it cannot know the time each command saw) and evicts nothing (memory
    /// differs), so a write that found a key expired, or made room by evicting one, must find it
    /// deleted on replay too.
    /// </summary>
    public void Deleted(int database, ReadOnlySpan<byte> key)
    {
        if (Propagation is not { } log)
            return;
        log.BeginCommand(database, 2);
        log.Argument("DEL"u8);
        log.Argument(key);
        log.EndCommand();
    }

    // ---- keys made ready for blocked clients ----------------------------------------------

    public bool AnyReady => _ready is { Count: > 0 };

    /// <summary>Notes that <paramref name="key"/> now holds a value blocked clients may want.</summary>
    public void SignalReady(Database database, ReadOnlySpan<byte> key) => (_ready ??= []).Add((database, key.ToArray()));

    /// <summary>
    /// Serves the clients queued on every ready key, oldest first, while the key still holds
    /// something of the type each wants; called by the holder right after the command, so no other
    /// command can take the elements first. Serving may make more keys ready (BLMOVE creates its
    /// destination), which are served in turn. Their pops are propagated after the command.
    /// </summary>
    public void ServeReady(long nowMs)
    {
        var ready = _ready;
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
                if (entry->Type != client.Wanted || (client.Ready is { } isReady && !isReady(client, database, key, entry)))
                {
                    queue.Enqueue(client); // still waiting for its own type, or for more than there is
                    continue;
                }
                if (!client.TryClaim())
                    continue;
                bool served = client.Serve(client, database, key, entry);
                if (served)
                    database.Watched?.Touch(key);
                FlushDeferred();
                (_served ??= []).Add((client, served ? BlockOutcome.Served : BlockOutcome.Retry));
            }
            database.Blocked?.RemoveIfEmpty(key);
        }
        ready.Clear();
    }

    /// <summary>Wakes the clients served; call once their pops are in the AOF's hands.</summary>
    public void ReleaseServed()
    {
        var served = _served;
        if (served is null || served.Count == 0)
            return;
        foreach (var (client, outcome) in served)
            client.Done.TrySetResult(outcome);
        served.Clear();
    }
}
