using Diagnostics.Server.Memory;
using Diagnostics.Server.Persistence;

namespace Diagnostics.Server.Replication;

/// <summary>
/// The replication stream of a master (Redis's replication buffer and backlog in one): every
/// write's effects in the order they were logged, the same records the AOF takes, with a SELECT
/// wherever the database changes, in 64 KB blocks of tracked native memory. It keeps the last
/// repl-backlog-size bytes for partial resyncs, and whatever an attached replica has not been
/// sent yet (its <see cref="ReplicaFeed"/> pins it), up to the replica class's hard output limit,
/// past which that replica is dropped, as Redis drops a replica whose output buffer overflows.
/// Offsets are Redis's: the first byte ever appended is offset 1, <see cref="ReplicationIds"/>
/// holds the last one.
/// </summary>
/// <remarks>
/// Appends come from whichever thread committed a write, while it still holds the shards it
/// wrote (so two writes to one key are in the stream in the order they ran); the lock is held
/// for a copy. Inactive (nothing kept, writes not even encoded for it) until a replica first
/// asks to sync, as Redis creates its backlog then.
/// </remarks>
public sealed unsafe class ReplicationBacklog : IDisposable
{
    private const int BlockBytes = 64 * 1024;

    private sealed class Block
    {
        public byte* Data;
        public int Used;
        /// <summary>Offset of Data[0].</summary>
        public long Start;
        public Block? Next;
    }

    private readonly Lock _lock = new();
    private readonly ReplicationIds _ids;
    private Block? _head;
    private Block? _tail;
    private int _streamDatabase = -1;
    private ReplicaFeed[] _feeds = [];
    private volatile bool _active;

    public ReplicationBacklog(ReplicationIds ids) => _ids = ids;

    /// <summary>repl-backlog-size: how much history is kept for partial resyncs.</summary>
    public long Size { get; set; } = 1024 * 1024;

    /// <summary>client-output-buffer-limit replica's hard limit, read as it is now: unsent bytes past which a replica is dropped (0: none).</summary>
    public Func<long> ReplicaHardLimit { get; set; } = () => 256L * 1024 * 1024;

    /// <summary>True once a replica asked to sync: writes are then encoded and kept here.</summary>
    public bool Active => _active;

    /// <summary>The attached replicas, for INFO, ROLE, WAIT and the diagnostics.</summary>
    public ReplicaFeed[] Feeds => Volatile.Read(ref _feeds);

    /// <summary>Bytes of the stream held (INFO repl_backlog_histlen counts at most <see cref="Size"/> of them).</summary>
    public long HeldBytes
    {
        get
        {
            lock (_lock)
                return _head is null ? 0 : _ids.MasterReplOffset - _head.Start + 1;
        }
    }

    /// <summary>(first byte offset, history length) as INFO shows them; (0, 0) while inactive.</summary>
    public (long FirstByte, long HistoryLength) History
    {
        get
        {
            lock (_lock)
            {
                if (!_active)
                    return (0, 0);
                long end = _ids.MasterReplOffset;
                long first = _head is null ? end + 1 : Math.Max(_head.Start, end + 1 - Size);
                return (first, end - first + 1);
            }
        }
    }

    // Blocks held, kept as they come and go: the eviction check reads it on the write path.
    private long _blocks;

    /// <summary>Native bytes the blocks take (MEMORY STATS replication.backlog); one field read.</summary>
    public long MemoryBytes => Volatile.Read(ref _blocks) * BlockBytes;

    /// <summary>Starts keeping the stream (the first sync request); the database is named again before the next write.</summary>
    public void Activate()
    {
        lock (_lock)
        {
            if (_active)
                return;
            _active = true;
            _streamDatabase = -1;
        }
    }

    /// <summary>A connection's (or the cron's) logged writes; the offset advances by what was added. Returns the offset after them.</summary>
    public long Append(AofRecordBuffer records)
    {
        ReplicaFeed[] feeds;
        long end;
        lock (_lock)
        {
            long before = _ids.MasterReplOffset;
            // Let go (repl-backlog-ttl) after the writer looked: nothing to keep.
            if (!_active)
                return before;
            long added = 0;
            for (int i = 0; i < records.RunCount; i++)
            {
                var (database, start, stop) = records.Run(i);
                if (database != _streamDatabase)
                {
                    added += Copy(AofRecordBuffer.SelectCommand(database), before + added);
                    _streamDatabase = database;
                }
                added += Copy(records.Span[start..stop], before + added);
            }
            _ids.Advance(added);
            end = before + added;
            Trim();
            feeds = _feeds;
        }
        Wake(feeds);
        return end;
    }

    /// <summary>
    /// Bytes that are already stream: a replica's master's, applied here (chained replicas and a
    /// later promotion keep them; the link advances the offset, not this), or a master's own PING.
    /// <paramref name="offsetBefore"/> is the offset of the byte before them.
    /// </summary>
    public void AppendStream(ReadOnlySpan<byte> bytes, long offsetBefore, bool advance)
    {
        ReplicaFeed[] feeds;
        lock (_lock)
        {
            if (!_active)
                return;
            Copy(bytes, offsetBefore);
            if (advance)
                _ids.Advance(bytes.Length);
            // What database the proxied stream selected is the master's business: name ours again.
            _streamDatabase = -1;
            Trim();
            feeds = _feeds;
        }
        Wake(feeds);
    }

