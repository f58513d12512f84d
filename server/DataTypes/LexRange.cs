namespace Diagnostics.Server.DataTypes;

/// <summary>A member interval as ZRANGEBYLEX takes it: "[a" (inclusive), "(a" (exclusive), "-" and "+" (the ends).</summary>
public readonly unsafe ref struct LexRange : ISortedSetRange
{
    private readonly ReadOnlySpan<byte> _min;
    private readonly ReadOnlySpan<byte> _max;
    private readonly LexBound _minKind;
    private readonly LexBound _maxKind;

    private LexRange(ReadOnlySpan<byte> min, LexBound minKind, ReadOnlySpan<byte> max, LexBound maxKind)
    {
        _min = min;
        _max = max;
        _minKind = minKind;
        _maxKind = maxKind;
    }

    private enum LexBound : byte { Inclusive, Exclusive, NegativeInfinity, PositiveInfinity }

    /// <summary>Parses both bounds; false (reply "ERR min or max not valid string range item") otherwise.</summary>
    public static bool TryParse(ReadOnlySpan<byte> min, ReadOnlySpan<byte> max, out LexRange range)
    {
        range = default;
        if (!TryParseBound(min, out var low, out var lowKind) || !TryParseBound(max, out var high, out var highKind))
            return false;
        range = new LexRange(low, lowKind, high, highKind);
        return true;
    }

    private static bool TryParseBound(ReadOnlySpan<byte> text, out ReadOnlySpan<byte> value, out LexBound kind)
    {
        value = default;
        kind = default;
        if (text.Length == 0)
            return false;
        switch (text[0])
        {
            case (byte)'+' when text.Length == 1:
                kind = LexBound.PositiveInfinity;
                return true;
            case (byte)'-' when text.Length == 1:
                kind = LexBound.NegativeInfinity;
                return true;
            case (byte)'[':
                kind = LexBound.Inclusive;
                value = text[1..];
                return true;
            case (byte)'(':
                kind = LexBound.Exclusive;
                value = text[1..];
                return true;
            default:
                return false;
        }
    }

    public bool AboveMin(SkipNode* node) => AboveMin(SkipNode.MemberOf(node));
    public bool BelowMax(SkipNode* node) => BelowMax(SkipNode.MemberOf(node));

    public bool AboveMin(in SortedSetCursor at)
    {
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        return AboveMin(at.Member(scratch));
    }

    public bool BelowMax(in SortedSetCursor at)
    {
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        return BelowMax(at.Member(scratch));
    }

    public bool AboveMin(ReadOnlySpan<byte> member) => _minKind switch
    {
        LexBound.NegativeInfinity => true,
        LexBound.PositiveInfinity => false,
        LexBound.Inclusive => member.SequenceCompareTo(_min) >= 0,
        _ => member.SequenceCompareTo(_min) > 0,
    };

    public bool BelowMax(ReadOnlySpan<byte> member) => _maxKind switch
    {
        LexBound.PositiveInfinity => true,
        LexBound.NegativeInfinity => false,
        LexBound.Inclusive => member.SequenceCompareTo(_max) <= 0,
        _ => member.SequenceCompareTo(_max) < 0,
    };
}
