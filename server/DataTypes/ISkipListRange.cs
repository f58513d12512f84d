namespace Diagnostics.Server.DataTypes;

/// <summary>
/// An interval of a sorted set's order, by score (<see cref="ScoreRange"/>) or by member
/// (<see cref="LexRange"/>): what the skip list's range walks compare its nodes with. Callers are
/// generic over it, so each kind gets its own compiled walk with the comparisons inlined.
/// </summary>
public unsafe interface ISkipListRange
{
    /// <summary>True when <paramref name="node"/> is not below the range's lower bound.</summary>
    bool AboveMin(SkipNode* node);

    /// <summary>True when <paramref name="node"/> is not above the range's upper bound.</summary>
    bool BelowMax(SkipNode* node);
}
