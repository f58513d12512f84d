namespace Diagnostics.Server.Persistence;

/// <summary>A failed disk operation, with the operating system's reason.</summary>
public sealed class DiskFileException : IOException
{
    public DiskFileException(string message, int errno) : base(message) => Errno = errno;
    public DiskFileException(string message, Exception inner) : base(message, inner) { }

    /// <summary>The errno on Linux, 0 where unknown.</summary>
    public int Errno { get; }
}
