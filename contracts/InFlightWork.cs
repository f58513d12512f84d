namespace Diagnostics.Contracts;

/// <summary>
/// Something a thread is doing right now: a command for a client, or the server's own work
/// (an AOF write, an fsync, an expire cycle). Read from a single-writer slot without locks, so
/// it may be a moment stale.
/// </summary>
public sealed record InFlightWork
{
    public required int OsThreadId { get; init; }
    public required string ThreadName { get; init; }
    /// <summary>The command name ("set", "config|get") or the server activity ("aof fsync").</summary>
    public required string Activity { get; init; }
    /// <summary>The client the command runs for; 0 for the server's own work.</summary>
    public long ClientId { get; init; }
    public int Database { get; init; }
    public required long StartedUnixMs { get; init; }
    public required double ElapsedMicros { get; init; }

    /// <summary>The activity of a thread blocked until shards another command holds are free (the command it will run is then its activity).</summary>
    public const string WaitingForShards = "waiting for shards";
}
