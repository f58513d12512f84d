namespace Diagnostics.Contracts;

/// <summary>INFO commandstats and latencystats for one command (subcommands as "config|get").</summary>
public sealed record CommandStatistics
{
    public required string Name { get; init; }
    /// <summary>The command's group in COMMAND DOCS ("string", "generic", "server"...): the studio's families.</summary>
    public required string Group { get; init; }
    public long Calls { get; init; }
    public long Microseconds { get; init; }
    public double MicrosecondsPerCall { get; init; }
    public long RejectedCalls { get; init; }
    public long FailedCalls { get; init; }
    /// <summary>Managed bytes allocated running the command, in all; null for commands flagged fast (not measured: they allocate nothing by design).</summary>
    public long? AllocatedBytes { get; init; }
    /// <summary>Percentiles of the command's latency in microseconds, when latency tracking has data.</summary>
    public double? P50Micros { get; init; }
    public double? P99Micros { get; init; }
    public double? P999Micros { get; init; }
}
