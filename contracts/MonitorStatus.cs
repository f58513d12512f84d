namespace Diagnostics.Contracts;

/// <summary>The monitor process and its event sources, as it reports itself.</summary>
public sealed record MonitorStatus
{
    public int MonitorPid { get; init; }
    public int ServerPid { get; init; }
    public required string Host { get; init; }
    public required string Platform { get; init; }
    public required string Version { get; init; }
    /// <summary>Root on Linux, Administrator on Windows: the monitor refuses to run otherwise, so a report says true.</summary>
    public bool Elevated { get; init; }
    public long StartedUnixMs { get; init; }
    public IReadOnlyList<MonitorSourceStatus> Sources { get; init; } = [];
    /// <summary>Batches the monitor could not deliver (the server unreachable or slow) and dropped from its bounded queue.</summary>
    public long DroppedBatches { get; init; }
}
