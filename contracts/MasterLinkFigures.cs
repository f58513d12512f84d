namespace Diagnostics.Contracts;

/// <summary>
/// A replica's link to its master: where it stands (connect, connecting, handshake, transfer,
/// connected), how much of the master's stream it read and applied, and when it last heard from it.
/// </summary>
public sealed record MasterLinkFigures
{
    public required string Host { get; init; }
    public required int Port { get; init; }
    /// <summary>"connect", "connecting", "handshake", "transfer" or "connected".</summary>
    public required string State { get; init; }
    public bool Up => State == "connected";
    /// <summary>The stream read from the master so far (slave_read_repl_offset).</summary>
    public long ReadOffset { get; init; }
    /// <summary>The stream applied (slave_repl_offset).</summary>
    public long AppliedOffset { get; init; }
    /// <summary>Read but not yet applied: the only lag a replica can know (it learns the master's offset from the stream).</summary>
    public long LagBytes { get; init; }
    /// <summary>Seconds since the master last sent anything (master_last_io_seconds_ago); -1 while the link is down.</summary>
    public double LastIoSecondsAgo { get; init; } = -1;
    /// <summary>When the link went down, or 0 while up (or never up).</summary>
    public long DownSinceUnixMs { get; init; }
    /// <summary>A full sync's RDB size and the bytes read of it, while it transfers.</summary>
    public long TransferSize { get; init; }
    public long TransferRead { get; init; }
    public long CommandsApplied { get; init; }
}
