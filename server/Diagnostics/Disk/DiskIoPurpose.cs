namespace Diagnostics.Server.Diagnostics.Disk;

/// <summary>Why the server touched the disk. Each purpose is counted separately per thread.</summary>
public enum DiskIoPurpose
{
    /// <summary>Appending commands to the incremental AOF file.</summary>
    AofWrite,
    /// <summary>Making appended bytes durable (fdatasync).</summary>
    AofFsync,
    /// <summary>Reading the old AOF files a rewrite compacts.</summary>
    RewriteRead,
    /// <summary>Writing (and syncing) the new base file a rewrite produces.</summary>
    RewriteWrite,
    /// <summary>Reading AOF files at start or on DEBUG RELOAD.</summary>
    LoadRead,
    /// <summary>Writing and syncing the manifest and the directory entries it names.</summary>
    Manifest,
    /// <summary>Opening a file.</summary>
    Open,
    /// <summary>Closing a file.</summary>
    Close,
    /// <summary>Cutting a file back to its last good length after a failed write.</summary>
    Truncate,
    /// <summary>Writing (and syncing) an RDB snapshot: SAVE, BGSAVE, the save schedule, SHUTDOWN, DEBUG RELOAD.</summary>
    SnapshotWrite,
    /// <summary>Reading a snapshot file back to send it to a replica (a full sync that is not diskless).</summary>
    SnapshotRead,
}
