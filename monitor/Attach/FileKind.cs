namespace Diagnostics.Monitor.Attach;

/// <summary>What a path is, as lstat tells it: a symbolic link is itself, never its target.</summary>
public enum FileKind
{
    Other,
    Directory,
    Regular,
    Socket,
    SymbolicLink,
}
