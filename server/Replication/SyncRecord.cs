namespace Diagnostics.Server.Replication;

/// <summary>
/// One synchronization with a master, as a diagnostics page shows it: full (an RDB loaded) or
/// partial (+CONTINUE), the RDB's bytes, how long it took from PSYNC to the stream, the keys
/// loaded and what the link read from the network for it. Read-only: a snapshot.
/// </summary>
public sealed record SyncRecord(
    bool Full,
    string MasterHost,
    int MasterPort,
    string ReplId,
    long Offset,
    long RdbBytes,
    long KeysLoaded,
    long NetworkBytesRead,
    double DurationMs,
    long FinishedUnixMs);
