using Diagnostics.Server.Configuration;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Network;

/// <summary>
/// Enforces client-output-buffer-limit for one connection, as Redis's checkClientOutputBufferLimits:
/// unsent replies at or over the hard limit close the client at once; at or over the soft limit
/// continuously for longer than the soft seconds, too. The limits are those of the connection's
/// <see cref="ClientConnection.Class"/>, read at each check, so a client that becomes a subscriber
/// or a CONFIG SET takes effect without anything else changing.
///
/// Checked where unsent output can grow or sit: by the reply writer at each new 4 KB block (a reply
/// growing past the hard limit mid-batch stops being buffered), and once a second by the clients
/// cron (a flush stuck on a client that does not read).
/// </summary>
internal sealed class OutputBufferGuard(ClientConnection client, ServerConfig config) : IReplyBufferGuard
{
    // Environment.TickCount64 when the unsent output was first seen at or over the soft limit; 0
    // while under it. Written by the connection's thread and the cron: a lost update only delays
    // or restarts the soft timer by one check.
    private long _softSinceMs;
    private long _peak;

    // Once closing (decided here or by the cron), nothing more is buffered.
    public bool MayBuffer(RespWriter writer) => !client.OutputLimitReached && !Exceeded(Environment.TickCount64);

    /// <summary>True (and the client is being closed) when the client is over its limits.</summary>
    public bool Exceeded(long nowMs)
    {
        OutputBufferLimit limit = config.OutputBufferLimits[client.Class];
        if (limit.IsOff)
            return false;
        ulong pending = (ulong)client.UnsentBytes;
        bool hard = limit.HardBytes != 0 && pending >= limit.HardBytes;
        bool soft = false;
        if (limit.SoftBytes != 0 && pending >= limit.SoftBytes)
        {
            long since = _softSinceMs;
            if (since == 0)
                _softSinceMs = nowMs;
            else
                soft = nowMs - since > limit.SoftSeconds * 1000L;
        }
        else
        {
            _softSinceMs = 0;
        }
        if (!hard && !soft)
            return false;
        client.CloseForOutputLimit();
        return true;
    }

    /// <summary>Before a flush: the unsent output is at its largest for this batch.</summary>
    public void BeforeFlush()
    {
        long pending = client.OutputBufferBytes;
        if (pending > _peak)
            _peak = pending;
    }

    /// <summary>A completed flush sent everything: the soft limit's clock starts over.</summary>
    public void AfterFlush() => _softSinceMs = 0;

    /// <summary>The largest unsent output since the last call (the cron's sample for INFO).</summary>
    public long TakePeak() => Math.Max(Interlocked.Exchange(ref _peak, 0), client.UnsentBytes);

    // The cron's view of progress: Environment.TickCount64 since when the client has had unsent
    // output and the kernel took none of it (0 while it has none or takes some), and what had been
    // sent at the last look. A client reading a long reply slowly makes progress; one that stopped
    // reading does not. (Over Kestrel's transport progress is seen per completed flush only.)
    private long _stalledSinceMs;
    private long _sentAtLastLook;

    /// <summary>The clients cron, once a second: has the client taken any of its output since the last look?</summary>
    public void TrackProgress(long nowMs)
    {
        long sent = client.NetOutputBytes;
        if (client.UnsentBytes == 0 || sent != _sentAtLastLook)
            Volatile.Write(ref _stalledSinceMs, 0);
        else if (_stalledSinceMs == 0)
            Volatile.Write(ref _stalledSinceMs, nowMs);
        _sentAtLastLook = sent;
    }

    /// <summary>Whole seconds the client has had unsent output without taking any (as of the cron's last look).</summary>
    public long StalledSeconds(long nowMs)
    {
        long since = Volatile.Read(ref _stalledSinceMs);
        return since == 0 ? 0 : (nowMs - since) / 1000;
    }
}
