using System.Text;
using static Diagnostics.Server.Diagnostics.Info.InfoBuilder;

namespace Diagnostics.Server.Persistence;

/// <summary>INFO persistence: Redis's fields, with the values this server's AOF has.</summary>
public static class PersistenceInfo
{
    public static void Write(StringBuilder text, DataServer server)
    {
        var aof = server.Aof;
        var load = aof.LastLoad;
        Field(text, "loading", aof.Loading ? 1 : 0);
        Field(text, "async_loading", 0);
        // No fork: there is never copy-on-write memory, and RDB snapshots are not written.
        Field(text, "current_cow_peak", 0);
        Field(text, "current_cow_size", 0);
        Field(text, "current_cow_size_age", 0);
        Field(text, "current_fork_perc", "0.00");
        Field(text, "current_save_keys_processed", 0);
        Field(text, "current_save_keys_total", 0);
        Field(text, "rdb_changes_since_last_save", 0);
        Field(text, "rdb_bgsave_in_progress", 0);
        Field(text, "rdb_last_save_time", server.LastSaveUnixSeconds);
        Field(text, "rdb_last_bgsave_status", "ok");
        Field(text, "rdb_last_bgsave_time_sec", -1);
        Field(text, "rdb_current_bgsave_time_sec", -1);
        Field(text, "rdb_saves", 0);
        Field(text, "rdb_last_cow_size", 0);
        Field(text, "rdb_last_load_keys_expired", 0);
        Field(text, "rdb_last_load_keys_loaded", load?.KeysLoaded ?? 0);
        Field(text, "aof_enabled", aof.Enabled ? 1 : 0);
        Field(text, "aof_rewrite_in_progress", aof.RewriteInProgress ? 1 : 0);
        Field(text, "aof_rewrite_scheduled", 0);
        Field(text, "aof_last_rewrite_time_sec", aof.LastRewriteSeconds);
        Field(text, "aof_current_rewrite_time_sec", aof.CurrentRewriteSeconds);
        Field(text, "aof_last_bgrewrite_status", aof.LastRewriteOk ? "ok" : "err");
        Field(text, "aof_rewrites", aof.Rewrites);
        Field(text, "aof_rewrites_consecutive_failures", aof.RewriteFailuresInARow);
        Field(text, "aof_last_write_status", aof.LastWriteStatusOk ? "ok" : "err");
        // Not a Redis field: the reason behind a failed write, the same text MISCONF replies carry.
        Field(text, "aof_last_write_error", aof.WriteError ?? "");
        Field(text, "aof_last_cow_size", 0);
        Field(text, "module_fork_in_progress", 0);
        Field(text, "module_fork_last_cow_size", 0);
        if (aof.Enabled)
        {
            Field(text, "aof_current_size", aof.CurrentSize);
            Field(text, "aof_base_size", aof.BaseSize);
            Field(text, "aof_pending_rewrite", 0);
            Field(text, "aof_buffer_length", aof.BufferedBytes);
            Field(text, "aof_pending_bio_fsync", 0);
            Field(text, "aof_delayed_fsync", aof.DelayedFsyncs);
            // Not Redis fields: the durability frontier, and appends that waited for the writer.
            Field(text, "aof_appended_offset", aof.AppendedOffset);
            Field(text, "aof_durable_offset", aof.DurableOffset);
            Field(text, "aof_append_stalls", aof.AppendStalls);
        }
        if (load is { } last)
        {
            Field(text, "aof_last_load_commands", last.Commands);
            Field(text, "aof_last_load_bytes", last.Bytes);
            Field(text, "aof_last_load_time_ms", (long)last.Elapsed.TotalMilliseconds);
        }
    }
}
