using System.Collections.Concurrent;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Network;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Tracking;

/// <summary>
/// Client-side caching (Redis's tracking.c): which clients track keys, the keys their reads
/// remembered (per shard, <see cref="TrackedKeys"/>), the BCAST prefixes, and the invalidations
/// sent when a key changes: a write, an expiry, an eviction, a flush. Messages are queued on the
/// receiving connection like pub/sub messages and leave with its next flush, so a client's own
/// write is answered before the invalidation it causes, as in Redis.
/// The key tables live in tracked native memory (<see cref="TrackedKeys"/>); the per-client
/// settings and the BCAST prefix table are small managed objects, changed only by CLIENT TRACKING.
/// The data path pays one field read (<see cref="Any"/>, or the client's own setting) while
/// nobody tracks.
/// </summary>
public sealed class KeyTracking
{
    private readonly Keyspace _keyspace;
    private readonly ClientRegistry _clients;
    private readonly CommandTable _commands;
    private readonly ConcurrentDictionary<long, ClientConnection> _trackers = new();
    private readonly Lock _lock = new();
    private volatile int _count;
    // Copy-on-write under _lock: writers on any thread read it without a lock.
    private volatile PrefixClients[] _prefixes = [];

    private sealed record PrefixClients(byte[] Prefix, ClientConnection[] Clients);

    public KeyTracking(Keyspace keyspace, ClientRegistry clients, CommandTable commands)
    {
        _keyspace = keyspace;
        _clients = clients;
        _commands = commands;
        foreach (var shard in keyspace.Shards)
            shard.Tracking = this;
    }

    /// <summary>Some client tracks keys: writes, expiries and evictions look for whom to tell.</summary>
    public bool Any => _count != 0;

    /// <summary>INFO tracking_clients.</summary>
    public int Clients => _count;

    /// <summary>INFO tracking_total_prefixes.</summary>
    public int Prefixes => _prefixes.Length;

    /// <summary>INFO tracking_total_keys.</summary>
    public long TotalKeys => SumOverShards(static table => table.Count);

    /// <summary>Tracked bytes the tables hold (already part of used_memory).</summary>
    public long TotalBytes => SumOverShards(static table => table.Bytes);

    /// <summary>INFO tracking_total_items.</summary>
    public long TotalItems => SumOverShards(static table => table.Items);

    /// <summary>One figure of every shard's tracking table, added up (a shard nobody tracked in has none).</summary>
    private long SumOverShards(Func<TrackedKeys, long> figure)
    {
        long total = 0;
        foreach (var shard in _keyspace.Shards)
            if (shard.TrackedKeys is { } table)
                total += figure(table);
        return total;
    }

    /// <summary>
    /// CLIENT TRACKING ON, options already checked: replaces the client's settings (flags are
    /// not kept from before, prefixes are, as Redis's enableTracking does).
    /// </summary>
    public void Enable(ClientConnection client, long redirectId, bool broadcast, bool optIn, bool optOut, bool noLoop, List<byte[]> newPrefixes)
    {
        lock (_lock)
        {
            var old = client.Tracking;
            var prefixes = new List<byte[]>(old?.Prefixes ?? []);
            if (broadcast)
            {
                if (newPrefixes.Count == 0)
                    newPrefixes = [[]];
                foreach (var prefix in newPrefixes)
                {
                    if (prefixes.Exists(p => p.AsSpan().SequenceEqual(prefix)))
                        continue;
                    prefixes.Add(prefix);
                    AddToPrefix(prefix, client);
                }
                prefixes.Sort((a, b) => a.AsSpan().SequenceCompareTo(b));
            }
            client.Tracking = new ClientTracking(redirectId, broadcast, optIn, optOut, noLoop, [.. prefixes]);
            if (old is null)
            {
                _trackers[client.Id] = client;
                _count++;
            }
        }
    }

    /// <summary>CLIENT TRACKING OFF, RESET and disconnect. The keys it read stay in the table until next changed, as in Redis.</summary>
    public void Disable(ClientSession session)
    {
        if (session.Tracking is null || session is not ClientConnection client)
            return;
        lock (_lock)
        {
            var old = client.Tracking;
            if (old is null)
                return;
            foreach (var prefix in old.Prefixes)
                RemoveFromPrefix(prefix, client);
            client.Tracking = null;
            _trackers.TryRemove(client.Id, out _);
            _count--;
        }
    }

