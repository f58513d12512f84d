namespace Diagnostics.Server.Engine;

/// <summary>The classes of notify-keyspace-events, one bit per letter of Redis's flag string.</summary>
[Flags]
public enum KeyspaceEventTypes
{
    None = 0,
    /// <summary>K: publish to __keyspace@db__:key, the event as the message.</summary>
    Keyspace = 1 << 0,
    /// <summary>E: publish to __keyevent@db__:event, the key as the message.</summary>
    Keyevent = 1 << 1,
    /// <summary>g: generic commands (DEL, EXPIRE, RENAME...).</summary>
    Generic = 1 << 2,
    /// <summary>$: string commands.</summary>
    String = 1 << 3,
    /// <summary>l: list commands.</summary>
    List = 1 << 4,
    /// <summary>s: set commands.</summary>
    Set = 1 << 5,
    /// <summary>h: hash commands.</summary>
    Hash = 1 << 6,
    /// <summary>z: sorted set commands.</summary>
    SortedSet = 1 << 7,
    /// <summary>x: keys deleted because their TTL passed.</summary>
    Expired = 1 << 8,
    /// <summary>e: keys evicted for maxmemory.</summary>
    Evicted = 1 << 9,
    /// <summary>t: stream commands.</summary>
    Stream = 1 << 10,
    /// <summary>m: key misses (excluded from A, as in Redis).</summary>
    KeyMiss = 1 << 11,
    /// <summary>d: module events (no modules here; accepted for compatibility).</summary>
    Module = 1 << 12,
    /// <summary>n: new keys (excluded from A, as in Redis).</summary>
    New = 1 << 13,

    /// <summary>A: g$lshzxetd.</summary>
    All = Generic | String | List | Set | Hash | SortedSet | Expired | Evicted | Stream | Module,
}

/// <summary>notify-keyspace-events text to flags and back, with Redis's letters and order.</summary>
public static class KeyspaceEventFlags
{
    public static bool TryParse(string text, out KeyspaceEventTypes flags)
    {
        flags = KeyspaceEventTypes.None;
        foreach (char letter in text)
        {
            flags |= letter switch
            {
                'A' => KeyspaceEventTypes.All,
                'g' => KeyspaceEventTypes.Generic,
                '$' => KeyspaceEventTypes.String,
                'l' => KeyspaceEventTypes.List,
                's' => KeyspaceEventTypes.Set,
                'h' => KeyspaceEventTypes.Hash,
                'z' => KeyspaceEventTypes.SortedSet,
                'x' => KeyspaceEventTypes.Expired,
                'e' => KeyspaceEventTypes.Evicted,
                'K' => KeyspaceEventTypes.Keyspace,
                'E' => KeyspaceEventTypes.Keyevent,
                't' => KeyspaceEventTypes.Stream,
                'm' => KeyspaceEventTypes.KeyMiss,
                'd' => KeyspaceEventTypes.Module,
                'n' => KeyspaceEventTypes.New,
                _ => (KeyspaceEventTypes)(-1),
            };
            if (flags < 0)
            {
                flags = KeyspaceEventTypes.None;
                return false;
            }
        }
        return true;
    }

    public static string Format(KeyspaceEventTypes flags)
    {
        var text = new System.Text.StringBuilder();
        if ((flags & KeyspaceEventTypes.All) == KeyspaceEventTypes.All)
            text.Append('A');
        else
        {
            if ((flags & KeyspaceEventTypes.Generic) != 0) text.Append('g');
            if ((flags & KeyspaceEventTypes.String) != 0) text.Append('$');
            if ((flags & KeyspaceEventTypes.List) != 0) text.Append('l');
            if ((flags & KeyspaceEventTypes.Set) != 0) text.Append('s');
            if ((flags & KeyspaceEventTypes.Hash) != 0) text.Append('h');
            if ((flags & KeyspaceEventTypes.SortedSet) != 0) text.Append('z');
            if ((flags & KeyspaceEventTypes.Expired) != 0) text.Append('x');
            if ((flags & KeyspaceEventTypes.Evicted) != 0) text.Append('e');
            if ((flags & KeyspaceEventTypes.Stream) != 0) text.Append('t');
            if ((flags & KeyspaceEventTypes.Module) != 0) text.Append('d');
        }
        if ((flags & KeyspaceEventTypes.Keyspace) != 0) text.Append('K');
        if ((flags & KeyspaceEventTypes.Keyevent) != 0) text.Append('E');
        if ((flags & KeyspaceEventTypes.KeyMiss) != 0) text.Append('m');
        if ((flags & KeyspaceEventTypes.New) != 0) text.Append('n');
        return text.ToString();
    }
}
