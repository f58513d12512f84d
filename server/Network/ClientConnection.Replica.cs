using System.Buffers;
using System.Diagnostics;
using System.IO.Pipelines;
using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Persistence.Snapshots;
using Diagnostics.Server.Replication;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Network;

/// <summary>
/// A connection that became a replica of this server (PSYNC/SYNC): after the command's reply it
/// is sent the snapshot, written by an "rdb sync" thread into a bounded pipe and copied out here
/// with the socket's backpressure, then the replication stream, copied from the backlog each time
/// it signals, with this connection's own flushes (one writer to the socket, as for every reply).
/// It keeps reading what the replica sends (REPLCONF ACK).
/// </summary>
public sealed partial class ClientConnection
{
    // Stream bytes copied into the reply buffer per pass; the rest waits for the next flush.
    private const int StreamChunkBytes = 256 * 1024;

    /// <summary>What the replica announced before PSYNC (REPLCONF listening-port, capa).</summary>
    internal int ReplicaListeningPort;
    internal bool ReplicaCapaEof;
    internal bool ReplicaCapaPsync2;

    /// <summary>Set once PSYNC/SYNC attached this connection as a replica.</summary>
    internal ReplicaFeed? Feed { get; private set; }

    private RdbSnapshot? _pendingSnapshot;
    private bool _pendingEofMark;
    private Func<ValueTask>? _pendingAsyncReply;

    /// <summary>A feed for this connection: its signal wakes the connection, its drop closes it.</summary>
    internal ReplicaFeed NewFeed(bool fullSync) => new(Id, RemoteIp, ReplicaListeningPort, fullSync, WakeForStream, DropReplica);

    /// <summary>PSYNC/SYNC attached <paramref name="feed"/>; a full sync's snapshot goes out after the reply.</summary>
    internal void BecomeReplica(ReplicaFeed feed, RdbSnapshot? snapshot, bool eofMark)
    {
        Feed = feed;
        Class = ClientClass.Replica;
        _pendingSnapshot = snapshot;
        _pendingEofMark = eofMark;
    }

    /// <summary>WAIT: the reply is written once <paramref name="reply"/> completes, before the next command runs.</summary>
    internal void ReplyLater(Func<ValueTask> reply) => _pendingAsyncReply = reply;

    private string RemoteIp
    {
        get
        {
            int colon = Address.LastIndexOf(':');
            return colon > 0 ? Address[..colon] : Address;
        }
    }

    /// <summary>After a command: a full sync to send, or a reply that waits (WAIT). Nothing to do otherwise.</summary>
    internal async ValueTask RunPendingReplicationAsync()
    {
        if (_pendingAsyncReply is { } reply)
        {
            _pendingAsyncReply = null;
            await reply();
            return;
        }
        if (_pendingSnapshot is not { } snapshot)
            return;
        _pendingSnapshot = null;
        try
        {
            await SendSnapshotAsync(snapshot, _pendingEofMark);
            Feed!.State = ReplicaState.Online;
            Feed.Sync?.Completed(Feed.SnapshotBytesSent, Feed.SnapshotMilliseconds);
            // Whatever was written since the cut goes out now.
            WakeForStream();
        }
        catch (Exception ex) when (ex is not OutOfMemoryException)
        {
            // The replica went away or the snapshot failed: this connection ends, the server goes on.
            _log.LogWarning("Synchronization with replica {Address} failed: {Error}", Address, ex.Message);
            Feed?.Sync?.Failed(ex.Message, Feed.SnapshotBytesSent);
            _closing = true;
        }
    }

