namespace Diagnostics.Contracts;

/// <summary>manifest.json of a debug package: where and when it was taken, and every entry it holds.</summary>
public sealed record PackageManifest
{
    public const string FileName = "manifest.json";
    /// <summary>Bumped when the package layout changes incompatibly.</summary>
    public const int CurrentFormat = 1;

    public int Format { get; init; } = CurrentFormat;
    public required string Product { get; init; }
    public required string ProductVersion { get; init; }
    public required string Host { get; init; }
    public required string OperatingSystem { get; init; }
    public required int ProcessId { get; init; }
    public required long UptimeSeconds { get; init; }
    public required DateTimeOffset TakenAt { get; init; }
    public required IReadOnlyList<PackageEntry> Entries { get; init; }
    /// <summary>Why the server took this package by itself (a trigger); null when someone asked for it.</summary>
    public string? Trigger { get; init; }
    /// <summary>
    /// Who asked for it, when that login may not see everything (a user's name, as the studio
    /// shows it); null for a whole package.
    /// </summary>
    public string? TakenBy { get; init; }
    /// <summary>What the package leaves out because <see cref="TakenBy"/> may not see it; empty for a whole package (and in packages from before this field).</summary>
    public IReadOnlyList<PackageOmission> Omitted { get; init; } = [];
}
