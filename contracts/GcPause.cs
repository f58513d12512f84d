namespace Diagnostics.Contracts;

/// <summary>One garbage collection as the runtime reported it: which generation, why, and how long the runtime was suspended.</summary>
public sealed record GcPause(long StartUnixMicros, int Number, int Generation, string Reason, string Type, long PauseMicros);
