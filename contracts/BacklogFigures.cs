namespace Diagnostics.Contracts;

/// <summary>
/// A master's replication backlog: how much history it keeps for partial resyncs
/// (repl-backlog-size), how much it has, from which offset, and what it holds in memory (it also
/// keeps what slow replicas have not been sent, beyond the size).
/// </summary>
public sealed record BacklogFigures
{
    public bool Active { get; init; }
    public long Size { get; init; }
    public long FirstByte { get; init; }
    public long HistoryLength { get; init; }
    public long HeldBytes { get; init; }
    public long MemoryBytes { get; init; }
    /// <summary>History length as a share of the size, in percent.</summary>
    public double FillPercent => Size > 0 ? HistoryLength * 100.0 / Size : 0;
}
