namespace Diagnostics.Studio.Components;

/// <summary>
/// The sort of one table: comparisons by column key, the current column and direction. Numbers
/// start descending (the biggest first is what people look for), text ascending.
/// </summary>
public sealed class TableSort<T>(string key, bool descending) : ISortState
{
    private readonly Dictionary<string, (Comparison<T> Compare, bool Numeric)> _columns = new(StringComparer.Ordinal);

    public string Key { get; private set; } = key;
    public bool Descending { get; private set; } = descending;

    public TableSort<T> Text(string key, Func<T, string> value)
    {
        _columns[key] = ((a, b) => string.Compare(value(a), value(b), StringComparison.OrdinalIgnoreCase), false);
        return this;
    }

    public TableSort<T> Number(string key, Func<T, double> value)
    {
        _columns[key] = ((a, b) => value(a).CompareTo(value(b)), true);
        return this;
    }

    public void SortBy(string key)
    {
        if (key == Key)
            Descending = !Descending;
        else
        {
            Key = key;
            Descending = _columns.TryGetValue(key, out var column) && column.Numeric;
        }
    }

    /// <summary>Sorts the rows in place (stable for equal keys: the source's order).</summary>
    public List<T> Apply(List<T> rows)
    {
        if (!_columns.TryGetValue(Key, out var column))
            return rows;
        var indexed = new List<(T Row, int Index)>(rows.Count);
        for (int i = 0; i < rows.Count; i++)
            indexed.Add((rows[i], i));
        int sign = Descending ? -1 : 1;
        indexed.Sort((a, b) =>
        {
            int order = column.Compare(a.Row, b.Row) * sign;
            return order != 0 ? order : a.Index.CompareTo(b.Index);
        });
        for (int i = 0; i < rows.Count; i++)
            rows[i] = indexed[i].Row;
        return rows;
    }
}
