namespace Diagnostics.Contracts;

/// <summary>Why a master served a full sync instead of continuing a replica from its backlog.</summary>
public enum FullSyncReason
{
    /// <summary>Not a full sync (or a replica-side record, which does not know).</summary>
    None,
    /// <summary>The replica had nothing to continue from (PSYNC ? -1): a new replica or one that lost its data.</summary>
    NewReplica,
    /// <summary>The replica followed another history (another master, or one before a failover).</summary>
    IdMismatch,
    /// <summary>The replica's offset had left the backlog: it was away while more than repl-backlog-size was written.</summary>
    NotInBacklog,
    /// <summary>The old SYNC command, always a full sync.</summary>
    SyncCommand,
}
