using System.Collections.Concurrent;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Engine;
using Diagnostics.Server.PubSub;

namespace Diagnostics.Server.Network;

/// <summary>
/// A connection as a subscriber (and as a MONITOR, whose lines take the same path). Publishers on other threads only queue encoded messages here
/// and cancel the pending socket read; this connection's own thread then writes them out with
/// its next flush, so its reply stream never has two writers. Queued bytes count against the
/// pub/sub class's output buffer limit.
///
/// An unsubscribe reply is a boundary: the registry stops pushing to this connection for that
/// channel before the reply is written (publishers push under the registry's lock, which the
/// removal takes), so writing what is queued just before the reply puts every message that was
/// published while the subscription lasted ahead of it, and none after. A RESP2 client back in
/// normal mode would otherwise read a late message as the reply to its next command.
/// </summary>
public sealed partial class ClientConnection : ISubscriber
{
    private readonly ConcurrentQueue<byte[]> _pushes = new();
    private long _pushBytes;
    private int _pushSignalled;

    public int SubscribedChannels => PubSub?.Channels ?? 0;
    public int SubscribedPatterns => PubSub?.Patterns ?? 0;

    /// <summary>Published bytes queued and not yet written (part of CLIENT LIST omem, see <see cref="ClientConnection.UnsentBytes"/>).</summary>
    public long PendingPushBytes => Volatile.Read(ref _pushBytes);

    int ISubscriber.Protocol => Reply.Protocol;

    void ISubscriber.Push(byte[] message) => Push(message, ClientClass.PubSub);

    internal override bool CanMonitor => true;

    // A monitor is a normal client as far as output limits go, as in Redis (its replica flag
    // does not make it one of the replica class).
    internal override void DeliverMonitorLine(byte[] line) => Push(line, ClientClass.Normal);

    /// <summary>A client-side caching invalidation (or redirect-broken notice) for this connection, within its class's limit.</summary>
    internal void DeliverTrackingMessage(byte[] message) => Push(message, Class);

    /// <summary>
    /// Queues <paramref name="message"/> for this connection's thread. Queued messages are output
    /// like replies (omem): the client's class's hard and soft limits apply to both together, so a
    /// subscriber that never reads is cut off as in Redis, and the cron keeps checking while its
    /// thread waits on a flush. A monitor's lines count against the normal class's hard limit.
    /// </summary>
    private void Push(byte[] message, ClientClass limitClass)
    {
        _pushes.Enqueue(message);
        long pending = Interlocked.Add(ref _pushBytes, message.Length);
        var limit = _server.Config.OutputBufferLimits[limitClass];
        if ((limit.HardBytes != 0 && (ulong)(pending + OutputBufferBytes) >= limit.HardBytes) || _outputGuard.Exceeded(Environment.TickCount64))
        {
            CloseForOutputLimit();
            return;
        }
        if (Interlocked.Exchange(ref _pushSignalled, 1) == 0)
            _transport.Pipe.Input.CancelPendingRead();
    }

    /// <summary>Moves queued messages into the reply stream; called on this connection's thread before a flush.</summary>
    private void DrainPushes()
    {
        if (Volatile.Read(ref _pushSignalled) == 0 && _pushes.IsEmpty)
            return;
        Volatile.Write(ref _pushSignalled, 0);
        bool muted = Reply.Muted;
        Reply.Muted = false;
        while (_pushes.TryDequeue(out var message))
        {
            Reply.WriteRaw(message);
            Interlocked.Add(ref _pushBytes, -message.Length);
        }
        Reply.Muted = muted;
    }

    /// <summary>
    /// Writes the messages queued so far ahead of the unsubscribe reply about to be written.
    /// Inside EXEC the reply is an element of EXEC's array, where a message cannot go: the
    /// messages queued before EXEC went out ahead of its array (<see cref="BeforeExecReply"/>),
    /// and those queued while it ran count as published after it, so once the transaction has
    /// ended the last subscription they are not delivered at all.
    /// </summary>
    internal override void BeforeUnsubscribeReply()
    {
        if (!InTransaction)
            DrainPushes();
        else if (Subscriptions == 0)
            DiscardPushes();
    }

    /// <summary>EXEC of a subscribed client: what was published before it goes out ahead of its reply.</summary>
    internal override void BeforeExecReply()
    {
        if (Subscriptions > 0)
            DrainPushes();
    }

    private void DiscardPushes()
    {
        while (_pushes.TryDequeue(out var message))
            Interlocked.Add(ref _pushBytes, -message.Length);
    }

    /// <summary>
    /// RESET (<paramref name="deliverQueued"/>: what was published before it still goes out, ahead
    /// of its reply) and disconnect (nothing can be delivered): leave every channel and pattern.
    /// </summary>
    internal override void UnsubscribeAll(bool deliverQueued)
    {
        PubSub?.Clear();
        Class = ClientClass.Normal;
        if (deliverQueued)
            DrainPushes();
        else
            DiscardPushes();
    }
}
