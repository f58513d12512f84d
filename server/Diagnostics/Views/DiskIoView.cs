using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.Info;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>The server's disk accounting: one row per thread and purpose that saw operations, then the totals per purpose (thread 0).</summary>
public static class DiskIoView
{
    public static DiskIoFigures[] Build()
    {
        var rows = new List<DiskIoFigures>();
        foreach (var record in DiskIo.Snapshot())
        {
            foreach (var purpose in Enum.GetValues<DiskIoPurpose>())
            {
                var stats = record.Read(purpose);
                if (stats.Count > 0)
                    rows.Add(Figures(record.OsThreadId, record.Name, stats));
            }
        }
        foreach (var (_, stats) in DiskIo.Totals())
            if (stats.Count > 0)
                rows.Add(Figures(0, "all threads", stats));
        return [.. rows];
    }

    private static DiskIoFigures Figures(int tid, string name, DiskIoStats stats) =>
        new(tid, name, DiskIoInfo.Name(stats.Purpose), stats.Count, stats.Bytes, stats.Micros, stats.Errors, stats.Buckets)
        {
            MaxMicros = stats.MaxMicros,
            SlowestFile = stats.SlowestFile,
        };
}
