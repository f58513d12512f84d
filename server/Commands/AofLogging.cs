namespace Diagnostics.Server.Commands;

/// <summary>What a write command leaves in the append-only file.</summary>
public enum AofLogging
{
    /// <summary>Its own arguments, as received (deterministic commands: DEL, INCR, MSET...).</summary>
    Verbatim,
    /// <summary>What the handler wrote through CommandContext.LogAs: the effective command.</summary>
    Rewritten,
    /// <summary>Nothing: the command changed no data.</summary>
    Nothing,
}
