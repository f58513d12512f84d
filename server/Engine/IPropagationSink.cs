namespace Diagnostics.Server.Engine;

/// <summary>
/// Where the Engine's own propagated effects go when no command carries them (the shard cron's
/// DELs of expired and evicted keys): the AOF implements it, so the Engine does not know the AOF.
/// </summary>
public interface IPropagationSink
{
    /// <summary>False while nothing is propagated (AOF off): the cron then records nothing.</summary>
    bool Enabled { get; }

    /// <summary>A buffer to propagate into, kept by the caller and handed back to <see cref="Commit"/>.</summary>
    ICommandPropagation NewBuffer();

    /// <summary>Takes what <paramref name="buffer"/> holds, in order with the writes of the shard the caller still holds, and empties it.</summary>
    void Commit(ICommandPropagation buffer);
}
