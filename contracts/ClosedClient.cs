namespace Diagnostics.Contracts;

/// <summary>
/// A client the server disconnected for a limit (output buffer, query buffer, maxmemory-clients),
/// as it was when closed: who, why, and the figure that crossed the limit. The server keeps the
/// last few; the log and a counter alone do not tell an operator who it was.
/// </summary>
public sealed record ClosedClient
{
    public required long UnixMs { get; init; }
    /// <summary>"output buffer limit", "query buffer limit", "maxmemory-clients".</summary>
    public required string Reason { get; init; }
    public required long Id { get; init; }
    public required string Address { get; init; }
    public string Name { get; init; } = "";
    /// <summary>The client-output-buffer-limit class: "normal", "pubsub", "replica".</summary>
    public string Class { get; init; } = "normal";
    /// <summary>Unsent replies and queued push messages at the close (CLIENT LIST omem).</summary>
    public long OutputMemoryBytes { get; init; }
    public long QueryBufferBytes { get; init; }
    public long TotalMemoryBytes { get; init; }
    public string LastCommand { get; init; } = "NULL";
    /// <summary>The limit that was crossed, as configured ("33554432 8388608 60" for pubsub), when there is one.</summary>
    public string Limit { get; init; } = "";
}
