namespace Diagnostics.Server.Persistence;

/// <summary>The role a file plays in the append-only directory, as the manifest's "type" spells it.</summary>
public enum AofFileType
{
    /// <summary>"b": the snapshot everything else applies to.</summary>
    Base,
    /// <summary>"i": commands appended after the base, in sequence order.</summary>
    Incremental,
    /// <summary>"h": replaced by a rewrite, waiting to be deleted.</summary>
    History,
}
