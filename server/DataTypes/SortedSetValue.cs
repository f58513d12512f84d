using System.Runtime.InteropServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// A sorted set, as Redis's large encoding keeps it: a <see cref="SkipList"/> ordered by (score,
/// member) for ranks and ranges, and a <see cref="FieldTable"/> from member to its skip-list
/// node for O(1) ZSCORE and membership. Both live in tracked native memory.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct SortedSetValue
{
    private SkipList _list;
    private FieldTable* _members;
    private long _ownBytes;

    public readonly long Count => _list.Length;
    public readonly long Bytes => _ownBytes + _list.Bytes + _members->Bytes;

    /// <summary>The skip list, for ordered walks (ranks, ranges). Change the set only through this struct.</summary>
    public static SkipList* ListOf(SortedSetValue* set) => &set->_list;

    public static SortedSetValue* Create()
    {
        var set = (SortedSetValue*)TrackedAllocator.Alloc((nuint)sizeof(SortedSetValue));
        *set = default;
        set->_list.Initialize();
        set->_members = FieldTable.Create();
        set->_ownBytes = TrackedAllocator.ChargedSize((byte*)set);
        return set;
    }

    public static void Destroy(SortedSetValue* set)
    {
        set->_list.FreeAll();
        FieldTable.Destroy(set->_members);
        TrackedAllocator.Free((byte*)set);
    }

    /// <summary>The member's node, or null.</summary>
    public readonly SkipNode* Find(ReadOnlySpan<byte> member)
    {
        FieldNode* field = _members->Find(member);
        return field == null ? null : *(SkipNode**)FieldNode.ValuePointer(field);
    }

    public bool TryGetScore(ReadOnlySpan<byte> member, out double score)
    {
        SkipNode* node = Find(member);
        score = node == null ? 0 : node->Score;
        return node != null;
    }

    /// <summary>Adds a member known to be absent.</summary>
    public void Add(ReadOnlySpan<byte> member, double score)
    {
        SkipNode* node = _list.Insert(score, member);
        FieldNode* field = _members->Add(member, FieldTable.HashOf(member), sizeof(SkipNode*));
        *(SkipNode**)FieldNode.ValuePointer(field) = node;
    }

    /// <summary>Gives an existing member a new score.</summary>
    public void Rescore(ReadOnlySpan<byte> member, double score)
    {
        FieldNode* field = _members->Find(member);
        var slot = (SkipNode**)FieldNode.ValuePointer(field);
        *slot = _list.UpdateScore(*slot, score);
    }

    /// <summary>Removes a member; false when absent.</summary>
    public bool Remove(ReadOnlySpan<byte> member)
    {
        SkipNode* node = Find(member);
        if (node == null)
            return false;
        // The member's bytes are in the node: drop the index entry first, while they are readable.
        _members->Remove(member);
        _list.Delete(node->Score, SkipNode.MemberOf(node));
        return true;
    }

    /// <summary>0-based rank from the lowest score (or the highest when <paramref name="reverse"/>), -1 when absent.</summary>
    public readonly long RankOf(ReadOnlySpan<byte> member, bool reverse)
    {
        SkipNode* node = Find(member);
        if (node == null)
            return -1;
        long rank = _list.Rank(node->Score, member);
        return reverse ? _list.Length - rank : rank - 1;
    }

    /// <summary>A random member, or null (ZRANDMEMBER): picked through the member index.</summary>
    public readonly SkipNode* Random(Random random)
    {
        FieldNode* field = _members->Random(random);
        return field == null ? null : *(SkipNode**)FieldNode.ValuePointer(field);
    }

    /// <summary>The member index, for ZSCAN.</summary>
    public readonly FieldTable* Members => _members;
}
