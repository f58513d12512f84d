namespace Diagnostics.Contracts;

/// <summary>
/// The server's Lua scripts: EVAL's cached scripts and FUNCTION's libraries, each with its calls
/// and time, the one running now, and what the VMs hold. A script's source is included only when
/// asked for (it may hold secrets), never in a debug package.
/// </summary>
public sealed record ScriptReport
{
    public IReadOnlyList<ScriptStatistics> Scripts { get; init; } = [];
    /// <summary>The script running now, or null.</summary>
    public RunningScript? Running { get; init; }
    public long EvalVmBytes { get; init; }
    public long FunctionsVmBytes { get; init; }
    public long BusyTotal { get; init; }
    public long KilledTotal { get; init; }
}

/// <summary>One EVAL script (by SHA1) or FUNCTION library function (by name).</summary>
public sealed record ScriptStatistics
{
    /// <summary>"script" (EVAL) or "function" (FCALL).</summary>
    public required string Kind { get; init; }
    /// <summary>The SHA1 of an EVAL script; the function's name.</summary>
    public required string Name { get; init; }
    /// <summary>The function's library; null for an EVAL script.</summary>
    public string? Library { get; init; }
    public IReadOnlyList<string> Flags { get; init; } = [];
    public string? Description { get; init; }
    public long Calls { get; init; }
    public long Microseconds { get; init; }
    public long FailedCalls { get; init; }
    public long MaxMicroseconds { get; init; }
    /// <summary>The script's or library's source; only when asked for.</summary>
    public string? Source { get; init; }
}

/// <summary>The script running at the time of the report.</summary>
public sealed record RunningScript
{
    public required string Name { get; init; }
    public long ElapsedMs { get; init; }
    /// <summary>Past busy-reply-threshold: other clients are answered BUSY.</summary>
    public bool Busy { get; init; }
    public long ClientId { get; init; }
}
