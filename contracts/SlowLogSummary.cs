namespace Diagnostics.Contracts;

/// <summary>
/// Every slow call since <see cref="SinceUnixSeconds"/> (start or SLOWLOG RESET), by command and by
/// client: the slow log itself keeps only its newest slowlog-max-len entries, so its length is
/// neither how many calls were slow nor who made them.
/// </summary>
public sealed record SlowLogSummary(long SinceUnixSeconds, long Calls, IReadOnlyList<SlowCommandTotal> Commands, IReadOnlyList<SlowClientTotal> Clients);

/// <summary>Slow calls of one command ("debug", "client|list"): how many, their total and worst time.</summary>
public sealed record SlowCommandTotal(string Command, long Calls, long Micros, long MaxMicros);

/// <summary>
/// Slow calls made by one client (the most frequent offenders are kept when there are many):
/// who it is, how many, the worst, and its last slow command.
/// </summary>
public sealed record SlowClientTotal(long Id, string Address, string Name, long Calls, long MaxMicros, string LastCommand, long LastUnixSeconds);
