namespace Diagnostics.Contracts;

/// <summary>
/// What the keyspace holds by value type, and its biggest keys: a walk over the keys, bounded so
/// it never holds the data long (<see cref="Complete"/> is false when it stopped early; the
/// figures then cover <see cref="KeysWalked"/> of <see cref="KeysTotal"/> keys).
/// </summary>
public sealed record KeyspaceReport
{
    public long KeysTotal { get; init; }
    public long KeysWalked { get; init; }
    public bool Complete { get; init; }
    public double WalkMilliseconds { get; init; }
    public IReadOnlyList<KeyTypeSummary> Types { get; init; } = [];
    public IReadOnlyList<BigKey> Biggest { get; init; } = [];
    /// <summary>The stream consumer groups with the most pending entries (delivered, not acknowledged), most first.</summary>
    public IReadOnlyList<StreamGroupSummary> StreamGroups { get; init; } = [];
    /// <summary>When the walk was made (Unix ms).</summary>
    public long TakenUnixMs { get; init; }
    /// <summary>
    /// Set when the keyspace could not be walked now (a long command held the shards): why, and
    /// that the figures are the last walk's, from <see cref="TakenUnixMs"/> (empty if none was made).
    /// </summary>
    public string? Unavailable { get; init; }
}

/// <summary>Keys of one type (string, list, set, zset, hash): how many, their elements and the bytes they hold.</summary>
public sealed record KeyTypeSummary(string Type, long Keys, long Elements, long Bytes);

/// <summary>
/// One of the biggest keys by bytes held (as MEMORY USAGE counts them). The name is shown
/// printable and cut to 64 characters; values are never included.
/// </summary>
public sealed record BigKey(int Database, string Key, string Type, long Elements, long Bytes);

/// <summary>
/// A stream consumer group as the keyspace walk saw it: its consumers, its pending entries (the
/// oldest one's age from its ID's time, and how long since it was last delivered), its lag (null
/// when Redis's counters cannot tell) and the last ID it was given. Names printable, cut to 64.
/// </summary>
public sealed record StreamGroupSummary(int Database, string Key, string Group, long Consumers, long Pending,
    long OldestPendingAgeMs, long OldestPendingIdleMs, long? Lag, string LastDeliveredId);
