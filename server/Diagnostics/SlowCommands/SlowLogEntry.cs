namespace Diagnostics.Server.Diagnostics.SlowCommands;

/// <summary>One command that ran at least slowlog-log-slower-than microseconds, as SLOWLOG GET shows it.</summary>
public sealed record SlowLogEntry(long Id, long UnixSeconds, long DurationMicros, byte[][] Arguments, string ClientAddress, string ClientName);
