namespace Diagnostics.Server.Engine;

/// <summary>
/// Background eviction for one shard in executor mode (Redis's evictionTimeProc): a time-limited
/// pass on the shard's own thread that queues itself again, behind whatever work arrived
/// meanwhile, while memory is still over maxmemory and the shard still has keys to give. One
/// instance per shard, queued at most once at a time, so it allocates nothing.
/// </summary>
internal sealed class EvictionWork(ShardEviction state) : ShardWork
{
    public override void Execute(Shard shard)
    {
        state.ClearQueued();
        var eviction = shard.Cron.Eviction;
        if (eviction is null)
            return;
        var result = shard.Cron.EvictInBackground(shard);
        if (result != EvictionResult.Fail && eviction.IsOverLimit && state.TryMarkQueued())
            shard.Post(this);
    }
}
