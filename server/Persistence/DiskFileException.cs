namespace Diagnostics.Server.Persistence;

/// <summary>A failed disk operation, with the operating system's reason ("No space left on device").</summary>
public sealed class DiskFileException : IOException
{
    public DiskFileException(string message) : base(message) { }
    public DiskFileException(string message, Exception inner) : base(message, inner) { }
}
