using System.Threading.Tasks.Sources;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Network;

/// <summary>
/// Holds a shard's executor still so a coordinated command (MSET across shards, FLUSHALL, KEYS)
/// can run on the connection's thread with exclusive access to several shards at once. Shards are
/// always parked in ascending index order, so two coordinators can never deadlock.
/// </summary>
internal sealed class ParkWork : ShardWork, IValueTaskSource
{
    private ManualResetValueTaskSourceCore<bool> _parked = new() { RunContinuationsAsynchronously = true };
    // A semaphore, not an event: a release can never be lost whatever the interleaving.
    private readonly SemaphoreSlim _release = new(0);

    public ValueTask Park(Shard shard)
    {
        _parked.Reset();
        var parked = new ValueTask(this, _parked.Version);
        shard.Post(this);
        return parked;
    }

    public void Release() => _release.Release();

    public override void Execute(Shard shard)
    {
        _parked.SetResult(true);
        _release.Wait();
    }

    void IValueTaskSource.GetResult(short token) => _parked.GetResult(token);
    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _parked.GetStatus(token);
    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _parked.OnCompleted(continuation, state, token, flags);
}
