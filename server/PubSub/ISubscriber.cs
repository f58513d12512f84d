namespace Diagnostics.Server.PubSub;

/// <summary>Where published messages go: a connection that subscribed to channels or patterns.</summary>
public interface ISubscriber
{
    /// <summary>The protocol the messages are encoded for (RESP2 arrays or RESP3 pushes).</summary>
    int Protocol { get; }

    /// <summary>
    /// Queues a message already in RESP form, from any thread; the subscriber's own thread writes
    /// it out. A subscriber over its pub/sub output buffer limit is dropped instead.
    /// </summary>
    void Push(byte[] message);
}
