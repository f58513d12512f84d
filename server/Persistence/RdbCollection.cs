namespace Diagnostics.Server.Persistence;

/// <summary>The kinds of collection an RDB file holds, whatever encoding it chose for each.</summary>
public enum RdbCollection
{
    List,
    Set,
    Hash,
    SortedSet,
}
