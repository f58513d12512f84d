namespace Diagnostics.Server.Diagnostics.SlowCommands;

/// <summary>One command that ran at least slowlog-log-slower-than microseconds, as SLOWLOG GET shows it.</summary>
/// <param name="Script">The script the command ran (an EVAL body's SHA1, EVALSHA's digest, FCALL's function), or null.</param>
/// <param name="SourceArgument">Which argument holds a script's source, left out of the API view and the debug package; -1 for none.</param>
public sealed record SlowLogEntry(long Id, long UnixSeconds, long DurationMicros, byte[][] Arguments, long ClientId, string ClientAddress, string ClientName,
    string? Script = null, int SourceArgument = -1);
