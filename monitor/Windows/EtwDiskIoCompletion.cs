namespace Diagnostics.Monitor.Windows;

/// <summary>
/// DiskIo Read, Write or FlushBuffers: a disk request completed, logged in whatever context
/// completed it (often a DPC on another process's thread), so it names its issuer itself.
/// </summary>
/// <param name="TransferSize">Bytes moved; 0 for a flush.</param>
/// <param name="ElapsedNanos">HighResResponseTime: from the request's start to its completion.</param>
/// <param name="FileKey">The payload's FileObject, which is the file key of FileIo events and name events; 0 for a flush.</param>
/// <param name="IssuingThreadId">The thread that issued the request; -1 when the event is older than version 3.</param>
/// <param name="Timestamp">QPC ticks of the completion.</param>
public readonly record struct EtwDiskIoCompletion(
    EtwDiskIoKind Kind,
    ulong Irp,
    int DiskNumber,
    int TransferSize,
    long ElapsedNanos,
    ulong FileKey,
    int IssuingThreadId,
    long Timestamp);
