namespace Diagnostics.Server.Persistence;

/// <summary>
/// An RDB stream that cannot be loaded: corrupt, truncated, or holding data this server does not
/// support. The message names what was wrong and where; <see cref="Offset"/> is the same position,
/// counted in bytes from the start of the RDB (its "REDIS" magic), not from the start of the file.
/// </summary>
public sealed class RdbFormatException : Exception
{
    public RdbFormatException(string problem, long offset)
        : base($"{problem} (at offset {offset} of the RDB)")
    {
        Offset = offset;
    }

    /// <summary>Byte offset of the problem, relative to the start of the RDB.</summary>
    public long Offset { get; }
}
