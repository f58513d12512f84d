namespace Diagnostics.Server.DataTypes;

/// <summary>
/// An interval of a sorted set's order, by score (<see cref="ScoreRange"/>) or by member
/// (<see cref="LexRange"/>): what range walks compare positions with, in a skip list (its nodes)
/// or a listpack (a <see cref="SortedSetCursor"/>). Callers are generic over it, so each kind gets
/// its own compiled walk with the comparisons inlined.
/// </summary>
public unsafe interface ISortedSetRange
{
    /// <summary>True when <paramref name="node"/> is not below the range's lower bound.</summary>
    bool AboveMin(SkipNode* node);

    /// <summary>True when <paramref name="node"/> is not above the range's upper bound.</summary>
    bool BelowMax(SkipNode* node);

    /// <summary>True when the member at <paramref name="at"/> is not below the range's lower bound.</summary>
    bool AboveMin(in SortedSetCursor at);

    /// <summary>True when the member at <paramref name="at"/> is not above the range's upper bound.</summary>
    bool BelowMax(in SortedSetCursor at);
}
