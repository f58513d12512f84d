namespace Diagnostics.Server.Diagnostics.Package;

/// <summary>One file of the debug package and how to write it.</summary>
public sealed record DebugPackageEntry(string FileName, Func<Stream, CancellationToken, Task> Write);
