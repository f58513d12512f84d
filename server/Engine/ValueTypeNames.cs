namespace Diagnostics.Server.Engine;

/// <summary>The names TYPE replies and SCAN TYPE filters by, as Redis spells them.</summary>
public static class ValueTypeNames
{
    public static ReadOnlySpan<byte> Of(ValueType type) => type switch
    {
        ValueType.String => "string"u8,
        ValueType.List => "list"u8,
        ValueType.Set => "set"u8,
        ValueType.SortedSet => "zset"u8,
        ValueType.Hash => "hash"u8,
        ValueType.Stream => "stream"u8,
        _ => "none"u8,
    };

    /// <summary>Parses a type name (case-insensitive, as SCAN TYPE accepts it); false for names no type has.</summary>
    public static bool TryParse(ReadOnlySpan<byte> name, out ValueType type)
    {
        foreach (ValueType candidate in s_all)
        {
            if (Protocol.NumberFormat.EqualsIgnoreCase(name, Of(candidate)))
            {
                type = candidate;
                return true;
            }
        }
        type = default;
        return false;
    }

    private static readonly ValueType[] s_all = [ValueType.String, ValueType.List, ValueType.Set, ValueType.SortedSet, ValueType.Hash, ValueType.Stream];
}
