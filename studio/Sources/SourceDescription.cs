namespace Diagnostics.Studio.Sources;

/// <summary>What the studio is showing: the live server, or a package and where and when it was taken.</summary>
public sealed record SourceDescription(
    SourceKind Kind,
    string Host,
    int ProcessId,
    string ProductVersion,
    DateTimeOffset? TakenAt = null,
    string? PackageId = null,
    string? FileName = null)
{
    public bool IsLive => Kind == SourceKind.Live;
}
