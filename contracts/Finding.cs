namespace Diagnostics.Contracts;

/// <summary>
/// What a doctor rule concluded: what was seen, the figures that show it, and what to do.
/// <see cref="Chart"/> names the history series that shows the problem, for the studio's link.
/// </summary>
public sealed record Finding
{
    public required string Rule { get; init; }
    /// <summary>What the finding is about: "memory", "latency", "clients", "persistence", "runtime", "cpu", "security".</summary>
    public required string Area { get; init; }
    public required FindingSeverity Severity { get; init; }
    public required string Title { get; init; }
    public required string Seen { get; init; }
    public required string Advice { get; init; }
    public Dictionary<string, string> Evidence { get; init; } = [];
    public string? Chart { get; init; }
}
