namespace Diagnostics.Monitor.Windows;

/// <summary>
/// DiskIo ReadInit, WriteInit or FlushInit (DiskIoInit keyword): a request handed to the disk,
/// logged in the issuing thread's context.
/// </summary>
/// <param name="ThreadId">The issuing thread (IssuingThreadId on Windows 8 and later).</param>
/// <param name="ProcessId">The issuing thread's process; -1 when unknown.</param>
/// <param name="Timestamp">QPC ticks.</param>
public readonly record struct EtwDiskIoInit(EtwDiskIoKind Kind, ulong Irp, int ProcessId, int ThreadId, long Timestamp);
