namespace Diagnostics.Server.Engine;

/// <summary>
/// A point-in-time copy of the keyspace taken without fork and without stopping the server for
/// the length of the copy: at the cut, with every shard held for a moment, each shard is armed
/// with this capture; whoever takes a shard next (a command, the cron, the snapshot's own thread)
/// runs <see cref="Capture"/> first, before anything there can change. So every shard is copied as
/// it was at the cut, and commands across shards stay atomic in the copy, since a command holds
/// all its shards before it touches any. The cost: the first holder of each shard after the cut
/// waits for that shard's copy (a shard is 1/N of the data), and is charged for it.
/// </summary>
public abstract class ShardCapture
{
    /// <summary>
    /// Copies <paramref name="shard"/>, which the calling thread holds, as it is: called once per
    /// shard, before anything there changes after the cut. Must not throw: a failure is the
    /// capture's own to report, never the command's that happened to take the shard.
    /// </summary>
    public abstract void Capture(Shard shard);
}
