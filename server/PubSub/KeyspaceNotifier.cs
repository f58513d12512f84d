using System.Buffers;
using System.Buffers.Text;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.PubSub;

/// <summary>
/// Keyspace notifications (notify-keyspace-events): an event about a key is published to
/// __keyspace@DB__:KEY (message: the event) and/or __keyevent@DB__:EVENT (message: the key), as
/// Redis does. With the setting empty (the default) an event costs one field read. Published
/// from whichever thread ran the change; the registry queues the messages for subscribers.
/// One per server: the Engine reaches it through the effects scope, never through a static.
/// </summary>
public sealed class KeyspaceNotifier(PubSubRegistry registry) : IKeyspaceEvents
{
    private int _flags;

    /// <summary>The setting changed (and at start).</summary>
    public void Configure(KeyspaceEventTypes flags)
    {
        // Without K or E nothing is published, whatever classes are listed.
        if ((flags & (KeyspaceEventTypes.Keyspace | KeyspaceEventTypes.Keyevent)) == 0)
            flags = KeyspaceEventTypes.None;
        Volatile.Write(ref _flags, (int)flags);
    }

    public bool Enabled(KeyspaceEventTypes type) => (Volatile.Read(ref _flags) & (int)type) != 0;

    public void Notify(KeyspaceEventTypes type, ReadOnlySpan<byte> eventName, ReadOnlySpan<byte> key, int database)
    {
        int flags = Volatile.Read(ref _flags);
        if ((flags & (int)type) == 0)
            return;
        Span<byte> db = stackalloc byte[11];
        Utf8Formatter.TryFormat(database, db, out int dbLength);
        db = db[..dbLength];
        if ((flags & (int)KeyspaceEventTypes.Keyspace) != 0)
            Publish("__keyspace@"u8, db, key, eventName);
        if ((flags & (int)KeyspaceEventTypes.Keyevent) != 0)
            Publish("__keyevent@"u8, db, eventName, key);
    }

    private void Publish(ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> db, ReadOnlySpan<byte> suffix, ReadOnlySpan<byte> message)
    {
        int length = prefix.Length + db.Length + 3 + suffix.Length;
        byte[]? rented = length > 256 ? ArrayPool<byte>.Shared.Rent(length) : null;
        Span<byte> channel = rented is null ? stackalloc byte[length] : rented;
        prefix.CopyTo(channel);
        db.CopyTo(channel[prefix.Length..]);
        "__:"u8.CopyTo(channel[(prefix.Length + db.Length)..]);
        suffix.CopyTo(channel[(prefix.Length + db.Length + 3)..]);
        registry.Publish(channel[..length], message);
        if (rented is not null)
            ArrayPool<byte>.Shared.Return(rented);
    }
}