    private void AddToPrefix(byte[] prefix, ClientConnection client)
    {
        var table = _prefixes;
        for (int i = 0; i < table.Length; i++)
        {
            if (table[i].Prefix.AsSpan().SequenceEqual(prefix))
            {
                var copy = (PrefixClients[])table.Clone();
                copy[i] = table[i] with { Clients = [.. table[i].Clients, client] };
                _prefixes = copy;
                return;
            }
        }
        // Kept in byte order, as Redis's prefix table is walked: a write under two clients'
        // prefixes is announced in that order.
        PrefixClients[] grown = [.. table, new PrefixClients(prefix, [client])];
        Array.Sort(grown, (a, b) => a.Prefix.AsSpan().SequenceCompareTo(b.Prefix));
        _prefixes = grown;
    }

    private void RemoveFromPrefix(byte[] prefix, ClientConnection client)
    {
        var table = _prefixes;
        for (int i = 0; i < table.Length; i++)
        {
            if (!table[i].Prefix.AsSpan().SequenceEqual(prefix))
                continue;
            var clients = Array.FindAll(table[i].Clients, c => c != client);
            var list = new List<PrefixClients>(table);
            if (clients.Length == 0)
                list.RemoveAt(i);
            else
                list[i] = table[i] with { Clients = clients };
            _prefixes = [.. list];
            return;
        }
    }

    /// <summary>
    /// After any command of a tracking client: a read remembers its keys for it (unless BCAST, or
    /// OPTIN/OPTOUT say otherwise), and a CACHING answer lasts one command (the next, or a whole
    /// MULTI/EXEC), as Redis's resetClient clears it.
    /// </summary>
    public void AfterCommand(ClientSession client, ClientTracking tracking, CommandSpec spec, ArgList args)
    {
        // EVAL_RO and FCALL_RO remember nothing themselves: their script's reads are remembered one by one.
        if ((spec.Flags & (CommandFlags.ReadOnly | CommandFlags.PubSub)) == CommandFlags.ReadOnly && tracking.RemembersReads && spec.Group != "scripting")
            Remember(client.Id, spec, args);
        if (tracking.CachingGiven && !client.InMulti && !client.InTransaction && (spec.Parent ?? spec).Name != "client")
            tracking.CachingGiven = false;
    }

    private void Remember(long id, CommandSpec spec, ArgList args)
    {
        var keys = KeyPositions.Of(spec, args);
        if (!keys.Valid)
            return;
        foreach (int k in keys)
        {
            // The caller holds the key's shard: only its holder touches the shard's table.
            uint hash = Keyspace.Hash(args[k]);
            (_keyspace.ShardOf(hash).TrackedKeys ??= new TrackedKeys()).Add(args[k], hash, id);
        }
    }

    /// <summary>After a successful write by <paramref name="writer"/>: invalidate the keys it may have changed, or everything after a flush.</summary>
    public void Written(ClientSession writer, CommandSpec spec, ArgList args)
    {
        if (spec.Name is "flushall" or "flushdb")
        {
            Flushed();
            return;
        }
        int written = spec.WrittenKeyOf(args);
        if (written > 0)
        {
            if (written < args.Count)
                Invalidate(writer, args[written]);
            return;
        }
        var keys = KeyPositions.Of(spec, args);
        if (!keys.Valid)
            return;
        // BCAST clients hear of a command's keys in one message per prefix, as Redis gathers them.
        bool gather = _prefixes.Length > 0;
        foreach (int k in keys)
            Invalidate(writer, args[k], broadcast: !gather);
        if (gather)
            BroadcastKeys(writer, spec, args);
    }

    /// <summary>
    /// Tells each BCAST client, in one message per prefix, the keys of a multi-key write under it:
    /// in byte order without repeats, as Redis sends the keys it gathered for a prefix (its radix
    /// tree's order). Redis gathers a whole event-loop iteration; here it is one command.
    /// </summary>
    private void BroadcastKeys(ClientSession writer, CommandSpec spec, ArgList args)
    {
        foreach (var entry in _prefixes)
        {
            List<byte[]>? matched = null;
            foreach (int k in KeyPositions.Of(spec, args))
            {
                ReadOnlySpan<byte> key = args[k];
                if (key.StartsWith(entry.Prefix) && !Contains(matched, key))
                    (matched ??= []).Add(key.ToArray());
            }
            if (matched is null)
                continue;
            matched.Sort((a, b) => a.AsSpan().SequenceCompareTo(b));
            foreach (var client in entry.Clients)
            {
                if (client.Tracking is not { Broadcast: true } tracking || (tracking.NoLoop && client == writer))
                    continue;
                Send(client, tracking, default, flush: false, matched);
            }
        }
    }

