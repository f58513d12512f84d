namespace Diagnostics.Studio.Components;

/// <summary>What a <see cref="SortHeader"/> needs of its table's sorting, whatever the row type.</summary>
public interface ISortState
{
    string Key { get; }
    bool Descending { get; }

    /// <summary>Sorts by <paramref name="key"/>; the same key again flips the direction.</summary>
    void SortBy(string key);
}
