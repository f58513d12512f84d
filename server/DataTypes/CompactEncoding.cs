using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// Whether Redis 7.0 would hold a value in its compact encoding (intset, listpack) rather than
/// its hash table or skip list, judged from the value as it is now and the *-max-* limits. This
/// server keeps one structure per type, but RDB files and DUMP payloads carry Redis's encoding, so
/// the writer asks here. Redis decides the same way when it loads such a value; only a value that
/// grew past a limit and shrank back differs, since Redis never converts back while it runs.
/// </summary>
public static unsafe class CompactEncoding
{
    /// <summary>An intset: every member a canonical 64-bit integer, at most set-max-intset-entries of them.</summary>
    public static bool IsIntset(FieldTable* set, long maxEntries)
    {
        if (set->Count > maxEntries)
            return false;
        foreach (FieldNode* node in *set)
            if (!NumberFormat.TryParseInt64(FieldNode.FieldOf(node), out _))
                return false;
        return true;
    }

    /// <summary>A listpack sorted set: at most zset-max-listpack-entries members, none longer than zset-max-listpack-value.</summary>
    public static bool IsListpackSortedSet(SortedSetValue* set, long maxEntries, long maxValue)
    {
        if (set->Count > maxEntries)
            return false;
        for (SkipNode* node = SortedSetValue.ListOf(set)->First; node != null; node = SkipNode.Next(node))
            if (node->MemberLength > maxValue)
                return false;
        return true;
    }
}
