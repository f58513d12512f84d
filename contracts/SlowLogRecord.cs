namespace Diagnostics.Contracts;

/// <summary>A SLOWLOG entry; arguments already redacted and truncated as SLOWLOG GET shows them.</summary>
public sealed record SlowLogRecord(long Id, long UnixSeconds, long Micros, IReadOnlyList<string> Arguments, string ClientAddress, string ClientName);