    /// <summary>A command of the master's own for its replicas (PING, REPLCONF GETACK): the offset advances by it.</summary>
    public void AppendOwn(ReadOnlySpan<byte> command)
    {
        ReplicaFeed[] feeds;
        lock (_lock)
        {
            if (!_active)
                return;
            _ids.Advance(Copy(command, _ids.MasterReplOffset));
            Trim();
            feeds = _feeds;
        }
        Wake(feeds);
    }

    /// <summary>repl-backlog-ttl ran out with no replica attached: nothing is kept or encoded until one asks again.</summary>
    public void Deactivate()
    {
        lock (_lock)
        {
            _active = false;
            FreeFrom(_head);
            _head = _tail = null;
            _streamDatabase = -1;
        }
    }

    /// <summary>A full sync of this server as a replica, or a new history: nothing kept is valid any more.</summary>
    public void Reset()
    {
        lock (_lock)
        {
            FreeFrom(_head);
            _head = _tail = null;
            _streamDatabase = -1;
        }
    }

    // Appends bytes whose first one is offset 'after + 1'; returns how many.
    private int Copy(ReadOnlySpan<byte> bytes, long after)
    {
        int copied = 0;
        while (copied < bytes.Length)
        {
            if (_tail is null || _tail.Used == BlockBytes)
            {
                var block = new Block { Data = TrackedAllocator.Alloc(BlockBytes), Start = after + copied + 1 };
                Volatile.Write(ref _blocks, _blocks + 1);
                if (_tail is null)
                    _head = block;
                else
                    _tail.Next = block;
                _tail = block;
            }
            int n = Math.Min(bytes.Length - copied, BlockBytes - _tail.Used);
            bytes.Slice(copied, n).CopyTo(new Span<byte>(_tail.Data + _tail.Used, n));
            _tail.Used += n;
            copied += n;
        }
        return copied;
    }

    /// <summary>Drops whole blocks that neither the backlog nor any replica needs any more.</summary>
    private void Trim()
    {
        long keepFrom = _ids.MasterReplOffset + 1 - Size;
        foreach (var feed in _feeds)
            if (!feed.Dropped)
                keepFrom = Math.Min(keepFrom, feed.NextOffset);
        while (_head is { } head && head != _tail && head.Start + head.Used <= keepFrom)
        {
            _head = head.Next;
            TrackedAllocator.Free(head.Data);
            Volatile.Write(ref _blocks, _blocks - 1);
        }
        // A replica so far behind that it pins more than its hard limit is dropped.
        long limit = ReplicaHardLimit();
        if (limit > 0)
            foreach (var feed in _feeds)
                if (!feed.Dropped && _ids.MasterReplOffset + 1 - feed.NextOffset > limit)
                    feed.Drop("output buffer limit (client-output-buffer-limit replica)");
    }

    private void FreeFrom(Block? block)
    {
        for (; block is not null; block = block.Next)
        {
            TrackedAllocator.Free(block.Data);
            Volatile.Write(ref _blocks, _blocks - 1);
        }
    }

    private static void Wake(ReplicaFeed[] feeds)
    {
        foreach (var feed in feeds)
            feed.Signal();
    }

    /// <summary>
    /// Whether a replica asking to continue from <paramref name="offset"/> (the first byte it
    /// lacks) can be served from what is kept: Redis's addReplyReplicationBacklog range check.
    /// </summary>
    public bool CanServeFrom(long offset)
    {
        var (first, length) = History;
        return _active && length >= 0 && offset >= first && offset <= first + length;
    }

    /// <summary>Attaches a replica that is sent the stream from <paramref name="offset"/> on (the first byte it lacks).</summary>
    public void Attach(ReplicaFeed feed, long offset)
    {
        lock (_lock)
        {
            feed.NextOffset = offset;
            feed.AttachOffset = offset - 1;
            _feeds = [.. _feeds, feed];
        }
    }

    public void Detach(ReplicaFeed feed)
    {
        lock (_lock)
        {
            _feeds = Array.FindAll(_feeds, f => !ReferenceEquals(f, feed));
            Trim();
        }
    }

    /// <summary>Copies the stream a replica has not been sent into <paramref name="destination"/>; returns how many bytes (0: none yet).</summary>
    public int Read(ReplicaFeed feed, Span<byte> destination)
    {
        lock (_lock)
        {
            long end = _ids.MasterReplOffset;
            if (feed.NextOffset > end || _head is null)
                return 0;
            // Find the block holding the next byte: replicas are near the tail, so walk from the head only when behind.
            var block = _head;
            if (feed.NextOffset < block.Start)
                throw new InvalidOperationException($"the replication stream at offset {feed.NextOffset} is no longer kept");
            while (block.Next is not null && block.Next.Start <= feed.NextOffset)
                block = block.Next;
            int copied = 0;
            while (block is not null && copied < destination.Length)
            {
                int from = (int)(feed.NextOffset + copied - block.Start);
                int n = Math.Min(block.Used - from, destination.Length - copied);
                if (n > 0)
                {
                    new ReadOnlySpan<byte>(block.Data + from, n).CopyTo(destination[copied..]);
                    copied += n;
                }
                block = block.Next;
            }
            feed.NextOffset += copied;
            Trim();
            return copied;
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            FreeFrom(_head);
            _head = _tail = null;
        }
    }
}
