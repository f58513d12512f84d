using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// One element of a <see cref="SkipList"/>: score, backward link, member length and level, then
/// <see cref="Level"/> forward links with their spans, then the member bytes, in one block.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct SkipNode
{
    public const int HeaderSize = 24;

    public double Score;
    public SkipNode* Backward;
    public int MemberLength;
    public int Level;

    [StructLayout(LayoutKind.Sequential)]
    public struct Link
    {
        public SkipNode* Forward;
        /// <summary>How many elements this link skips over (1 to the next node), for ranks.</summary>
        public long Span;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Link* Links(SkipNode* node) => (Link*)((byte*)node + HeaderSize);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> MemberOf(SkipNode* node) => new((byte*)node + HeaderSize + node->Level * sizeof(Link), node->MemberLength);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static SkipNode* Next(SkipNode* node) => Links(node)[0].Forward;
}

/// <summary>
/// The ordered half of a sorted set: Pugh's skip list with spans, as Redis's zskiplist keeps it,
/// ordered by score and then by member bytes, so ranks, score ranges and lexical ranges are all
/// O(log N). The struct lives in native memory; nodes are tracked blocks and <see cref="Bytes"/>
/// counts them exactly.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct SkipList
{
    public const int MaxLevel = 32;
    /// <summary>Chance that a node reaches the next level (Redis's ZSKIPLIST_P).</summary>
    private const double Promotion = 0.25;

    private SkipNode* _header;
    private SkipNode* _tail;
    private long _length;
    private int _level;
    private long _bytes;

    public readonly long Length => _length;
    public readonly SkipNode* First => SkipNode.Links(_header)[0].Forward;
    public readonly SkipNode* Last => _tail;
    public readonly long Bytes => _bytes;

    public void Initialize()
    {
        _header = NewNode(MaxLevel, 0, []);
        for (int i = 0; i < MaxLevel; i++)
            SkipNode.Links(_header)[i] = default;
        _header->Backward = null;
        _tail = null;
        _length = 0;
        _level = 1;
    }

    public void FreeAll()
    {
        SkipNode* node = SkipNode.Links(_header)[0].Forward;
        while (node != null)
        {
            SkipNode* next = SkipNode.Next(node);
            TrackedAllocator.Free((byte*)node);
            node = next;
        }
        TrackedAllocator.Free((byte*)_header);
        _header = _tail = null;
        _bytes = 0;
    }

    /// <summary>Orders (score, member) pairs: by score, then by member bytes.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool Before(SkipNode* node, double score, ReadOnlySpan<byte> member)
        => node->Score < score || (node->Score == score && SkipNode.MemberOf(node).SequenceCompareTo(member) < 0);

    /// <summary>Inserts a member known to be absent; returns its node.</summary>
    public SkipNode* Insert(double score, ReadOnlySpan<byte> member)
    {
        SkipNode* x = NewNode(RandomLevel(), score, member);
        Link(x);
        return x;
    }

    /// <summary>Puts a node that is not in the list at the place its score and member give it.</summary>
    private void Link(SkipNode* x)
    {
        SkipNode** update = stackalloc SkipNode*[MaxLevel];
        long* rank = stackalloc long[MaxLevel];
        double score = x->Score;
        var member = SkipNode.MemberOf(x);
        SkipNode* at = _header;
        for (int i = _level - 1; i >= 0; i--)
        {
            rank[i] = i == _level - 1 ? 0 : rank[i + 1];
            while (SkipNode.Links(at)[i].Forward is var f && f != null && Before(f, score, member))
            {
                rank[i] += SkipNode.Links(at)[i].Span;
                at = f;
            }
            update[i] = at;
        }
        int level = x->Level;
        if (level > _level)
        {
            for (int i = _level; i < level; i++)
            {
                rank[i] = 0;
                update[i] = _header;
                SkipNode.Links(_header)[i].Span = _length;
            }
            _level = level;
        }
        for (int i = 0; i < level; i++)
        {
            var links = SkipNode.Links(x);
            var before = SkipNode.Links(update[i]);
            links[i].Forward = before[i].Forward;
            before[i].Forward = x;
            links[i].Span = before[i].Span - (rank[0] - rank[i]);
            before[i].Span = rank[0] - rank[i] + 1;
        }
        for (int i = level; i < _level; i++)
            SkipNode.Links(update[i])[i].Span++;
        x->Backward = update[0] == _header ? null : update[0];
        if (SkipNode.Links(x)[0].Forward != null)
            SkipNode.Links(x)[0].Forward->Backward = x;
        else
            _tail = x;
        _length++;
    }

    /// <summary>Removes and frees the node for (score, member); false when absent.</summary>
    public bool Delete(double score, ReadOnlySpan<byte> member)
    {
        SkipNode** update = stackalloc SkipNode*[MaxLevel];
        SkipNode* x = _header;
        for (int i = _level - 1; i >= 0; i--)
        {
            while (SkipNode.Links(x)[i].Forward is var f && f != null && Before(f, score, member))
                x = f;
            update[i] = x;
        }
        x = SkipNode.Links(x)[0].Forward;
        if (x == null || x->Score != score || !SkipNode.MemberOf(x).SequenceEqual(member))
            return false;
        Unlink(x, update);
        Release(x);
        return true;
    }

    /// <summary>
    /// Moves a node to a new score. When it stays in place only the score changes; otherwise the
    /// same node is unlinked and linked again at its new place (no allocation, and the member
    /// index keeps pointing at it). Returns the node, for callers that keep it.
    /// </summary>
    public SkipNode* UpdateScore(SkipNode* node, double newScore)
    {
        SkipNode* back = node->Backward;
        SkipNode* next = SkipNode.Next(node);
        var member = SkipNode.MemberOf(node);
        if ((back == null || back->Score < newScore || (back->Score == newScore && SkipNode.MemberOf(back).SequenceCompareTo(member) < 0))
            && (next == null || newScore < next->Score || (next->Score == newScore && member.SequenceCompareTo(SkipNode.MemberOf(next)) < 0)))
        {
            node->Score = newScore;
            return node;
        }
        SkipNode** update = stackalloc SkipNode*[MaxLevel];
        SkipNode* x = _header;
        for (int i = _level - 1; i >= 0; i--)
        {
            while (SkipNode.Links(x)[i].Forward is var f && f != null && Before(f, node->Score, member))
                x = f;
            update[i] = x;
        }
        Unlink(node, update);
        node->Score = newScore;
        Link(node);
        return node;
    }

    /// <summary>The 1-based rank of (score, member), 0 when absent.</summary>
    public readonly long Rank(double score, ReadOnlySpan<byte> member)
    {
        long rank = 0;
        SkipNode* x = _header;
        for (int i = _level - 1; i >= 0; i--)
        {
            while (SkipNode.Links(x)[i].Forward is var f && f != null
                && (f->Score < score || (f->Score == score && SkipNode.MemberOf(f).SequenceCompareTo(member) <= 0)))
            {
                rank += SkipNode.Links(x)[i].Span;
                x = f;
            }
            if (x != _header && x->Score == score && SkipNode.MemberOf(x).SequenceEqual(member))
                return rank;
        }
        return 0;
    }

    /// <summary>The node at 1-based <paramref name="rank"/>, or null.</summary>
    public readonly SkipNode* ByRank(long rank)
    {
        if (rank < 1 || rank > _length)
            return null;
        long traversed = 0;
        SkipNode* x = _header;
        for (int i = _level - 1; i >= 0; i--)
        {
            while (SkipNode.Links(x)[i].Forward != null && traversed + SkipNode.Links(x)[i].Span <= rank)
            {
                traversed += SkipNode.Links(x)[i].Span;
                x = SkipNode.Links(x)[i].Forward;
            }
            if (traversed == rank)
                return x;
        }
        return null;
    }

    /// <summary>The first node inside <paramref name="range"/> (of scores or of members), or null.</summary>
    public readonly SkipNode* FirstIn<TRange>(in TRange range) where TRange : ISortedSetRange, allows ref struct
    {
        if (!Overlaps(range))
            return null;
        SkipNode* x = _header;
        for (int i = _level - 1; i >= 0; i--)
            while (SkipNode.Links(x)[i].Forward is var f && f != null && !range.AboveMin(f))
                x = f;
        x = SkipNode.Links(x)[0].Forward;
        return x != null && range.BelowMax(x) ? x : null;
    }

    /// <summary>The last node inside <paramref name="range"/> (of scores or of members), or null.</summary>
    public readonly SkipNode* LastIn<TRange>(in TRange range) where TRange : ISortedSetRange, allows ref struct
    {
        if (!Overlaps(range))
            return null;
        SkipNode* x = _header;
        for (int i = _level - 1; i >= 0; i--)
            while (SkipNode.Links(x)[i].Forward is var f && f != null && range.BelowMax(f))
                x = f;
        return x != _header && range.AboveMin(x) ? x : null;
    }

    /// <summary>False when no node can be inside: the set is empty, or lies wholly outside the range.</summary>
    private readonly bool Overlaps<TRange>(in TRange range) where TRange : ISortedSetRange, allows ref struct
        => _tail != null && range.AboveMin(_tail) && range.BelowMax(First);

    /// <summary>Unlinks <paramref name="x"/> given its predecessor at every level.</summary>
    private void Unlink(SkipNode* x, SkipNode** update)
    {
        for (int i = 0; i < _level; i++)
        {
            var before = SkipNode.Links(update[i]);
            if (before[i].Forward == x)
            {
                before[i].Span += SkipNode.Links(x)[i].Span - 1;
                before[i].Forward = SkipNode.Links(x)[i].Forward;
            }
            else
            {
                before[i].Span--;
            }
        }
        SkipNode* next = SkipNode.Links(x)[0].Forward;
        if (next != null)
            next->Backward = x->Backward;
        else
            _tail = x->Backward;
        while (_level > 1 && SkipNode.Links(_header)[_level - 1].Forward == null)
            _level--;
        _length--;
    }

    private static int RandomLevel()
    {
        int level = 1;
        var random = System.Random.Shared;
        while (level < MaxLevel && random.NextDouble() < Promotion)
            level++;
        return level;
    }

    private SkipNode* NewNode(int level, double score, ReadOnlySpan<byte> member)
    {
        long size = SkipNode.HeaderSize + (long)level * sizeof(SkipNode.Link) + member.Length;
        if (size > TrackedAllocator.MaxBlockBytes)
            throw new BlockTooLargeException(size);
        var node = (SkipNode*)TrackedAllocator.Alloc((nuint)size);
        node->Score = score;
        node->Backward = null;
        node->MemberLength = member.Length;
        node->Level = level;
        member.CopyTo(new Span<byte>((byte*)node + SkipNode.HeaderSize + level * sizeof(SkipNode.Link), member.Length));
        _bytes += TrackedAllocator.ChargedSize((byte*)node);
        return node;
    }

    private void Release(SkipNode* node)
    {
        _bytes -= TrackedAllocator.ChargedSize((byte*)node);
        TrackedAllocator.Free((byte*)node);
    }
}
