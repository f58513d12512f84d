using Diagnostics.Contracts;

namespace Diagnostics.Studio.Sources;

/// <summary>What the studio is showing: the live server, or a package, where and when it was taken, and by whom when it is partial.</summary>
public sealed record SourceDescription(
    SourceKind Kind,
    string Host,
    int ProcessId,
    string ProductVersion,
    DateTimeOffset? TakenAt = null,
    string? PackageId = null,
    string? FileName = null,
    string? TakenBy = null,
    IReadOnlyList<PackageOmission>? Omitted = null)
{
    /// <summary>A package taken by a login that may not see everything: some of its parts are left out.</summary>
    public bool IsPartial => Omitted is { Count: > 0 };

    public bool IsLive => Kind == SourceKind.Live;
}
