namespace Diagnostics.Doctor;

/// <summary>
/// A debug package that cannot be opened: not a zip, not a package, damaged, or over one of the
/// <see cref="PackageLimits"/>. The message is written for the person who tried to open it.
/// </summary>
public sealed class InvalidPackageException : Exception
{
    public InvalidPackageException(string message, string? limit = null, Exception? inner = null)
        : base(message, inner) => Limit = limit;

    /// <summary>The setting whose limit the package went over; null when it is broken rather than too big.</summary>
    public string? Limit { get; }
}
