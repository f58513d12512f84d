namespace Diagnostics.Monitor.Windows;

/// <summary>
/// FileIo OperationEnd: the end of the operation started under <see cref="Irp"/>. It can be
/// logged in another context than the start, and reach the consumer before the start does (the
/// per-CPU buffers of a real-time session are not merged in time order).
/// </summary>
/// <param name="NtStatus">The final NTSTATUS; negative (high bit set) when the operation failed.</param>
/// <param name="ExtraInfo">What the file system returned: bytes moved by a read or write.</param>
/// <param name="ProcessId">The logging context's process; -1 when unknown.</param>
/// <param name="ThreadId">The logging context's thread; -1 when unknown.</param>
/// <param name="Timestamp">QPC ticks.</param>
public readonly record struct EtwFileIoEnd(ulong Irp, int NtStatus, ulong ExtraInfo, int ProcessId, int ThreadId, long Timestamp);
