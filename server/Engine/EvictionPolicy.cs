namespace Diagnostics.Server.Engine;

/// <summary>
/// maxmemory-policy: which keys may go when memory is over maxmemory (AllKeys or only those with
/// a TTL) and how the victim is chosen. The bits mirror Redis's MAXMEMORY_FLAG_* composition.
/// </summary>
[Flags]
public enum EvictionPolicy
{
    NoEviction = 0,
    Lru = 1 << 0,
    Lfu = 1 << 1,
    Ttl = 1 << 2,
    Random = 1 << 3,
    AllKeys = 1 << 4,

    VolatileLru = Lru,
    VolatileLfu = Lfu,
    VolatileTtl = Ttl,
    VolatileRandom = Random,
    AllKeysLru = AllKeys | Lru,
    AllKeysLfu = AllKeys | Lfu,
    AllKeysRandom = AllKeys | Random,
}

public static class EvictionPolicyNames
{
    /// <summary>In the order Redis lists them in its error text.</summary>
    private static readonly (string Name, EvictionPolicy Policy)[] Names =
    [
        ("volatile-lru", EvictionPolicy.VolatileLru), ("volatile-lfu", EvictionPolicy.VolatileLfu),
        ("volatile-random", EvictionPolicy.VolatileRandom), ("volatile-ttl", EvictionPolicy.VolatileTtl),
        ("allkeys-lru", EvictionPolicy.AllKeysLru), ("allkeys-lfu", EvictionPolicy.AllKeysLfu),
        ("allkeys-random", EvictionPolicy.AllKeysRandom), ("noeviction", EvictionPolicy.NoEviction),
    ];

    public static string[] All => Array.ConvertAll(Names, n => n.Name);

    public static string Of(EvictionPolicy policy)
    {
        foreach (var (name, value) in Names)
            if (value == policy)
                return name;
        throw new ArgumentOutOfRangeException(nameof(policy), policy, null);
    }

    public static bool TryParse(string text, out EvictionPolicy policy)
    {
        foreach (var (name, value) in Names)
        {
            if (name.Equals(text, StringComparison.OrdinalIgnoreCase))
            {
                policy = value;
                return true;
            }
        }
        policy = EvictionPolicy.NoEviction;
        return false;
    }

    /// <summary>True when victims are chosen through the sampled candidate pool (LRU, LFU, TTL).</summary>
    public static bool UsesPool(this EvictionPolicy policy) => (policy & (EvictionPolicy.Lru | EvictionPolicy.Lfu | EvictionPolicy.Ttl)) != 0;
}
