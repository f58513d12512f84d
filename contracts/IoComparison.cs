namespace Diagnostics.Contracts;

/// <summary>
/// One thread's I/O since the monitor attached, as the server accounted it and as the kernel
/// saw it: disk bytes written and read, fsyncs, network bytes in and out. A difference means
/// I/O the server did not account for (or accounted and never made).
/// </summary>
public sealed record IoComparison(
    int ThreadId,
    string ThreadName,
    long ServerDiskWriteBytes,
    long KernelFileWriteBytes,
    long ServerDiskReadBytes,
    long KernelFileReadBytes,
    long ServerFsyncs,
    long KernelFsyncs,
    long ServerNetInBytes,
    long KernelReceiveBytes,
    long ServerNetOutBytes,
    long KernelSendBytes)
{
    /// <summary>True when some pair differs: what the studio highlights.</summary>
    public bool Differs =>
        ServerDiskWriteBytes != KernelFileWriteBytes || ServerDiskReadBytes != KernelFileReadBytes || ServerFsyncs != KernelFsyncs
        || ServerNetInBytes != KernelReceiveBytes || ServerNetOutBytes != KernelSendBytes;
}
