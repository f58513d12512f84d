using System.Runtime.CompilerServices;
using Diagnostics.Server.DataTypes.Packed;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// A position in a sorted set's order, whichever form holds it: a member's offset in a listpack,
/// or a skip-list node. Valid until the set is changed. <see cref="Position"/> is the position as
/// one number (for buffers of positions collected before a reply), read back by
/// <see cref="SortedSetView.At"/>.
/// </summary>
public readonly unsafe struct SortedSetCursor
{
    /// <summary>Bytes a caller lends <see cref="Member"/> for an integer member's text.</summary>
    public const int Scratch = ListpackSortedSet.IntegerScratch;

    private readonly byte* _listpack;
    private readonly int _offset;
    private readonly SkipNode* _node;

    internal SortedSetCursor(byte* listpack, int offset)
    {
        _listpack = listpack;
        _offset = offset;
        _node = null;
    }

    internal SortedSetCursor(SkipNode* node)
    {
        _listpack = null;
        _offset = -1;
        _node = node;
    }

    public bool IsEnd
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _listpack != null ? _offset < 0 : _node == null;
    }

    /// <summary>The member's offset in the listpack, or its node's address.</summary>
    public nint Position => _listpack != null ? _offset : (nint)_node;

    /// <summary>The skip-list node (null for a listpack position).</summary>
    public SkipNode* Node => _node;

    /// <summary>The member's bytes; an integer member of a listpack is written as text into <paramref name="scratch"/> (<see cref="Scratch"/> bytes).</summary>
    public ReadOnlySpan<byte> Member(Span<byte> scratch)
        => _listpack != null ? ListpackSortedSet.MemberAt(_listpack, _offset, scratch) : SkipNode.MemberOf(_node);

    public double Score => _listpack != null ? ListpackSortedSet.ScoreOf(_listpack, _offset) : _node->Score;

    /// <summary>The score element as the listpack stores it (ZSCAN replies it as it is); empty for a skip-list node.</summary>
    public ReadOnlySpan<byte> StoredScore(Span<byte> scratch)
        => _listpack != null ? NativeListpack.Read(_listpack, NativeListpack.Skip(_listpack, _offset), out _).AsBytes(scratch) : default;

    public SortedSetCursor Next => _listpack != null ? new(_listpack, ListpackSortedSet.Next(_listpack, _offset)) : new(SkipNode.Next(_node));

    public SortedSetCursor Previous => _listpack != null ? new(_listpack, ListpackSortedSet.Previous(_listpack, _offset)) : new(_node->Backward);

    /// <summary>The next position towards the end a walk goes (<paramref name="reverse"/>: towards the lowest score).</summary>
    public SortedSetCursor Step(bool reverse) => reverse ? Previous : Next;
}
