using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// fsync as the kernel timed it is much slower than the disk's own requests: the time goes to the
/// file system (journal commits, writeback of other files on the same disk), not to the device.
/// Only with a monitor attached and both syscall and device events seen.
/// </summary>
public sealed class KernelFsyncRule : IDoctorRule
{
    private const long MinimumP99Micros = 10_000;
    private const long MinimumCalls = 20;

    public string Id => "fsync-slower-than-disk";
    public string Area => "disk";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.Monitor is not { Attached: true } monitor)
            yield break;
        var fsync = new long[MicrosecondBuckets.Count];
        var device = new long[MicrosecondBuckets.Count];
        long calls = 0, requests = 0;
        foreach (var row in monitor.ByTarget)
        {
            if (row.Operation == "fsync")
            {
                calls += row.Count;
                Add(fsync, row.LatencyBuckets);
            }
            else if (row.TargetKind == "device" && row.Operation is "disk_write" or "disk_flush")
            {
                requests += row.Count;
                Add(device, row.LatencyBuckets);
            }
        }
        if (calls < MinimumCalls || requests == 0)
            yield break;
        long fsyncP99 = MicrosecondBuckets.Percentile(fsync, 0.99), deviceP99 = MicrosecondBuckets.Percentile(device, 0.99);
        if (fsyncP99 < MinimumP99Micros || fsyncP99 < 4 * deviceP99)
            yield break;
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = "fsync is slow in the file system, not on the disk",
            Seen = $"The kernel timed {calls} fsync calls at p99 {fsyncP99 / 1000.0:0.#} ms while the disk's {requests} write and flush requests took p99 {deviceP99 / 1000.0:0.#} ms.",
            Advice = "The wait is in the file system: journal commits and other files' writeback on the same disk. Give the AOF its own file system or disk, or use appendfsync everysec.",
            Evidence = new()
            {
                ["fsync_p99_usec"] = fsyncP99.ToString(CultureInfo.InvariantCulture),
                ["device_p99_usec"] = deviceP99.ToString(CultureInfo.InvariantCulture),
                ["fsync_calls"] = calls.ToString(CultureInfo.InvariantCulture),
            },
            Chart = MetricNames.FsyncMaxMicros,
        };
    }

    private static void Add(long[] into, long[] buckets)
    {
        for (int i = 0; i < into.Length && i < buckets.Length; i++)
            into[i] += buckets[i];
    }
}
