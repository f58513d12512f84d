using Diagnostics.Studio.Security;

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

    /// <summary>What a login must be allowed to have the whole package: what each of its entries needs to be seen on its own.</summary>
    public StudioPermissions Permissions
    {
        get
        {
            lock (_gate)
                return _permissions;
        }
    }
    private StudioPermissions _permissions;

    /// <summary>Adds an entry that needs <paramref name="permissions"/> to be seen; a second entry with the same file name replaces the first.</summary>
    public void Add(string fileName, Func<Stream, StudioGrant?, CancellationToken, Task> write, StudioPermissions permissions)
    {
        lock (_gate)
        {
            _entries.RemoveAll(e => e.FileName == fileName);
            _entries.Add(new DebugPackageEntry(fileName, write, permissions));
            _permissions |= permissions;
        }
    }

    public DebugPackageEntry[] Entries()
    {
        lock (_gate)
            return [.. _entries];
    }
}
