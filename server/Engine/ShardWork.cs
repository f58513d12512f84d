namespace Diagnostics.Server.Engine;

/// <summary>Something to run with exclusive access to one shard: a connection's batch, a park, the cron.</summary>
public abstract class ShardWork
{
    /// <summary>Runs on the shard's executor thread (or under its lock in inline mode).</summary>
    public abstract void Execute(Shard shard);
}
