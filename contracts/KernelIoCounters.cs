namespace Diagnostics.Contracts;

/// <summary>
/// A thread's I/O as the Linux kernel counts it (/proc/PID/task/TID/io): bytes and calls through
/// the read and write family of system calls (read, pread, readv, write, pwrite, writev: files,
/// pipes, and sockets only when written with those calls, not send/recv/sendmsg), and the bytes
/// that really reached or came from the storage layer.
/// </summary>
public sealed record KernelIoCounters(
    long ReadChars,
    long WriteChars,
    long ReadCalls,
    long WriteCalls,
    long StorageReadBytes,
    long StorageWriteBytes,
    long CancelledWriteBytes);
