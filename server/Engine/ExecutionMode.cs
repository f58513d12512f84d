namespace Diagnostics.Server.Engine;

/// <summary>How a connection's commands reach a shard's data.</summary>
public enum ExecutionMode
{
    /// <summary>
    /// Each shard has its own executor thread; connections hand it whole batches and wait for it.
    /// Lock-free, but every batch costs two thread hand-offs (to the executor and back).
    /// </summary>
    Executor,

    /// <summary>
    /// The connection's thread runs its batch itself while holding the shard's lock, taken once per
    /// batch of consecutive same-shard commands. The default: on the 2-core machines measured it
    /// served about 1.5x the requests of executor mode at pipeline depth 1 (README, Benchmarks).
    /// </summary>
    Inline,
}
