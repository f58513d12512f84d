using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.DataTypes;

/// <summary>A score interval as ZRANGEBYSCORE takes it: "1.5", "(1.5" (exclusive), "-inf", "+inf".</summary>
public readonly unsafe struct ScoreRange(double min, double max, bool minExclusive, bool maxExclusive) : ISortedSetRange
{
    public readonly double Min = min;
    public readonly double Max = max;
    public readonly bool MinExclusive = minExclusive;
    public readonly bool MaxExclusive = maxExclusive;

    public bool AboveMin(double score) => MinExclusive ? score > Min : score >= Min;
    public bool BelowMax(double score) => MaxExclusive ? score < Max : score <= Max;
    public bool Contains(double score) => AboveMin(score) && BelowMax(score);
    public bool AboveMin(SkipNode* node) => AboveMin(node->Score);
    public bool BelowMax(SkipNode* node) => BelowMax(node->Score);
    public bool AboveMin(in SortedSetCursor at) => AboveMin(at.Score);
    public bool BelowMax(in SortedSetCursor at) => BelowMax(at.Score);

    /// <summary>Parses both bounds; false (reply "ERR min or max is not a float") when either is not a score.</summary>
    public static bool TryParse(ReadOnlySpan<byte> min, ReadOnlySpan<byte> max, out ScoreRange range)
    {
        range = default;
        if (!TryParseBound(min, out double low, out bool lowOpen) || !TryParseBound(max, out double high, out bool highOpen))
            return false;
        range = new ScoreRange(low, high, lowOpen, highOpen);
        return true;
    }

    private static bool TryParseBound(ReadOnlySpan<byte> text, out double value, out bool exclusive)
    {
        exclusive = text.Length > 0 && text[0] == (byte)'(';
        if (exclusive)
            text = text[1..];
        return NumberFormat.TryParseDouble(text, out value) && !double.IsNaN(value);
    }
}
