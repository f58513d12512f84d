namespace Diagnostics.Contracts;

/// <summary>One file of a debug package: its size and how long it took, or why it failed.</summary>
public sealed record PackageEntry(string Name, long Bytes, double Milliseconds, string? Error);
