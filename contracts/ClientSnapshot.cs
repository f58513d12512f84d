namespace Diagnostics.Contracts;

/// <summary>One connected client, with CLIENT LIST's fields and this server's totals.</summary>
public sealed record ClientSnapshot
{
    public required long Id { get; init; }
    public required string Address { get; init; }
    public required string LocalAddress { get; init; }
    public long FileDescriptor { get; init; }
    public string Name { get; init; } = "";
    public long AgeSeconds { get; init; }
    public long IdleSeconds { get; init; }
    public string Flags { get; init; } = "N";
    public int Database { get; init; }
    public int Subscriptions { get; init; }
    public int PatternSubscriptions { get; init; }
    public int MultiCount { get; init; } = -1;
    public long QueryBufferBytes { get; init; }
    public long QueryBufferFreeBytes { get; init; }
    public long ArgvMemoryBytes { get; init; }
    public long OutputBufferBytes { get; init; }
    public long OutputListLength { get; init; }
    public long OutputMemoryBytes { get; init; }
    public long TotalMemoryBytes { get; init; }
    /// <summary>Push messages (pub/sub, MONITOR, invalidations) queued and not yet written: part of <see cref="OutputMemoryBytes"/>.</summary>
    public long PendingPushBytes { get; init; }
    /// <summary>Seconds the client has had unsent output without taking any of it (0 while it reads, or has none).</summary>
    public long OutputStalledSeconds { get; init; }
    /// <summary>Commands refused with TOOBUSY because too many commands already waited for shards.</summary>
    public long TooBusyRefusals { get; init; }
    /// <summary>The client-output-buffer-limit class it is under: "normal", "pubsub", "replica".</summary>
    public string Class { get; init; } = "normal";
    public string Events { get; init; } = "r";
    public string LastCommand { get; init; } = "NULL";
    public string User { get; init; } = "default";
    public int Protocol { get; init; } = 2;
    public string LibraryName { get; init; } = "";
    public string LibraryVersion { get; init; } = "";
    public long NetInputBytes { get; init; }
    public long NetOutputBytes { get; init; }
    public long CommandsProcessed { get; init; }
    /// <summary>The command running for this client now, if any.</summary>
    public InFlightWork? Running { get; init; }
}
