namespace Diagnostics.Server.Persistence;

/// <summary>One line of the manifest: a file name, its sequence number and its role.</summary>
public sealed record AofFileInfo(string Name, long Sequence, AofFileType Type);
