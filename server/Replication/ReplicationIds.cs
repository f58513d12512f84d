using System.Security.Cryptography;

namespace Diagnostics.Server.Replication;

/// <summary>
/// Where this server stands in a replication history (PSYNC2), as Redis's server.replid,
/// replid2, master_repl_offset and second_replid_offset: the ID of the history it follows, the
/// ID of the one it followed before (valid up to <see cref="SecondReplOffset"/>) and how many
/// bytes of the stream it has. Shared by both sides: a replica's link moves the offset as it
/// applies its master's stream; a master's propagation moves it as it feeds its replicas.
/// </summary>
/// <remarks>
/// Contract: exactly one writer advances <see cref="MasterReplOffset"/> at a time. While this
/// server is a replica that is the MasterLink (one call of <see cref="Advance"/> per applied span,
/// after raising ReplicationRole.StreamApplied with the same bytes); while it is a master it is the
/// master side's backlog (Advance by the bytes it appends). A backlog that keeps the spans a
/// replica applied (chained replicas) stores them without advancing the offset again. The IDs
/// change only as a whole (<see cref="Read"/> sees them consistent), under the lock.
/// </remarks>
public sealed class ReplicationIds
{
    /// <summary>Redis's "no ID": forty zeros.</summary>
    public const string NoId = "0000000000000000000000000000000000000000";

    private readonly Lock _lock = new();
    private string _replId = NewId();
    private string _replId2 = NoId;
    private long _offset;
    private long _secondOffset = -1;

    /// <summary>The history this server is at (master_replid).</summary>
    public string ReplId { get { lock (_lock) return _replId; } }

    /// <summary>The history it was at before, or <see cref="NoId"/> (master_replid2).</summary>
    public string ReplId2 { get { lock (_lock) return _replId2; } }

    /// <summary>Bytes of the stream this server has (master_repl_offset).</summary>
    public long MasterReplOffset => Volatile.Read(ref _offset);

    /// <summary>The first offset <see cref="ReplId2"/> does not cover, or -1 (second_repl_offset).</summary>
    public long SecondReplOffset { get { lock (_lock) return _secondOffset; } }

    /// <summary>All four at one moment.</summary>
    public ReplicationIdsSnapshot Read()
    {
        lock (_lock)
            return new ReplicationIdsSnapshot(_replId, _replId2, Volatile.Read(ref _offset), _secondOffset);
    }

    /// <summary>The stream grew by <paramref name="bytes"/> (see the contract: one writer).</summary>
    public void Advance(long bytes) => Interlocked.Add(ref _offset, bytes);

    /// <summary>A full resync: the master's history from <paramref name="offset"/>; no previous history (Redis's clearReplicationId2).</summary>
    public void AdoptMaster(string replId, long offset)
    {
        lock (_lock)
        {
            _replId = replId;
            Volatile.Write(ref _offset, offset);
            _replId2 = NoId;
            _secondOffset = -1;
        }
    }

    /// <summary>
    /// The master continued under another ID (+CONTINUE newid, after its own failover or restart):
    /// our ID becomes the previous one, valid up to the current offset, so our own replicas can
    /// still continue from us.
    /// </summary>
    public void ContinueAs(string newReplId)
    {
        lock (_lock)
        {
            _replId2 = _replId;
            _secondOffset = Volatile.Read(ref _offset) + 1;
            _replId = newReplId;
        }
    }

    /// <summary>
    /// Redis's shiftReplicationId (a replica promoted): a new history begins here, and the one
    /// followed so far stays valid up to offset+1, the first byte a former fellow replica at the
    /// same offset will ask for.
    /// </summary>
    public void Shift()
    {
        lock (_lock)
        {
            _replId2 = _replId;
            _secondOffset = Volatile.Read(ref _offset) + 1;
            _replId = NewId();
        }
    }

    /// <summary>
    /// A master that let its backlog go (repl-backlog-ttl): a new history with no previous one, so
    /// no replica can continue from a stream this server no longer has (Redis's changeReplicationId
    /// and clearReplicationId2).
    /// </summary>
    public void Renew()
    {
        lock (_lock)
        {
            _replId = NewId();
            _replId2 = NoId;
            _secondOffset = -1;
        }
    }

    /// <summary>40 random lowercase hex characters, as Redis's getRandomHexChars.</summary>
    public static string NewId() => Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(20));
}

/// <summary>The replication IDs and offsets at one moment.</summary>
public readonly record struct ReplicationIdsSnapshot(string ReplId, string ReplId2, long MasterReplOffset, long SecondReplOffset);
