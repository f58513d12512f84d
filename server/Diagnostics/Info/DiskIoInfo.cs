using System.Text;
using static Diagnostics.Server.Diagnostics.Info.InfoBuilder;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.Latency;

namespace Diagnostics.Server.Diagnostics.Info;

/// <summary>
/// INFO diskio: every disk operation the server made, per purpose (totals) and per thread and
/// purpose, with counts, bytes, time and latency percentiles. Not a Redis section.
/// </summary>
public static class DiskIoInfo
{
    public static void Write(StringBuilder text, DataServer server)
    {
        foreach (var (purpose, total) in DiskIo.Totals())
            Field(text, "io_" + Name(purpose), Describe(total));
        foreach (var record in DiskIo.Snapshot())
        {
            foreach (var purpose in Enum.GetValues<DiskIoPurpose>())
            {
                var stats = record.Read(purpose);
                if (stats.Count == 0)
                    continue;
                text.Append("io_thread_").Append(record.OsThreadId).Append('_').Append(Name(purpose))
                    .Append(":name=").Append(FieldSafe(record.Name))
                    .Append(",alive=").Append(record.IsAlive ? 1 : 0)
                    .Append(',').Append(Describe(stats)).Append("\r\n");
            }
        }
    }

    public static string Name(DiskIoPurpose purpose) => purpose switch
    {
        DiskIoPurpose.AofWrite => "aof_write",
        DiskIoPurpose.AofFsync => "aof_fsync",
        DiskIoPurpose.RewriteRead => "rewrite_read",
        DiskIoPurpose.RewriteWrite => "rewrite_write",
        DiskIoPurpose.LoadRead => "load_read",
        DiskIoPurpose.Manifest => "manifest",
        DiskIoPurpose.Open => "open",
        DiskIoPurpose.Close => "close",
        DiskIoPurpose.Truncate => "truncate",
        DiskIoPurpose.SnapshotWrite => "snapshot_write",
        DiskIoPurpose.SnapshotRead => "snapshot_read",
        _ => purpose.ToString().ToLowerInvariant(),
    };

    private static string Describe(DiskIoStats stats)
        => string.Create(System.Globalization.CultureInfo.InvariantCulture,
            $"count={stats.Count},bytes={stats.Bytes},usec={stats.Micros},errors={stats.Errors},p50_usec={LatencyHistogram.Percentile(stats.Buckets, 0.5)},p99_usec={LatencyHistogram.Percentile(stats.Buckets, 0.99)},max_usec={MaxBucket(stats.Buckets)}");

    /// <summary>Upper bound of the highest non-empty bucket.</summary>
    private static long MaxBucket(long[] buckets)
    {
        for (int i = buckets.Length - 1; i >= 0; i--)
            if (buckets[i] != 0)
                return LatencyHistogram.UpperBoundMicros(i);
        return 0;
    }
}
