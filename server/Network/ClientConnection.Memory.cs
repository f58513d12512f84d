using Diagnostics.Server.Protocol;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Network;

/// <summary>
/// What a connection's buffers hold, and giving it back. The argument arena grows to the largest
/// command seen (a 900 KB SET leaves 1 MB), which is tracked memory and counts against maxmemory;
/// the clients cron decides, as Redis's clientsCronResizeQueryBuffer, when it is worth shrinking,
/// and the connection shrinks it on its own thread, between batches, so the arena never has two
/// users and the data path pays nothing for it.
/// </summary>
public sealed partial class ClientConnection
{
    // Idle this long, a connection keeps no more arena than its open command needs (Redis: 2 s).
    private const long IdleTrimMs = 2000;
    // Arena room not worth a trim (Redis: 4 KB of sdsavail).
    private const int TrimSlackBytes = 4 * 1024;
    // A busy connection's arena is trimmed only above this and at more than twice its recent peak (Redis's PROTO_RESIZE_THRESHOLD).
    private const int BusyTrimThresholdBytes = 32 * 1024;

    // Asked for by the clients cron: the arena size to trim to, plus one; 0 when none is asked for.
    private int _queryBufferTrim;
    // This connection's memory as last added to the clients' total (ClientEviction).
    private long _reportedMemory;

    /// <summary>
    /// Bytes this connection's buffers hold (CLIENT LIST tot-mem, maxmemory-clients): the argument
    /// arena, input not yet parsed, replies not yet sent and published messages not yet written.
    /// </summary>
    public long MemoryUsage => ArenaCapacity + QueryBufferBytes + UnsentBytes;

    /// <summary>
    /// The clients cron's look at the arena: trim it to nothing after 2 s idle, or to the recent
    /// peak when it is more than twice that, by waking the connection (a cancelled read, as a
    /// publisher wakes a subscriber); the connection trims before its next read.
    /// </summary>
    internal void ConsiderQueryBufferTrim(long nowMs)
    {
        int peak = _batch.TakePeak();
        int capacity = _batch.ArenaCapacity;
        // A command on its way in will need its room: left alone until it has run.
        if (capacity - _batch.ArenaBytes <= TrimSlackBytes || QueryBufferBytes > 0)
            return;
        int target;
        if (nowMs - LastInteractionMs > IdleTrimMs)
            target = 0;
        else if (capacity > BusyTrimThresholdBytes && capacity / 2 > peak)
            target = Math.Max(peak, RequestBatch.InitialArenaBytes);
        else
            return;
        Volatile.Write(ref _queryBufferTrim, target + 1);
        _transport.Pipe.Input.CancelPendingRead();
    }

    /// <summary>On this connection's thread, between batches: the trim the cron asked for, if no command is half-read.</summary>
    private void TrimQueryBuffer()
    {
        int target = Interlocked.Exchange(ref _queryBufferTrim, 0) - 1;
        if (target >= 0 && _batch.OpenArgsRemaining == 0)
            _batch.Trim(target);
    }

    /// <summary>The change in <see cref="MemoryUsage"/> since the last report (safe from any thread).</summary>
    internal long TakeMemoryDelta()
    {
        long now = MemoryUsage;
        return now - Interlocked.Exchange(ref _reportedMemory, now);
    }

    /// <summary>Closing: what this connection still counts in the clients' total.</summary>
    internal long ForgetReportedMemory() => Interlocked.Exchange(ref _reportedMemory, 0);

    /// <summary>maxmemory-clients: counted, logged with Redis's words, and dropped at once.</summary>
    internal void EvictForClientMemory(long nowMs)
    {
        _log.LogInformation("Evicting client: {Client}", ClientDescription.Describe(this, nowMs)); // Redis: notice level
        RecordClosed("maxmemory-clients", _server.Config.MaxMemoryClientsText);
        Kill();
    }
}
