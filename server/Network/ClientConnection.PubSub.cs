using System.Collections.Concurrent;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Engine;
using Diagnostics.Server.PubSub;

namespace Diagnostics.Server.Network;

/// <summary>
/// A connection as a subscriber. Publishers on other threads only queue encoded messages here
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
    private HashSet<byte[]>? _channels;
    private HashSet<byte[]>? _patterns;

    public int SubscribedChannels => _channels?.Count ?? 0;
    public int SubscribedPatterns => _patterns?.Count ?? 0;
    public int Subscriptions => SubscribedChannels + SubscribedPatterns;

    /// <summary>Published bytes queued and not yet written (part of CLIENT LIST omem).</summary>
    public long PendingPushBytes => Volatile.Read(ref _pushBytes);

    int ISubscriber.Protocol => Reply.Protocol;

    void ISubscriber.Push(byte[] message)
    {
        _pushes.Enqueue(message);
        long pending = Interlocked.Add(ref _pushBytes, message.Length);
        var limit = _server.Config.OutputBufferLimits[ClientClass.PubSub];
        if (limit.HardBytes != 0 && (ulong)pending > limit.HardBytes)
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
    /// In RESP2 a subscribed connection only takes the pub/sub commands, PING, QUIT and RESET, as
    /// in Redis; RESP3 connections may run anything while subscribed.
    /// </summary>
    private bool RefusedWhileSubscribed(CommandSpec spec)
        => Reply.Protocol == 2 && Subscriptions > 0 && (spec.Flags & CommandFlags.SubscribedContext) == 0;

    internal void Subscribe(ref CommandContext c, bool patterns)
    {
        var own = patterns ? _patterns ??= new HashSet<byte[]>(ByteArrayComparer.Instance) : _channels ??= new HashSet<byte[]>(ByteArrayComparer.Instance);
        for (int i = 1; i < c.ArgCount; i++)
        {
            byte[] name = c.Arg(i).ToArray();
            if (own.Add(name))
            {
                if (patterns)
                    _server.PubSub.PatternSubscribe(name, this);
                else
                    _server.PubSub.Subscribe(name, this);
            }
            SubscriptionReply(ref c, patterns ? "psubscribe"u8 : "subscribe"u8, name);
        }
        Class = ClientClass.PubSub;
    }

    internal void Unsubscribe(ref CommandContext c, bool patterns)
    {
        var own = patterns ? _patterns : _channels;
        if (c.ArgCount == 1)
        {
            if (own is null || own.Count == 0)
            {
                c.Reply.PushHeader(3);
                c.Reply.Bulk(patterns ? "punsubscribe"u8 : "unsubscribe"u8);
                c.Reply.Null();
                c.Reply.Integer(Subscriptions);
            }
            else
            {
                foreach (byte[] name in own.ToArray())
                    UnsubscribeOne(ref c, own, name, patterns);
            }
        }
        else
        {
            for (int i = 1; i < c.ArgCount; i++)
                UnsubscribeOne(ref c, own, c.Arg(i).ToArray(), patterns);
        }
        if (Subscriptions == 0)
            Class = ClientClass.Normal;
    }

    private void UnsubscribeOne(ref CommandContext c, HashSet<byte[]>? own, byte[] name, bool patterns)
    {
        if (own is not null && own.Remove(name))
        {
            if (patterns)
                _server.PubSub.PatternUnsubscribe(name, this);
            else
                _server.PubSub.Unsubscribe(name, this);
        }
        WriteQueuedBeforeUnsubscribeReply();
        SubscriptionReply(ref c, patterns ? "punsubscribe"u8 : "unsubscribe"u8, name);
    }

    /// <summary>
    /// Writes the messages queued so far ahead of the unsubscribe reply about to be written.
    /// Inside EXEC the reply is an element of EXEC's array, where a message cannot go: the
    /// messages queued before EXEC went out ahead of its array (<see cref="WriteQueuedBeforeExec"/>),
    /// and those queued while it ran count as published after it, so once the transaction has
    /// ended the last subscription they are not delivered at all.
    /// </summary>
    private void WriteQueuedBeforeUnsubscribeReply()
    {
        if (!InTransaction)
            DrainPushes();
        else if (Subscriptions == 0)
            DiscardPushes();
    }

    /// <summary>EXEC of a subscribed client: what was published before it goes out ahead of its reply.</summary>
    private void WriteQueuedBeforeExec()
    {
        if (Subscriptions > 0)
            DrainPushes();
    }

    private void DiscardPushes()
    {
        while (_pushes.TryDequeue(out var message))
            Interlocked.Add(ref _pushBytes, -message.Length);
    }

    private void SubscriptionReply(ref CommandContext c, ReadOnlySpan<byte> kind, ReadOnlySpan<byte> name)
    {
        c.Reply.PushHeader(3);
        c.Reply.Bulk(kind);
        c.Reply.Bulk(name);
        c.Reply.Integer(Subscriptions);
    }

    /// <summary>
    /// RESET (<paramref name="deliverQueued"/>: what was published before it still goes out, ahead
    /// of its reply) and disconnect (nothing can be delivered): leave every channel and pattern.
    /// </summary>
    internal void UnsubscribeAll(bool deliverQueued)
    {
        if (_channels is not null)
        {
            foreach (byte[] name in _channels)
                _server.PubSub.Unsubscribe(name, this);
            _channels.Clear();
        }
        if (_patterns is not null)
        {
            foreach (byte[] name in _patterns)
                _server.PubSub.PatternUnsubscribe(name, this);
            _patterns.Clear();
        }
        Class = ClientClass.Normal;
        if (deliverQueued)
            DrainPushes();
        else
            DiscardPushes();
    }
}
