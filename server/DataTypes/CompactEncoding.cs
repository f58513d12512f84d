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
    /// <summary>A listpack hash: at most hash-max-listpack-entries fields, none of them nor their values longer than hash-max-listpack-value.</summary>
    public static bool IsListpackHash(FieldTable* hash, long maxEntries, long maxValue)
    {
        if (hash->Count > maxEntries)
            return false;
        foreach (FieldNode* node in *hash)
            if (node->FieldLength > maxValue || node->ValueLength > maxValue)
                return false;
        return true;
    }
}
