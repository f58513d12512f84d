using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Latency;

namespace Diagnostics.Server.Diagnostics.Monitor;

/// <summary>
/// One monitor batch reduced to the history's per-second figures (kernel file, socket and device
/// bytes, fsyncs and the slowest, events and drops, GC pauses and allocations), computed once
/// when the batch arrives so the sampler only copies them.
/// </summary>
public static class MonitorFigures
{
    public static Dictionary<string, double> Of(MonitorBatch batch, long droppedBefore)
    {
        // A last, short interval (the monitor stopping) is stretched so its rates do not spike.
        double seconds = Math.Max((batch.EndUnixMs - batch.StartUnixMs) / 1000.0, 0.25);
        double fileWrite = 0, fileRead = 0, fsyncs = 0, send = 0, receive = 0, deviceWrite = 0, deviceRead = 0;
        int slowestFsyncBucket = -1;
        foreach (var io in batch.Io)
        {
            switch (io.Operation)
            {
                case "write" when io.TargetKind == "file": fileWrite += io.Bytes; break;
                case "read" when io.TargetKind == "file": fileRead += io.Bytes; break;
                case "send": send += io.Bytes; break;
                case "receive": receive += io.Bytes; break;
                case "disk_write": deviceWrite += io.Bytes; break;
                case "disk_read": deviceRead += io.Bytes; break;
                case "fsync":
                    fsyncs += io.Count;
                    for (int i = io.LatencyBuckets.Length - 1; i > slowestFsyncBucket; i--)
                        if (io.LatencyBuckets[i] > 0)
                        {
                            slowestFsyncBucket = i;
                            break;
                        }
                    break;
            }
        }
        double events = 0;
        foreach (var source in batch.Status.Sources)
            events += source.EventsPerSecond;
        var figures = new Dictionary<string, double>(StringComparer.Ordinal)
        {
            [MetricNames.KernelFileWriteBytesPerSecond] = fileWrite / seconds,
            [MetricNames.KernelFileReadBytesPerSecond] = fileRead / seconds,
            [MetricNames.KernelFsyncsPerSecond] = fsyncs / seconds,
            [MetricNames.KernelFsyncMaxMicros] = slowestFsyncBucket < 0 ? 0 : MicrosecondBuckets.UpperBoundMicros(slowestFsyncBucket),
            [MetricNames.KernelSendBytesPerSecond] = send / seconds,
            [MetricNames.KernelReceiveBytesPerSecond] = receive / seconds,
            [MetricNames.KernelDeviceWriteBytesPerSecond] = deviceWrite / seconds,
            [MetricNames.KernelDeviceReadBytesPerSecond] = deviceRead / seconds,
            [MetricNames.MonitorEventsPerSecond] = events,
            [MetricNames.MonitorDroppedPerSecond] = Math.Max(0, Dropped(batch) - droppedBefore) / seconds,
        };
        if (batch.Runtime is { } runtime)
        {
            long slowest = 0, allocated = 0;
            foreach (var pause in runtime.GcPauses)
                slowest = Math.Max(slowest, pause.PauseMicros);
            foreach (var allocation in runtime.Allocations)
                allocated += allocation.Bytes;
            figures[MetricNames.RuntimeGcPausesPerSecond] = runtime.GcPauses.Count / seconds;
            figures[MetricNames.RuntimeGcPauseMaxMicros] = slowest;
            figures[MetricNames.RuntimeAllocatedBytesPerSecond] = allocated / seconds;
        }
        return figures;
    }

    /// <summary>Every event lost so far, at every stage, as this batch reports it (cumulative).</summary>
    public static long Dropped(MonitorBatch batch)
    {
        long dropped = 0;
        foreach (var source in batch.Status.Sources)
            dropped += source.DroppedAtSource + source.DroppedInMonitor;
        return dropped;
    }
}
