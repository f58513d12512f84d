using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Diagnostics.Package;

/// <summary>
/// One file of the debug package, how to write it as a login sees it (null: everything), and what a
/// login must be allowed to see it at all.
/// </summary>
public sealed record DebugPackageEntry(string FileName, Func<Stream, StudioGrant?, CancellationToken, Task> Write, StudioPermissions Permissions);
