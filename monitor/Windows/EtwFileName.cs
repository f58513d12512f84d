namespace Diagnostics.Monitor.Windows;

/// <summary>A FileIo name event: the path behind a file key (<see cref="EtwFileIoInit.FileKey"/>, the DiskIo FileObject).</summary>
/// <param name="Path">The path, drive-letter form where TraceEvent could map the volume; null for a delete.</param>
public readonly record struct EtwFileName(EtwFileNameKind Kind, ulong FileKey, string? Path);
