using System.Runtime.CompilerServices;
using System.Text;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Network;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>
/// What a handler sees: the arguments, the client, the reply writer, and access to the shard(s)
/// it holds. A command routed to one shard runs on that shard's executor; a coordinated command
/// runs with all its shards parked; either way <see cref="Database"/> finds a key's data.
/// </summary>
public unsafe ref struct CommandContext
{
    public CommandContext(DataServer server, ClientConnection client, ArgList args, CommandSpec spec, long nowMs)
    {
        Server = server;
        Client = client;
        Args = args;
        Spec = spec;
        NowMs = nowMs;
    }

    public readonly DataServer Server;
    public readonly ClientConnection Client;
    public readonly ArgList Args;
    public readonly CommandSpec Spec;
    /// <summary>The command's time: one clock reading per command, as Redis caches mstime.</summary>
    public readonly long NowMs;
    /// <summary>Set when the handler replied with an error (failed_calls).</summary>
    public bool Failed;

    public readonly RespWriter Reply => Client.Reply;
    public readonly int ArgCount => Args.Count;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly ReadOnlySpan<byte> Arg(int index) => Args[index];

    /// <summary>The client's selected database in the shard that owns <paramref name="key"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly Database Database(ReadOnlySpan<byte> key, out uint hash)
    {
        hash = Keyspace.Hash(key);
        return Server.Keyspace.ShardOf(hash).Databases[Client.DatabaseIndex];
    }

    /// <summary>The shard that owns <paramref name="key"/>.</summary>
    public readonly Shard ShardOf(ReadOnlySpan<byte> key) => Server.Keyspace.ShardOf(Keyspace.Hash(key));

    /// <summary>
    /// Finds a live key for reading (Redis's lookupKeyRead): counts the keyspace hit or miss and,
    /// unless <paramref name="touch"/> is false (TYPE, TTL, OBJECT: LOOKUP_NOTOUCH) or the client
    /// set CLIENT NO-TOUCH, updates the access clock and LFU counter. Returns the entry's slot.
    /// </summary>
    public readonly Entry** LookupForRead(ReadOnlySpan<byte> key, out Database database, out uint hash, bool touch = true)
    {
        database = Database(key, out hash);
        Entry** slot = database.LookupSlot(key, hash, NowMs);
        var counters = Diagnostics.ThreadCounters.Current;
        if (slot == null)
        {
            counters.KeyspaceMisses++;
            return null;
        }
        counters.KeyspaceHits++;
        if (touch)
            Touch(*slot);
        return slot;
    }

    /// <summary>The entry <see cref="LookupForRead"/> finds, or null.</summary>
    public readonly Entry* Read(ReadOnlySpan<byte> key, out Database database)
    {
        Entry** slot = LookupForRead(key, out database, out _);
        return slot == null ? null : *slot;
    }

    /// <summary>Records an access to <paramref name="entry"/> for OBJECT IDLETIME/FREQ and eviction.</summary>
    public readonly void Touch(Entry* entry)
    {
        if (Client.NoTouch)
            return;
        entry->AccessClock = LruClock.Now;
        entry->Frequency = LfuCounter.Increment(entry->Frequency, Random.Shared);
    }

    /// <summary>Replies with an error and marks the call failed.</summary>
    public void Error(string message)
    {
        Failed = true;
        Reply.Error(message);
    }

    public void SyntaxError() => Error(Errors.Syntax);
    public void WrongType() => Error(Errors.WrongType);

    /// <summary>True when argument <paramref name="index"/> equals <paramref name="lowerAscii"/> ignoring case.</summary>
    public readonly bool ArgIs(int index, ReadOnlySpan<byte> lowerAscii) => NumberFormat.EqualsIgnoreCase(Args[index], lowerAscii);

    /// <summary>Parses an integer argument, replying Redis's error when it is not one.</summary>
    public bool TryInt64(int index, out long value, string error = Errors.NotInteger)
    {
        if (NumberFormat.TryParseInt64(Args[index], out value))
            return true;
        Error(error);
        return false;
    }

    public bool TryDouble(int index, out double value)
    {
        if (NumberFormat.TryParseDouble(Args[index], out value))
            return true;
        Error(Errors.NotFloat);
        return false;
    }

    /// <summary>The argument as text, for rare paths (config names, client names); allocates.</summary>
    public readonly string ArgString(int index) => Encoding.UTF8.GetString(Args[index]);
}
