namespace Diagnostics.Contracts;

/// <summary>
/// The debug-package triggers: when the server takes a package by itself (a doctor finding of
/// <see cref="Severity"/> or worse appears, or a metric stays past a threshold), how often at
/// most, and the packages kept.
/// </summary>
public sealed record TriggerReport
{
    /// <summary>"off", "warning" or "critical": the least severe finding that takes a package.</summary>
    public required string Severity { get; init; }
    /// <summary>Each as "metric threshold seconds": the metric above the threshold for that long.</summary>
    public required IReadOnlyList<string> MetricRules { get; init; }
    public required int IntervalSeconds { get; init; }
    public required int Keep { get; init; }
    public required string Folder { get; init; }
    /// <summary>Packages taken since the server started.</summary>
    public long Taken { get; init; }
    /// <summary>Triggers that fired within the interval of the last package, so took none.</summary>
    public long Skipped { get; init; }
    public long Failed { get; init; }
    /// <summary>Why the last trigger fired without a package (interval, failure); null when none did.</summary>
    public string? LastSkipped { get; init; }
    /// <summary>The packages in the folder, newest first.</summary>
    public IReadOnlyList<TriggeredPackage> Packages { get; init; } = [];
}

/// <summary>
/// One package a trigger took: its file name in the folder, why, and what it cost (the time to
/// build it, and its slowest entry). Cost is known for packages this process took; for older
/// ones it is 0.
/// </summary>
public sealed record TriggeredPackage(string Name, long TakenUnixMs, string Reason, long Bytes, double BuildMilliseconds, string? SlowestEntry);
