namespace Diagnostics.Server.Persistence;

/// <summary>appendfsync: when appended bytes are made durable.</summary>
public enum FsyncPolicy
{
    /// <summary>Leave it to the operating system.</summary>
    No,
    /// <summary>A background fdatasync at least once a second.</summary>
    EverySec,
    /// <summary>Before any reply that depends on the bytes leaves (group commit).</summary>
    Always,
}
