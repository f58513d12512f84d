namespace Diagnostics.Doctor;

/// <summary>
/// What a debug package from elsewhere may cost to open. A package is untrusted input: its
/// central directory can lie about sizes, and a few hundred KB of deflate can unpack to GBs.
/// A package of a busy server, taken after an hour, unpacks to about 8 MB (7.7 MB of it the
/// hour of history) and zips to well under 1 MB, so the defaults leave four times that or more.
/// </summary>
public sealed record PackageLimits
{
    public static readonly PackageLimits Default = new();

    /// <summary>The settings that change these limits; every refusal names the one it hit.</summary>
    public const string PackageSizeSetting = "studio-package-max-size";
    public const string EntrySizeSetting = "studio-package-max-entry";
    public const string UnpackedSizeSetting = "studio-package-max-unpacked";
    public const string MemorySetting = "studio-package-memory";

    /// <summary>The server writes 21 entries; a few hundred would only be there to cost memory.</summary>
    public const int MaxEntries = 128;
    /// <summary>The server's entries are plain names of at most 16 characters.</summary>
    public const int MaxNameLength = 128;
    /// <summary>The deepest contract nests 5 levels; depth costs stack and time, never data.</summary>
    public const int MaxJsonDepth = 16;

    /// <summary>The zip as uploaded.</summary>
    public long MaxPackageBytes { get; init; } = 32L * 1024 * 1024;
    /// <summary>One entry, unpacked.</summary>
    public long MaxEntryBytes { get; init; } = 32L * 1024 * 1024;
    /// <summary>All entries together, unpacked.</summary>
    public long MaxUnpackedBytes { get; init; } = 128L * 1024 * 1024;
    /// <summary>
    /// Managed memory that opening one package may allocate, and that the open packages may hold
    /// together (the studio closes the oldest to make room).
    /// </summary>
    public long MaxMemoryBytes { get; init; } = 256L * 1024 * 1024;
}
