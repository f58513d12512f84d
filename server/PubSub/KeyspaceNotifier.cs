using System.Buffers;
using System.Buffers.Text;

namespace Diagnostics.Server.PubSub;

/// <summary>
/// Keyspace notifications (notify-keyspace-events): an event about a key is published to
/// __keyspace@DB__:KEY (message: the event) and/or __keyevent@DB__:EVENT (message: the key), as
/// Redis does. With the setting empty (the default) an event costs one field read. Published
/// from whichever thread ran the change; the registry queues the messages for subscribers.
/// </summary>
public static class KeyspaceNotifier
{
    private static PubSubRegistry? s_registry;
    private static int s_flags;

    /// <summary>Installed by the server at start; also the point where the setting changes.</summary>
    public static void Configure(PubSubRegistry registry, KeyspaceEventTypes flags)
    {
        s_registry = registry;
        // Without K or E nothing is published, whatever classes are listed.
        if ((flags & (KeyspaceEventTypes.Keyspace | KeyspaceEventTypes.Keyevent)) == 0)
            flags = KeyspaceEventTypes.None;
        Volatile.Write(ref s_flags, (int)flags);
    }

    public static bool Enabled(KeyspaceEventTypes type) => !t_muted && (Volatile.Read(ref s_flags) & (int)type) != 0;

    [ThreadStatic] private static bool t_muted;

    /// <summary>
    /// Silences this thread while it loads or rewrites the AOF: replayed writes are not news, and a
    /// rewrite's private copy of the data must not speak for the live keyspace.
    /// </summary>
    public static MuteScope Mute()
    {
        bool previous = t_muted;
        t_muted = true;
        return new MuteScope(previous);
    }

    public readonly struct MuteScope(bool previous) : IDisposable
    {
        public void Dispose() => t_muted = previous;
    }

    [ThreadStatic] private static List<(KeyspaceEventTypes Type, byte[] Event, byte[] Key, int Database)>? t_deferred;

    /// <summary>
    /// An event that must follow the command's own (the "del" of a list its pop emptied comes after
    /// the "lpop", as in Redis); published by <see cref="FlushDeferred"/> once the command's are out.
    /// </summary>
    public static void Defer(KeyspaceEventTypes type, ReadOnlySpan<byte> eventName, ReadOnlySpan<byte> key, int database)
    {
        if (Enabled(type))
            (t_deferred ??= []).Add((type, eventName.ToArray(), key.ToArray(), database));
    }

    public static void FlushDeferred()
    {
        var deferred = t_deferred;
        if (deferred is null || deferred.Count == 0)
            return;
        foreach (var (type, eventName, key, database) in deferred)
            Notify(type, eventName, key, database);
        deferred.Clear();
    }

    public static void Notify(KeyspaceEventTypes type, ReadOnlySpan<byte> eventName, ReadOnlySpan<byte> key, int database)
    {
        int flags = Volatile.Read(ref s_flags);
        if ((flags & (int)type) == 0 || t_muted || s_registry is not { } registry)
            return;
        Span<byte> db = stackalloc byte[11];
        Utf8Formatter.TryFormat(database, db, out int dbLength);
        db = db[..dbLength];
        if ((flags & (int)KeyspaceEventTypes.Keyspace) != 0)
            Publish(registry, "__keyspace@"u8, db, key, eventName);
        if ((flags & (int)KeyspaceEventTypes.Keyevent) != 0)
            Publish(registry, "__keyevent@"u8, db, eventName, key);
    }

    private static void Publish(PubSubRegistry registry, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> db, ReadOnlySpan<byte> suffix, ReadOnlySpan<byte> message)
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
