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
        // No fork: there is never copy-on-write memory. A snapshot's shards are serialized
        // instead; what that cost is in the rdb_last_* fields after Redis's.
        var rdb = server.Rdb;
        var progress = rdb.Progress;
        var lastSave = rdb.LastRecord;
        Field(text, "current_cow_peak", 0);
        Field(text, "current_cow_size", 0);
        Field(text, "current_cow_size_age", 0);
        Field(text, "current_fork_perc", "0.00");
        Field(text, "current_save_keys_processed", progress?.Processed ?? 0);
        Field(text, "current_save_keys_total", progress?.Total ?? 0);
        Field(text, "rdb_changes_since_last_save", rdb.ChangesSinceLastSave);
        Field(text, "rdb_bgsave_in_progress", rdb.BackgroundSaveInProgress ? 1 : 0);
        Field(text, "rdb_last_save_time", rdb.LastSaveUnixSeconds);
        Field(text, "rdb_last_bgsave_status", rdb.LastBackgroundOk ? "ok" : "err");
        Field(text, "rdb_last_bgsave_time_sec", rdb.LastBackgroundSeconds);
        Field(text, "rdb_current_bgsave_time_sec", rdb.BackgroundSaveInProgress ? progress?.Seconds ?? -1 : -1);
        Field(text, "rdb_saves", rdb.Saves);
        Field(text, "rdb_last_cow_size", 0);
        Field(text, "rdb_last_load_keys_expired", rdb.RdbExpiredAtLoad);
        Field(text, "rdb_last_load_keys_loaded", load?.KeysLoaded ?? rdb.RdbLoadedKeys);
        // Not Redis fields: the last snapshot's size and what it cost without a fork: how long its
        // cut held every shard, the time spent serializing, and the shards commands serialized
        // (each such command waited for its shard's copy).
        Field(text, "rdb_last_save_bytes", lastSave?.Bytes ?? 0);
        Field(text, "rdb_last_save_keys", lastSave?.Keys ?? 0);
        Field(text, "rdb_last_cut_usec", (long)((lastSave?.CutHeldMs ?? 0) * 1000));
        Field(text, "rdb_last_serialize_usec", (long)((lastSave?.CaptureMs ?? 0) * 1000));
        Field(text, "rdb_last_shards_serialized_by_commands", lastSave?.ShardsCapturedByCommands ?? 0);
        Field(text, "rdb_last_serialize_by_commands_usec", (long)((lastSave?.CaptureByCommandsMs ?? 0) * 1000));
        Field(text, "rdb_last_save_error", rdb.LastError ?? "");
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
