namespace Diagnostics.Server.Engine;

/// <summary>Something to run with exclusive access to one shard: a connection's batch, a park, the cron.</summary>
public abstract class ShardWork
{
    /// <summary>Runs on the shard's executor thread (or under its lock in inline mode).</summary>
    public abstract void Execute(Shard shard);

    /// <summary>Runs with every shard held (inline mode, <see cref="KeyspaceGate"/>): work that touches the whole keyspace.</summary>
    public virtual void ExecuteHoldingAll(Shard[] shards)
        => throw new InvalidOperationException($"{GetType().Name} cannot run across the keyspace");

    /// <summary>
    /// Inline mode: the work was handed to the shard's holder (<see cref="Shard.RunOrHandOff"/>),
    /// which ran it and has let the shard go; <paramref name="failure"/> is what it threw.
    /// <paramref name="continueHere"/> allows the waiter's continuation to run on the calling thread.
    /// </summary>
    public virtual void HandOffCompleted(Exception? failure, bool continueHere)
        => throw new InvalidOperationException($"{GetType().Name} cannot be handed off");

    /// <summary>The work may run long (a whole-keyspace command that left the socket thread for that): a holder on a socket engine thread does not run it for its owner.</summary>
    public virtual bool MayRunLong => false;

    /// <summary>Reply bytes the work's owner has waiting to be sent, so a holder can bound how much it makes others hold at once.</summary>
    public virtual long PendingOutputBytes => 0;

    /// <summary>The next work in a holder's list of handed-off work it ran; only that holder touches it.</summary>
    internal ShardWork? NextRan;
    /// <summary>What the work threw when a holder ran it for its owner.</summary>
    internal Exception? HandOffFailure;
}
