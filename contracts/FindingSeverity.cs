namespace Diagnostics.Contracts;

/// <summary>How urgent a doctor finding is.</summary>
public enum FindingSeverity
{
    /// <summary>Worth knowing; nothing is wrong yet.</summary>
    Info,
    /// <summary>Degrading service or heading for trouble.</summary>
    Warning,
    /// <summary>Failing now: errors, refused writes, lost clients.</summary>
    Critical,
}
