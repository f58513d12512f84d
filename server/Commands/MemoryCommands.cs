using System.Globalization;
using System.Text;
using Diagnostics.Server.Diagnostics.Info;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// MEMORY USAGE | STATS | MALLOC-STATS | PURGE | DOCTOR | HELP: where the memory goes, from the
/// tracked allocator's figures (the same source as INFO memory and maxmemory). DOCTOR answers
/// from the doctor's rules (DoctorCommands).
/// </summary>
public static unsafe class MemoryCommands
{
    private static readonly string[] HelpLines =
    [
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP",
        "    Prints this help.",
    ];

    public static void Register(CommandTable table)
    {
        const string g = "server";
        const string allocatorDependent = "Depends on how much memory is allocated, could be slow";
        table.Add(new CommandSpec("memory", -2, None, 0, 0, 0, null, g, "A container for memory diagnostics commands.", "4.0.0", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("usage", -3, ReadOnly, 2, 2, 1, Usage, g, "Estimates the memory usage of a key.", "4.0.0", "O(N) where N is the number of samples.")
                { Arguments = [new("key", "key"), new("count", "integer", Optional: true, Token: "SAMPLES")] },
                new CommandSpec("stats", 2, None, 0, 0, 0, Stats, g, "Returns details about memory usage.", "4.0.0"),
                new CommandSpec("malloc-stats", 2, None, 0, 0, 0, MallocStats, g, "Returns the allocator statistics.", "4.0.0", allocatorDependent),
                new CommandSpec("purge", 2, None, 0, 0, 0, Purge, g, "Asks the allocator to release memory.", "4.0.0", allocatorDependent),
                new CommandSpec("doctor", 2, Connection | Diagnostic, 0, 0, 0, DoctorCommands.MemoryDoctor, g, "Outputs a memory problems report.", "4.0.0"),
                new CommandSpec("help", 2, Loading | Stale, 0, 0, 0, Help, g, "Returns helpful text about the different subcommands.", "4.0.0")));
    }

    /// <summary>
    /// The bytes held for the key: its block as the allocator charged it (header, key, value and
    /// the allocator's rounding) plus its share of the hash table and, with a TTL, of the expires
    /// vector. Like Redis, a key past its TTL but not yet deleted is still measured. SAMPLES only
    /// matters for collections, whose nested values are estimated from a sample; a string is
    /// measured exactly.
    /// </summary>
    private static void Usage(ref CommandContext c)
    {
        for (int j = 3; j < c.ArgCount; j++)
        {
            if (c.ArgIs(j, "samples"u8) && j + 1 < c.ArgCount)
            {
                if (!c.TryInt64(j + 1, out long samples))
                    return;
                if (samples < 0)
                {
                    c.SyntaxError();
                    return;
                }
                j++;
            }
            else
            {
                c.SyntaxError();
                return;
            }
        }
        ReadOnlySpan<byte> key = c.Arg(2);
        Database db = c.Database(key, out uint hash);
        Entry* e = db.Keys.Find(key, hash);
        if (e == null)
            c.Reply.Null();
        else
            c.Reply.Integer(db.MemoryUsage(e));
    }

    /// <summary>Redis's MEMORY STATS: the same fields in the same order, a map (an array of pairs in RESP2).</summary>
    private static void Stats(ref CommandContext c)
    {
        var m = MemoryOverview.Capture(c.Server, readAllocator: true);
        var r = c.Reply;
        r.MapHeader(27 + m.Databases.Count);
        Pair(r, "peak.allocated"u8, m.PeakAllocated);
        Pair(r, "total.allocated"u8, m.TotalAllocated);
        Pair(r, "startup.allocated"u8, m.StartupAllocated);
        Pair(r, "replication.backlog"u8, m.ReplicationBacklog);
        Pair(r, "clients.slaves"u8, m.ClientsReplicas);
        Pair(r, "clients.normal"u8, m.ClientsNormal);
        Pair(r, "cluster.links"u8, 0);
        Pair(r, "aof.buffer"u8, m.AofBuffer);
        Pair(r, "lua.caches"u8, 0);
        Pair(r, "functions.caches"u8, 0);
        foreach (var db in m.Databases)
        {
            r.Bulk("db." + db.Index.ToString(CultureInfo.InvariantCulture));
            r.MapHeader(3);
            Pair(r, "overhead.hashtable.main"u8, db.MainTableBytes);
            Pair(r, "overhead.hashtable.expires"u8, db.ExpiresBytes);
            Pair(r, "overhead.hashtable.slot-to-keys"u8, 0);
        }
        Pair(r, "overhead.total"u8, m.OverheadTotal);
        Pair(r, "keys.count"u8, m.KeysCount);
        Pair(r, "keys.bytes-per-key"u8, m.BytesPerKey);
        Pair(r, "dataset.bytes"u8, m.DatasetBytes);
        Pair(r, "dataset.percentage"u8, m.DatasetPercentage);
        Pair(r, "peak.percentage"u8, m.PeakPercentage);
        Pair(r, "allocator.allocated"u8, m.AllocatorAllocated);
        Pair(r, "allocator.active"u8, m.AllocatorActive);
        Pair(r, "allocator.resident"u8, m.AllocatorResident);
        Pair(r, "allocator-fragmentation.ratio"u8, m.AllocatorFragmentationRatio);
        Pair(r, "allocator-fragmentation.bytes"u8, m.AllocatorFragmentationBytes);
        Pair(r, "allocator-rss.ratio"u8, m.AllocatorRssRatio);
        Pair(r, "allocator-rss.bytes"u8, m.AllocatorRssBytes);
        Pair(r, "rss-overhead.ratio"u8, m.RssOverheadRatio);
        Pair(r, "rss-overhead.bytes"u8, m.RssOverheadBytes);
        Pair(r, "fragmentation"u8, m.Fragmentation);
        Pair(r, "fragmentation.bytes"u8, m.FragmentationBytes);
    }

