namespace Diagnostics.Server.Commands;

/// <summary>Redis's ACL command categories, in the order Redis lists them (COMMAND INFO, ACL CAT).</summary>
[Flags]
public enum AclCategories
{
    None = 0,
    Keyspace = 1 << 0,
    Read = 1 << 1,
    Write = 1 << 2,
    Set = 1 << 3,
    SortedSet = 1 << 4,
    List = 1 << 5,
    Hash = 1 << 6,
    String = 1 << 7,
    Bitmap = 1 << 8,
    HyperLogLog = 1 << 9,
    Geo = 1 << 10,
    Stream = 1 << 11,
    PubSub = 1 << 12,
    Admin = 1 << 13,
    Fast = 1 << 14,
    Slow = 1 << 15,
    Blocking = 1 << 16,
    Dangerous = 1 << 17,
    Connection = 1 << 18,
    Transaction = 1 << 19,
    Scripting = 1 << 20,
}
