namespace Diagnostics.Monitor.Aggregation;

/// <summary>What an I/O did, whatever the platform's call for it: the rows of the kernel view.</summary>
public enum IoOperation : byte
{
    Read,
    Write,
    Fsync,
    Open,
    Close,
    Send,
    Receive,
    DiskRead,
    DiskWrite,
    DiskFlush,
}

public static class IoOperationNames
{
    private static readonly string[] Names = ["read", "write", "fsync", "open", "close", "send", "receive", "disk_read", "disk_write", "disk_flush"];

    public static string Name(this IoOperation operation) => Names[(int)operation];

    public const int Count = 10;
}
