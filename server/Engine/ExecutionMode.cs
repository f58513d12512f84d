namespace Diagnostics.Server.Engine;

/// <summary>How a connection's commands reach a shard's data.</summary>
public enum ExecutionMode
{
    /// <summary>Each shard has its own executor thread; connections hand it whole batches (the default).</summary>
    Executor,
    /// <summary>Connections run commands on their own thread under the shard's lock (kept to measure against).</summary>
    Inline,
}
