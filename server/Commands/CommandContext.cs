using System.Runtime.CompilerServices;
using System.Text;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>
/// What a handler sees: the arguments, the client, the reply writer, and access to the shard(s)
/// it holds. A command routed to one shard runs on that shard's executor; a coordinated command
/// runs with all its shards parked; either way <see cref="Database"/> finds a key's data.
/// </summary>
public unsafe ref struct CommandContext
{
    public CommandContext(DataServer server, ClientSession client, Keyspace keyspace, ArgList args, CommandSpec spec,
        long nowMs, CommandEffects effects, bool replaying = false, AofRecordBuffer? records = null)
    {
        Effects = effects;
        Server = server;
        Client = client;
        Keyspace = keyspace;
        Args = args;
        Spec = spec;
        NowMs = nowMs;
        ExpireClockMs = replaying ? 0 : nowMs;
        Records = records;
    }

    public readonly DataServer Server;
    public readonly ClientSession Client;
    /// <summary>The data the command acts on: the server's, or a rewrite's private copy being rebuilt from files.</summary>
    public readonly Keyspace Keyspace;
    public readonly ArgList Args;
    public readonly CommandSpec Spec;
    /// <summary>The command's time: one clock reading per command, as Redis caches mstime.</summary>
    public readonly long NowMs;
    /// <summary>
    /// The time keys are expired against: <see cref="NowMs"/>, except while replaying the AOF, when
    /// it is 0 and nothing expires (as in Redis): the replay must see every key the original
    /// commands saw, or an INCR on a key that has since expired would recreate it without its TTL.
    /// Keys past their time go once the load is done.
    /// </summary>
    public readonly long ExpireClockMs;
    /// <summary>
    /// The effects scope the command reports to (keyspace events, keys made ready): its client's,
    /// or, for a blocked client served after another's write, the scope of that write's command.
    /// </summary>
    public readonly CommandEffects Effects;
    /// <summary>Where this write is logged for the AOF; null when nothing is logged (AOF off, reads, replay).</summary>
    public readonly AofRecordBuffer? Records;
    /// <summary>Set when the handler replied with an error (failed_calls).</summary>
    public bool Failed;
    /// <summary>How the write is logged: its own arguments unless the handler says otherwise.</summary>
    public AofLogging Logging;

    public readonly RespWriter Reply => Client.Reply;
    public readonly int ArgCount => Args.Count;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly ReadOnlySpan<byte> Arg(int index) => Args[index];

    /// <summary>The client's selected database in the shard that owns <paramref name="key"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly Database Database(ReadOnlySpan<byte> key, out uint hash)
    {
        hash = Engine.Keyspace.Hash(key);
        return Keyspace.ShardOf(hash).Databases[Client.DatabaseIndex];
    }

    /// <summary>The shard that owns <paramref name="key"/>.</summary>
    public readonly Shard ShardOf(ReadOnlySpan<byte> key) => Keyspace.ShardOf(Engine.Keyspace.Hash(key));

    /// <summary>
    /// Finds a live key for reading (Redis's lookupKeyRead): counts the keyspace hit or miss and,
    /// unless <paramref name="touch"/> is false (TYPE, TTL, OBJECT: LOOKUP_NOTOUCH) or the client
    /// set CLIENT NO-TOUCH, updates the access clock and LFU counter. Returns the entry's slot.
    /// </summary>
    public readonly Entry** LookupForRead(ReadOnlySpan<byte> key, out Database database, out uint hash, bool touch = true)
    {
        database = Database(key, out hash);
        Entry** slot = database.LookupSlot(key, hash, ExpireClockMs);
        var counters = Diagnostics.Threads.ThreadCounters.Current;
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
        EntryAccess.Record(entry);
    }

    /// <summary>
    /// Logs this write as other commands than its own arguments: the effective command, so a
    /// replay is deterministic (SET ... PXAT for SET ... EX). Returns the buffer to encode one
    /// command of <paramref name="argCount"/> arguments into (end it with EndCommand), or null when
    /// nothing is being logged. May be called more than once.
    /// </summary>
    public AofRecordBuffer? LogAs(int argCount)
    {
        Logging = AofLogging.Rewritten;
        if (Records is null)
            return null;
        Records.BeginCommand(Client.DatabaseIndex, argCount);
        return Records;
    }

    /// <summary>The write changed nothing (SETNX on an existing key, DEL of missing keys): log nothing.</summary>
    public void LogNothing() => Logging = AofLogging.Nothing;

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

    /// <summary>Parses an integer that must not be negative, replying <paramref name="error"/> when it is not one or is below 0.</summary>
    public bool TryNonNegative(int index, string error, out long value)
    {
        if (NumberFormat.TryParseInt64(Args[index], out value) && value >= 0)
            return true;
        Error(error);
        return false;
    }

    /// <summary>
    /// Reads numkeys at <paramref name="index"/> with Redis's errors: not positive, or more than the
    /// arguments (SINTERCARD's own message by default; LMPOP and ZMPOP answer a syntax error).
    /// </summary>
    public bool TryNumKeys(int index, out int numKeys, string tooMany = "ERR Number of keys can't be greater than number of args")
    {
        numKeys = 0;
        if (!TryInt64(index, out long value))
            return false;
        if (value <= 0)
        {
            Error("ERR numkeys should be greater than 0");
            return false;
        }
        if (value > ArgCount - index - 1)
        {
            Error(tooMany);
            return false;
        }
        numKeys = (int)value;
        return true;
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
