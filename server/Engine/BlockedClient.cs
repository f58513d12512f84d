namespace Diagnostics.Server.Engine;

/// <summary>How a blocked client's wait ended.</summary>
public enum BlockOutcome
{
    /// <summary>Another client's write made a key ready and the command was served; its reply is written.</summary>
    Served,
    /// <summary>The key became ready but the command could not be served where it was (an LMOVE into another shard): run it again.</summary>
    Retry,
    /// <summary>CLIENT UNBLOCK ... TIMEOUT: reply as a timeout.</summary>
    UnblockedAsTimeout,
    /// <summary>CLIENT UNBLOCK ... ERROR: reply -UNBLOCKED.</summary>
    UnblockedWithError,
    /// <summary>The client is going away (CLIENT KILL, closed connection): no reply.</summary>
    Interrupted,
    /// <summary>REPLICAOF made this master a replica: reply -UNBLOCKED and close, as Redis's disconnectAllBlockedClients.</summary>
    UnblockedByRoleChange,
}

/// <summary>Serves a blocked command on the ready key whose entry is given; false when it cannot be served here.</summary>
public unsafe delegate bool BlockedServe(BlockedClient waiter, Database database, ReadOnlySpan<byte> key, Entry* entry);

/// <summary>
/// Whether the key's value has what this waiter waits for (a stream reader: entries after its ID);
/// when not, it stays queued. Null: any value of the wanted type will do.
/// </summary>
public unsafe delegate bool BlockedReady(BlockedClient waiter, Database database, ReadOnlySpan<byte> key, Entry* entry);

/// <summary>
/// A client waiting in BLPOP, BZPOPMIN and the like. It is queued on each of its keys; whichever
/// thread makes one of them ready claims it (a compare-and-swap, so a timeout, an unblock and a
/// serve can race safely), serves it there and then, while it still holds the key's shard, and
/// completes <see cref="Done"/> once the writes are handed to the AOF.
/// </summary>
public sealed class BlockedClient(object owner, int commandIndex, BlockedServe serve, ValueType wanted, long deadlineUnixMs, bool timeoutIsNullBulk,
    BlockedReady? ready = null, object? state = null)
{
    private const int Waiting = 0, Claimed = 1, Abandoned = 2;
    private int _state;

    /// <summary>The waiting connection.</summary>
    public object Owner { get; } = owner;
    /// <summary>Which command of the owner's current batch is blocked.</summary>
    public int CommandIndex { get; } = commandIndex;
    public BlockedServe Serve { get; } = serve;
    /// <summary>Checked before serving; null when any value of the <see cref="Wanted"/> type serves it.</summary>
    public BlockedReady? Ready { get; } = ready;
    /// <summary>What the command resolved when it blocked (XREAD's IDs for "$"), for its serve.</summary>
    public object? State { get; } = state;
    /// <summary>The type a key must hold to serve this client (lists for BLPOP, sorted sets for BZPOPMIN).</summary>
    public ValueType Wanted { get; } = wanted;
    /// <summary>When the wait times out, in unix ms; 0 waits for ever.</summary>
    public long DeadlineUnixMs { get; } = deadlineUnixMs;
    public long BlockedSinceUnixMs { get; } = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    /// <summary>BLMOVE and BRPOPLPUSH time out with a null bulk string; the others with a null array.</summary>
    public bool TimeoutIsNullBulk { get; } = timeoutIsNullBulk;

    public TaskCompletionSource<BlockOutcome> Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public bool IsWaiting => Volatile.Read(ref _state) == Waiting;

    /// <summary>Takes the client for serving; false when it was already served or gave up.</summary>
    public bool TryClaim() => Interlocked.CompareExchange(ref _state, Claimed, Waiting) == Waiting;

    /// <summary>Ends the wait without serving (timeout, unblock, kill); false when a server claimed it first.</summary>
    public bool TryAbandon() => Interlocked.CompareExchange(ref _state, Abandoned, Waiting) == Waiting;

    /// <summary>Ends the wait from outside (CLIENT UNBLOCK, CLIENT KILL) when it is still waiting.</summary>
    public bool Interrupt(BlockOutcome outcome)
    {
        if (!TryAbandon())
            return false;
        Done.TrySetResult(outcome);
        return true;
    }
}
