namespace Diagnostics.Server.Commands;

/// <summary>
/// How a <see cref="CommandSpec"/> is described to clients (COMMAND INFO, COMMAND LIST FILTERBY
/// ACLCAT): Redis's flag names and ACL categories. Routing flags (Connection, AllShards) are this
/// server's business and never reported.
/// </summary>
public static class CommandMetadata
{
    /// <summary>Our flags and Redis's names for them, in the order Redis prints them.</summary>
    private static readonly (CommandFlags Flag, string Name)[] FlagNames =
    [
        (CommandFlags.Write, "write"), (CommandFlags.ReadOnly, "readonly"), (CommandFlags.DenyOom, "denyoom"),
        (CommandFlags.Admin, "admin"), (CommandFlags.PubSub, "pubsub"), (CommandFlags.NoScript, "noscript"),
        (CommandFlags.Blocking, "blocking"), (CommandFlags.Loading, "loading"), (CommandFlags.Stale, "stale"),
        (CommandFlags.SkipSlowlog, "skip_slowlog"), (CommandFlags.SkipMonitor, "skip_monitor"), (CommandFlags.Fast, "fast"), (CommandFlags.NoAuth, "no_auth"),
        (CommandFlags.NoMandatoryKeys, "no_mandatory_keys"), (CommandFlags.NoAsyncLoading, "no_async_loading"), (CommandFlags.NoMulti, "no_multi"),
        (CommandFlags.AllowBusy, "allow_busy"),
    ];

    private static readonly string[] CategoryNames =
    [
        "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog",
        "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
        "transaction", "scripting",
    ];

    /// <summary>
    /// Categories Redis declares per command in its command table that follow from neither the
    /// flags nor the group (KEYS is @dangerous, DBSIZE @keyspace...). Keyed by top-level name;
    /// subcommands inherit their container's entry.
    /// </summary>
    private static readonly Dictionary<string, AclCategories> DeclaredCategories = new(StringComparer.OrdinalIgnoreCase)
    {
        ["keys"] = AclCategories.Dangerous,
        ["flushall"] = AclCategories.Keyspace | AclCategories.Dangerous,
        ["flushdb"] = AclCategories.Keyspace | AclCategories.Dangerous,
        ["swapdb"] = AclCategories.Keyspace | AclCategories.Dangerous,
        ["dbsize"] = AclCategories.Keyspace,
        ["info"] = AclCategories.Dangerous,
        ["lastsave"] = AclCategories.Admin | AclCategories.Dangerous,
        ["role"] = AclCategories.Admin | AclCategories.Dangerous,
        ["sort"] = AclCategories.Set | AclCategories.SortedSet | AclCategories.List | AclCategories.Dangerous,
        ["sort_ro"] = AclCategories.Set | AclCategories.SortedSet | AclCategories.List | AclCategories.Dangerous,
        ["migrate"] = AclCategories.Keyspace | AclCategories.Dangerous,
        ["restore"] = AclCategories.Keyspace | AclCategories.Dangerous,
        ["command"] = AclCategories.Connection,
        ["wait"] = AclCategories.Connection,
    };

    /// <summary>Generic commands that Redis does not put in @keyspace, though their group would.</summary>
    private static readonly HashSet<string> OutsideGroupCategory = new(StringComparer.OrdinalIgnoreCase) { "sort", "sort_ro", "wait" };

    /// <summary>Redis's flag names for <paramref name="spec"/>.</summary>
    public static List<string> Flags(CommandSpec spec)
    {
        var names = new List<string>(4);
        foreach (var (flag, name) in FlagNames)
            if ((spec.Flags & flag) != 0)
                names.Add(name);
        // Keys found by counting (numkeys), by keyword (SORT's and GEORADIUS's STORE, XREAD's
        // STREAMS) or by pattern (SORT_RO's BY and GET): a client must ask COMMAND GETKEYS.
        if (spec.KeyCountIndex > 0 || spec.StoreKey is not null || spec.KeyRange is not null || spec.ReadsPatternKeys is not null)
            names.Add("movablekeys");
        return names;
    }

    /// <summary>
    /// The ACL categories, derived as Redis does (write, read, admin+dangerous, pubsub, fast,
    /// blocking from the flags; slow when not fast) plus the data-type category of the group.
    /// </summary>
    public static AclCategories Categories(CommandSpec spec)
    {
        var flags = spec.Flags;
        var top = spec.Parent ?? spec;
        var categories = OutsideGroupCategory.Contains(top.Name) ? AclCategories.None : GroupCategory(spec.Group);
        if (DeclaredCategories.TryGetValue(top.Name, out var declared))
            categories |= declared;
        if ((flags & CommandFlags.Write) != 0) categories |= AclCategories.Write;
        if ((flags & CommandFlags.ReadOnly) != 0 && (categories & AclCategories.Scripting) == 0) categories |= AclCategories.Read;
        if ((flags & CommandFlags.Admin) != 0) categories |= AclCategories.Admin | AclCategories.Dangerous;
        if ((flags & CommandFlags.PubSub) != 0) categories |= AclCategories.PubSub;
        if ((flags & CommandFlags.Fast) != 0) categories |= AclCategories.Fast;
        if ((flags & CommandFlags.Blocking) != 0) categories |= AclCategories.Blocking;
        if ((categories & AclCategories.Fast) == 0) categories |= AclCategories.Slow;
        return categories;
    }

    /// <summary>"@read", "@string"... in Redis's order.</summary>
    public static List<string> CategoryList(AclCategories categories)
    {
        var names = new List<string>(4);
        for (int bit = 0; bit < CategoryNames.Length; bit++)
            if (((int)categories & (1 << bit)) != 0)
                names.Add("@" + CategoryNames[bit]);
        return names;
    }

    /// <summary>Parses a category name as ACL and COMMAND LIST FILTERBY ACLCAT take it (no "@").</summary>
    public static bool TryParseCategory(string name, out AclCategories category)
    {
        for (int bit = 0; bit < CategoryNames.Length; bit++)
        {
            if (CategoryNames[bit].Equals(name, StringComparison.OrdinalIgnoreCase))
            {
                category = (AclCategories)(1 << bit);
                return true;
            }
        }
        category = AclCategories.None;
        return false;
    }

    /// <summary>
    /// The key specification flags of a command's key range. Our specs do not record Redis's
    /// finer access kinds (insert, delete...), so reads report RO+access and writes RW+update.
    /// </summary>
    public static string[] KeySpecFlags(CommandSpec spec)
    {
        if ((spec.Flags & CommandFlags.Write) != 0)
            return ["RW", "update"];
        if ((spec.Flags & CommandFlags.ReadOnly) != 0)
            return ["RO", "access"];
        return ["RO"];
    }

    private static AclCategories GroupCategory(string group) => group switch
    {
        "generic" => AclCategories.Keyspace,
        "string" => AclCategories.String,
        "list" => AclCategories.List,
        "set" => AclCategories.Set,
        "sorted-set" or "sorted_set" or "sortedset" => AclCategories.SortedSet,
        "hash" => AclCategories.Hash,
        "bitmap" => AclCategories.Bitmap,
        "hyperloglog" => AclCategories.HyperLogLog,
        "geo" => AclCategories.Geo,
        "stream" => AclCategories.Stream,
        "pubsub" => AclCategories.PubSub,
        "connection" => AclCategories.Connection,
        "transactions" => AclCategories.Transaction,
        "scripting" => AclCategories.Scripting,
        _ => AclCategories.None,
    };
}
