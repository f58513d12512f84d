namespace Diagnostics.Contracts;

/// <summary>
/// The answer to an uploaded debug package (POST /api/debug/package): where the studio shows it,
/// what it holds in memory, and what the open packages hold together against their limit.
/// </summary>
public sealed record PackageOpened
{
    public required string Id { get; init; }
    /// <summary>The studio's offline pages for it, relative to the HTTP listener's root.</summary>
    public required string Path { get; init; }
    public required string FileName { get; init; }
    public long MemoryBytes { get; init; }
    public int OpenPackages { get; init; }
    public long OpenPackagesBytes { get; init; }
    public long OpenPackagesLimitBytes { get; init; }
}
