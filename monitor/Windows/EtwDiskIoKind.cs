namespace Diagnostics.Monitor.Windows;

/// <summary>A request on a physical disk (DiskIo Read, Write, FlushBuffers and their Init events).</summary>
public enum EtwDiskIoKind : byte
{
    Read,
    Write,
    Flush,
}
