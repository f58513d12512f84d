namespace Diagnostics.Server.Persistence;

/// <summary>What replaying one file found: how far it was valid, and whether its tail was cut short.</summary>
public readonly record struct FileReplayResult(long ValidLength, long FileLength, long Commands, bool Truncated);
