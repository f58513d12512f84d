namespace Diagnostics.Server.Engine;

/// <summary>
/// Holds one executor thread still until released, so a rare whole-keyspace operation (loading
/// the AOF, snapshotting it when the AOF is turned on) can run on another thread with every shard
/// quiet. Blocking, unlike a connection's ParkWork: its callers are not on the request path.
/// Not disposed: the executor may still be returning from the wait when the holder moves on.
/// </summary>
internal sealed class HoldWork : ShardWork
{
    private readonly ManualResetEventSlim _held = new(false);
    private readonly ManualResetEventSlim _released = new(false);

    public void WaitUntilHeld() => _held.Wait();

    public void Release() => _released.Set();

    public override void Execute(Shard shard)
    {
        _held.Set();
        _released.Wait();
    }
}
