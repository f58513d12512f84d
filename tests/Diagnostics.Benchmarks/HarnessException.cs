namespace Diagnostics.Benchmarks;

/// <summary>A failure the harness explains to the operator in one message (no stack trace).</summary>
public sealed class HarnessException(string message) : Exception(message);