    private static void Pair(RespWriter reply, ReadOnlySpan<byte> name, long value)
    {
        reply.Bulk(name);
        reply.Integer(value);
    }

    private static void Pair(RespWriter reply, ReadOnlySpan<byte> name, double value)
    {
        reply.Bulk(name);
        reply.Double(value);
    }

    /// <summary>A text report of the tracked allocator, thread by thread, and of the C allocator under it.</summary>
    private static void MallocStats(ref CommandContext c) => c.Reply.Verbatim(MallocReport(c.Server));

    /// <summary>The MEMORY MALLOC-STATS text, for other views of the same report (HTTP API, debug package).</summary>
    public static string MallocReport(DataServer server)
    {
        var text = new StringBuilder(4096);
        var records = ThreadMemoryRegistry.Snapshot();
        long total = TrackedAllocator.TotalBytes;
        var backend = TrackedAllocator.Backend;
        text.Append("___ Begin tracked allocator statistics ___\n");
        text.Append("Allocator: ").Append(backend.Name)
            .Append(", every block tracked with an ").Append(TrackedAllocator.HeaderSize)
            .Append("-byte header and charged at its usable size to the thread that allocated it\n");
        Line(text, "total.allocated", total);
        Line(text, "peak.allocated", Math.Max(TrackedAllocator.PeakBytes, total));
        Line(text, "startup.allocated", server.StartupAllocatedBytes);
        Line(text, "threads", records.Count);
        text.Append('\n');
        text.Append(CultureInfo.InvariantCulture,
            $"{"id",5} {"thread",-28} {"tid",8} {"alive",5} {"live_bytes",14} {"allocated_bytes",16} {"freed_bytes",16} {"allocations",12} {"frees",12}\n");
        foreach (var record in records)
        {
            string name = record.Name.Length > 28 ? record.Name[..28] : record.Name;
            text.Append(CultureInfo.InvariantCulture,
                $"{record.Id,5} {name,-28} {record.OsThreadId,8} {(record.IsAlive ? "yes" : "no"),5} {record.LiveBytes,14} {record.AllocatedBytes,16} {record.FreedBytes,16} {record.Allocations,12} {record.Frees,12}\n");
        }
        text.Append('\n');
        // The allocator's own report (jemalloc's malloc_stats_print, as Redis prints it; mimalloc's
        // mi_stats_print); with a library of its own, glibc's heap (the runtime's) follows.
        if (backend.Kind != AllocatorChoice.Glibc)
        {
            text.Append("___ Begin ").Append(backend.Name).Append(" statistics (the tracked blocks) ___\n");
            text.Append(backend.StatisticsReport());
            text.Append("___ End ").Append(backend.Name).Append(" statistics ___\n\n");
        }
        text.Append(AllocatorBackend.Glibc.StatisticsReport());
        text.Append("___ End tracked allocator statistics ___\n");
        return text.ToString();
    }

    private static void Line(StringBuilder text, string name, long value)
        => text.Append(name).Append(": ").Append(value.ToString(CultureInfo.InvariantCulture)).Append('\n');

    /// <summary>
    /// Gives memory back: a full blocking, compacting collection of the managed heap (which also
    /// releases its free regions), a purge of the tracked allocator's C allocator (jemalloc's
    /// dirty pages, as Redis asks; mimalloc's collection) and malloc_trim of glibc's heap.
    /// </summary>
    private static void Purge(ref CommandContext c)
    {
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        if (TrackedAllocator.Backend.Kind != AllocatorChoice.Glibc)
            TrackedAllocator.Backend.Purge();
        NativeHeap.Trim();
        c.Reply.Ok();
    }

    private static void Help(ref CommandContext c)
    {
        HelpReply.Write(c.Reply, HelpLines);
    }
}