    private static bool Contains(List<byte[]>? keys, ReadOnlySpan<byte> key)
    {
        if (keys is not null)
            foreach (var k in keys)
                if (key.SequenceEqual(k))
                    return true;
        return false;
    }

    /// <summary>A key expired or was evicted in <paramref name="shard"/> (held by the caller): no client did it, so NOLOOP spares nobody.</summary>
    public void KeyRemoved(ReadOnlySpan<byte> key, uint hash, Shard shard) => Invalidate(null, key, hash, shard);

    private void Invalidate(ClientSession? writer, ReadOnlySpan<byte> key, bool broadcast = true)
    {
        // One hash: it routes the key to its shard and finds it in the shard's table.
        uint hash = Keyspace.Hash(key);
        Invalidate(writer, key, hash, _keyspace.ShardOf(hash), broadcast);
    }

    private void Invalidate(ClientSession? writer, ReadOnlySpan<byte> key, uint hash, Shard shard, bool broadcast = true)
    {
        var prefixes = broadcast ? _prefixes : [];
        foreach (var entry in prefixes)
        {
            if (!key.StartsWith(entry.Prefix))
                continue;
            foreach (var client in entry.Clients)
            {
                if (client.Tracking is not { Broadcast: true } tracking || (tracking.NoLoop && client == writer))
                    continue;
                Send(client, tracking, key, flush: false);
            }
        }
        if (shard.TrackedKeys is not { } table)
            return;
        // Sending only queues bytes on connections: the table is untouched until Remove.
        var ids = table.IdsOf(key, hash);
        if (ids.IsEmpty)
            return;
        foreach (long id in ids)
        {
            // A client gone, no longer tracking, or now in BCAST mode is not told (as Redis).
            if (!_trackers.TryGetValue(id, out var target) || target.Tracking is not { Broadcast: false } tracking)
                continue;
            if (tracking.NoLoop && target == writer)
                continue;
            Send(target, tracking, key, flush: false);
        }
        table.Remove(key, hash);
    }

    /// <summary>FLUSHALL/FLUSHDB (every shard held): each tracking client is told all its keys are gone; the table empties.</summary>
    private void Flushed()
    {
        foreach (var (_, client) in _trackers)
            if (client.Tracking is { } tracking)
                Send(client, tracking, default, flush: true);
        foreach (var shard in _keyspace.Shards)
            shard.TrackedKeys?.Clear();
    }

    /// <summary>
    /// Redis's sendTrackingMessage: to the redirect target when there is one (a RESP3 push, or a
    /// pub/sub message when it is a subscribed RESP2 client), else to the tracking client itself
    /// when it speaks RESP3. A redirect to a client that has gone marks the redirect broken and
    /// tells a RESP3 tracking client so.
    /// </summary>
    private void Send(ClientConnection tracker, ClientTracking tracking, ReadOnlySpan<byte> key, bool flush, List<byte[]>? keys = null)
    {
        var target = tracker;
        bool redirected = tracking.RedirectId != 0;
        if (redirected)
        {
            if (_clients.Find(tracking.RedirectId) is not { } redirect)
            {
                tracking.BrokenRedirect = true;
                if (tracker.Reply.Protocol == 3)
                    tracker.DeliverTrackingMessage(InvalidationMessages.RedirectBroken(tracking.RedirectId));
                return;
            }
            target = redirect;
        }
        bool push = target.Reply.Protocol == 3;
        if (!push && !(redirected && target.Subscriptions > 0))
            return; // RESP2 has no pushes on the tracking connection itself
        target.DeliverTrackingMessage(flush ? InvalidationMessages.ForFlush(push, tracker.Reply.Protocol)
            : keys is not null ? InvalidationMessages.ForKeys(push, keys)
            : InvalidationMessages.ForKey(push, key));
    }
}
