namespace Diagnostics.Monitor.Windows;

/// <summary>
/// The start of one file operation (FileIo Create, Read, Write, Flush, Cleanup, Close...), from
/// any process: the matcher needs the other processes' starts too, to notice an IRP address
/// reused while it still waits for the server's end of it.
/// </summary>
/// <param name="Irp">IrpPtr: the identity of the operation until its OperationEnd.</param>
/// <param name="FileObject">The open instance (per handle), as the Create of that handle named it.</param>
/// <param name="FileKey">The file itself (per file, shared by handles): what FileIo name events and DiskIo events carry. 0 on a Create.</param>
/// <param name="ProcessId">The issuing process; -1 when TraceEvent could not tell.</param>
/// <param name="ThreadId">The issuing thread (TTID).</param>
/// <param name="Timestamp">QPC ticks, as the session's clock (ClientContext 1) gives them.</param>
/// <param name="Offset">File offset of a read or write; 0 otherwise.</param>
/// <param name="Size">Bytes asked for by a read or write; 0 otherwise.</param>
/// <param name="Path">The opened path of a Create by the server; null otherwise (read only when needed: it allocates).</param>
public readonly record struct EtwFileIoInit(
    EtwFileIoKind Kind,
    ulong Irp,
    ulong FileObject,
    ulong FileKey,
    int ProcessId,
    int ThreadId,
    long Timestamp,
    long Offset = 0,
    int Size = 0,
    string? Path = null);
