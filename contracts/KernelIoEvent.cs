namespace Diagnostics.Contracts;

/// <summary>One I/O the kernel saw: when, by which thread, which call on what, its result and how long it took.</summary>
/// <param name="Result">Bytes moved or the new descriptor; a negative errno when the call failed.</param>
public sealed record KernelIoEvent(long UnixMicros, int ThreadId, string Call, string Target, long Result, long DurationNanos);
