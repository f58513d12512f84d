namespace Diagnostics.Contracts;

/// <summary>A SLOWLOG entry; arguments already redacted and truncated as SLOWLOG GET shows them.</summary>
public sealed record SlowLogRecord(long Id, long UnixSeconds, long Micros, IReadOnlyList<string> Arguments, string ClientAddress, string ClientName)
{
    /// <summary>The script the command ran (an EVAL body's SHA1, EVALSHA's digest, FCALL's function), or null; its source is never among the arguments here.</summary>
    public string? Script { get; init; }
    /// <summary>The id of the client that ran it (CLIENT LIST's id; 0 in packages that predate it).</summary>
    public long ClientId { get; init; }
}
