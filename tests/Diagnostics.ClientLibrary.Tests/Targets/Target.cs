namespace Diagnostics.ClientLibrary.Tests.Targets;

/// <summary>Which server a test body runs against: the same body runs against both.</summary>
public enum Target
{
    /// <summary>This project's server (Diagnostics.Server.dll as a process).</summary>
    Diagnostics,

    /// <summary>Debian's redis-server 7.0, the reference the answers must match.</summary>
    Redis,
}
