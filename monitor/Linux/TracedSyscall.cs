using Diagnostics.Monitor.Aggregation;

namespace Diagnostics.Monitor.Linux;

/// <summary>A system call the monitor traces, and the operation it counts as.</summary>
public readonly record struct TracedSyscall(string Name, IoOperation Operation)
{
    /// <summary>An open that makes a socket (accept), not a file (openat): what its descriptor must be when it is named.</summary>
    public bool OpensSocket { get; } = Name.StartsWith("accept", StringComparison.Ordinal);

    /// <summary>
    /// Every call through which the server moves bytes, syncs, or opens and closes descriptors:
    /// the read and write family (files, and sockets or pipes written that way), the socket
    /// calls .NET uses for send and receive, fsync and fdatasync, openat, accept and close.
    /// Accepts count as opens of the new connection: they name its descriptor afresh, so a
    /// number a closed connection held cannot lend its name to the next one.
    /// </summary>
    public static readonly TracedSyscall[] All =
    [
        new("read", IoOperation.Read),
        new("write", IoOperation.Write),
        new("pread64", IoOperation.Read),
        new("pwrite64", IoOperation.Write),
        new("readv", IoOperation.Read),
        new("writev", IoOperation.Write),
        new("fsync", IoOperation.Fsync),
        new("fdatasync", IoOperation.Fsync),
        new("openat", IoOperation.Open),
        new("accept4", IoOperation.Open),
        new("accept", IoOperation.Open),
        new("close", IoOperation.Close),
        new("sendto", IoOperation.Send),
        new("recvfrom", IoOperation.Receive),
        new("sendmsg", IoOperation.Send),
        new("recvmsg", IoOperation.Receive),
    ];

    public static string[] Names()
    {
        var names = new string[All.Length];
        for (int i = 0; i < All.Length; i++)
            names[i] = All[i].Name;
        return names;
    }
}
