namespace Diagnostics.Server.Diagnostics.Package;

/// <summary>
/// The one place a debug package's entries come from. Each subsystem adds what it knows (an HTTP
/// endpoint marked as debug information is added automatically, see Api/DebugEntryMetadata);
/// the builder knows no entry by name. Entries are written in the order they were added.
/// </summary>
public sealed class DebugPackageRegistry
{
    private readonly Lock _gate = new();
    private readonly List<DebugPackageEntry> _entries = [];

    /// <summary>Adds an entry; a second entry with the same file name replaces the first.</summary>
    public void Add(string fileName, Func<Stream, CancellationToken, Task> write)
    {
        lock (_gate)
        {
            _entries.RemoveAll(e => e.FileName == fileName);
            _entries.Add(new DebugPackageEntry(fileName, write));
        }
    }

    public DebugPackageEntry[] Entries()
    {
        lock (_gate)
            return [.. _entries];
    }
}