    /// <summary>
    /// Streams the snapshot: "$EOF:&lt;40 chars&gt;" ... the same 40 chars (diskless, for a replica with
    /// capa eof), or "$&lt;length&gt;" and the bytes, which needs the length first: then the thread
    /// writes a temporary file and this sends it.
    /// </summary>
    private async Task SendSnapshotAsync(RdbSnapshot snapshot, bool eofMark)
    {
        var output = _transport.Pipe.Output;
        await FlushAsync(output); // the +FULLRESYNC line first
        var clock = Stopwatch.StartNew();
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 4 * 1024 * 1024, resumeWriterThreshold: 2 * 1024 * 1024, useSynchronizationContext: false));
        string? tempFile = eofMark ? null : Path.Combine(_server.Config.Dir, $"temp-sync-{Environment.ProcessId}-{Id}.rdb");
        string? failure = null;
        var producer = new Thread(() =>
        {
            Memory.TrackedAllocator.NameCurrentThread("rdb sync");
            try
            {
                if (tempFile is null)
                {
                    failure = snapshot.WriteTo(bytes =>
                    {
                        pipe.Writer.Write(bytes);
                        // Its own thread, so waiting here is the backpressure; a reader that
                        // stopped (the replica went away) ends the snapshot.
                        if (pipe.Writer.FlushAsync().AsTask().GetAwaiter().GetResult().IsCompleted)
                            throw new OperationCanceledException("the replica's connection closed");
                    }, aofBase: false);
                }
                else
                {
                    File.Delete(tempFile);
                    using (var file = Persistence.DiskFile.CreateNew(tempFile))
                    {
                        long offset = 0;
                        failure = snapshot.WriteTo(bytes =>
                        {
                            file.Write(bytes, offset, Diagnostics.Disk.DiskIoPurpose.SnapshotWrite);
                            offset += bytes.Length;
                        }, aofBase: false);
                    }
                }
            }
            catch (Exception ex)
            {
                failure = ex.Message;
            }
            finally
            {
                snapshot.Dispose();
                pipe.Writer.Complete();
            }
        })
        { IsBackground = true, Name = "rdb sync" };
        producer.Start();

        try
        {
            await SendSnapshotBytesAsync(pipe, output, eofMark, tempFile, () => failure);
        }
        finally
        {
            // Done or failed: the producer's next flush sees it and stops, freeing what it holds.
            await pipe.Reader.CompleteAsync();
        }
        await FlushAsync(output);
        Feed!.SnapshotMilliseconds = clock.Elapsed.TotalMilliseconds;
        _log.LogInformation("Synchronization with replica {Address} succeeded ({Bytes} bytes of snapshot in {Ms} ms)",
            Address, Feed.SnapshotBytesSent, (long)Feed.SnapshotMilliseconds);
    }

    private async Task SendSnapshotBytesAsync(Pipe pipe, PipeWriter output, bool eofMark, string? tempFile, Func<string?> failure)
    {
        byte[]? mark = null;
        if (eofMark)
        {
            mark = Encoding.ASCII.GetBytes(Replication.ReplicationIds.NewId());
            Reply.WriteRaw("$EOF:"u8);
            Reply.WriteRaw(mark);
            Reply.WriteRaw("\r\n"u8);
            long sent = await CopyToReplicaAsync(pipe.Reader, output);
            Feed!.SnapshotBytesSent = sent;
            if (failure() is { } failed)
                throw new InvalidOperationException(failed);
            Reply.WriteRaw(mark);
        }
        else
        {
            // Drained only to learn when the file is complete.
            while (true)
            {
                var result = await pipe.Reader.ReadAsync();
                pipe.Reader.AdvanceTo(result.Buffer.End);
                if (result.IsCompleted)
                    break;
            }
            try
            {
                if (failure() is { } failed)
                    throw new InvalidOperationException(failed);
                long length = new FileInfo(tempFile!).Length;
                Reply.WriteRaw(Encoding.ASCII.GetBytes($"${length}\r\n"));
                // Read through DiskFile so the bytes are counted (snapshot_read) on the thread that reads them.
                using var file = Persistence.DiskFile.OpenRead(tempFile!);
                await using var stream = new Persistence.DiskFileStream(file, Diagnostics.Disk.DiskIoPurpose.SnapshotRead);
                var reader = PipeReader.Create(stream);
                Feed!.SnapshotBytesSent = await CopyToReplicaAsync(reader, output);
                await reader.CompleteAsync();
            }
            finally
            {
                File.Delete(tempFile!);
            }
        }
    }

    /// <summary>Copies everything <paramref name="source"/> yields into the socket, a flush per read, so the replica's pace sets ours.</summary>
    private async Task<long> CopyToReplicaAsync(PipeReader source, PipeWriter output)
    {
        long total = 0;
        while (true)
        {
            var result = await source.ReadAsync();
            foreach (var segment in result.Buffer)
                Reply.WriteRaw(segment.Span);
            total += result.Buffer.Length;
            source.AdvanceTo(result.Buffer.End);
            await FlushAsync(output);
            if (result.IsCompleted)
                return total;
        }
    }

    /// <summary>Moves stream bytes the replica has not been sent into the reply buffer; called on this connection's thread before a flush.</summary>
    private void DrainReplicaStream()
    {
        if (Feed is not { State: ReplicaState.Online } feed || _pendingSnapshot is not null)
            return;
        var backlog = _server.ReplicationMaster.Backlog;
        byte[] buffer = ArrayPool<byte>.Shared.Rent(StreamChunkBytes);
        try
        {
            int n = backlog.Read(feed, buffer);
            if (n == 0)
                return;
            bool muted = Reply.Muted;
            Reply.Muted = false;
            Reply.WriteRaw(buffer.AsSpan(0, n));
            Reply.Muted = muted;
            feed.StreamBytesSent += n;
            // More than one chunk behind: come back for the rest after this flush.
            if (feed.NextOffset <= _server.Replication.Ids.MasterReplOffset)
                WakeForStream();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private void WakeForStream()
    {
        if (Interlocked.Exchange(ref _pushSignalled, 1) == 0)
            _transport.Pipe.Input.CancelPendingRead();
    }

    private void DropReplica(string reason)
    {
        _log.LogWarning("Client {Address} (a replica) scheduled to be closed: {Reason}", Address, reason);
        _closing = true;
        _transport.Abort(reason);
    }

    /// <summary>Detaches the feed when the connection ends.</summary>
    internal void LeaveReplication()
    {
        if (Feed is { } feed)
        {
            _server.ReplicationMaster.Backlog.Detach(feed);
            feed.Sync?.Ended(feed.DropReason ?? (Killed ? "killed (CLIENT KILL)" : "connection closed"));
            _log.LogInformation("Connection with replica {Address} lost.", Address);
        }
    }
}
