using Diagnostics.Server.Engine;
using Diagnostics.Server.Commands;

namespace Diagnostics.Server.PubSub;

/// <summary>
/// The keyspace event each write command publishes for the keys it changed, with Redis's names
/// and classes. Commands that publish events of their own (DEL for the keys really deleted,
/// RENAME's rename_from/rename_to, the moves, the multi-key pops, ZADD's zadd or zincr, GEOADD's
/// zadd, SORT's sortstore, the geo STORE forms' georadiusstore/geosearchstore or del) are not
/// listed here.
/// </summary>
public static class CommandEvents
{
    private static readonly (string Command, KeyspaceEventTypes Type, string Event)[] s_events =
    [
        ("set", KeyspaceEventTypes.String, "set"), ("setnx", KeyspaceEventTypes.String, "set"), ("setex", KeyspaceEventTypes.String, "set"),
        ("psetex", KeyspaceEventTypes.String, "set"), ("getset", KeyspaceEventTypes.String, "set"), ("mset", KeyspaceEventTypes.String, "set"),
        ("msetnx", KeyspaceEventTypes.String, "set"), ("append", KeyspaceEventTypes.String, "append"), ("setrange", KeyspaceEventTypes.String, "setrange"),
        ("setbit", KeyspaceEventTypes.String, "setbit"),
        // PFMERGE raises "pfadd" too, for its destination only (its WrittenKey).
        ("pfadd", KeyspaceEventTypes.String, "pfadd"), ("pfmerge", KeyspaceEventTypes.String, "pfadd"),
        ("incr", KeyspaceEventTypes.String, "incrby"), ("decr", KeyspaceEventTypes.String, "decrby"), ("incrby", KeyspaceEventTypes.String, "incrby"),
        ("decrby", KeyspaceEventTypes.String, "decrby"), ("incrbyfloat", KeyspaceEventTypes.String, "incrbyfloat"),
        ("getdel", KeyspaceEventTypes.Generic, "del"),
        ("expire", KeyspaceEventTypes.Generic, "expire"), ("pexpire", KeyspaceEventTypes.Generic, "expire"), ("expireat", KeyspaceEventTypes.Generic, "expire"),
        ("pexpireat", KeyspaceEventTypes.Generic, "expire"), ("persist", KeyspaceEventTypes.Generic, "persist"), ("copy", KeyspaceEventTypes.Generic, "copy_to"),
        ("lpush", KeyspaceEventTypes.List, "lpush"), ("lpushx", KeyspaceEventTypes.List, "lpush"), ("rpush", KeyspaceEventTypes.List, "rpush"),
        ("rpushx", KeyspaceEventTypes.List, "rpush"), ("lpop", KeyspaceEventTypes.List, "lpop"), ("rpop", KeyspaceEventTypes.List, "rpop"),
        ("linsert", KeyspaceEventTypes.List, "linsert"), ("lset", KeyspaceEventTypes.List, "lset"), ("lrem", KeyspaceEventTypes.List, "lrem"),
        ("ltrim", KeyspaceEventTypes.List, "ltrim"),
        ("hset", KeyspaceEventTypes.Hash, "hset"), ("hmset", KeyspaceEventTypes.Hash, "hset"), ("hsetnx", KeyspaceEventTypes.Hash, "hset"),
        ("hdel", KeyspaceEventTypes.Hash, "hdel"), ("hincrby", KeyspaceEventTypes.Hash, "hincrby"), ("hincrbyfloat", KeyspaceEventTypes.Hash, "hincrbyfloat"),
        ("sadd", KeyspaceEventTypes.Set, "sadd"), ("srem", KeyspaceEventTypes.Set, "srem"), ("spop", KeyspaceEventTypes.Set, "spop"),
        ("sinterstore", KeyspaceEventTypes.Set, "sinterstore"), ("sunionstore", KeyspaceEventTypes.Set, "sunionstore"), ("sdiffstore", KeyspaceEventTypes.Set, "sdiffstore"),
        ("zincrby", KeyspaceEventTypes.SortedSet, "zincr"), ("zrem", KeyspaceEventTypes.SortedSet, "zrem"),
        ("zremrangebyrank", KeyspaceEventTypes.SortedSet, "zremrangebyrank"), ("zremrangebyscore", KeyspaceEventTypes.SortedSet, "zremrangebyscore"),
        ("zremrangebylex", KeyspaceEventTypes.SortedSet, "zremrangebylex"), ("zpopmin", KeyspaceEventTypes.SortedSet, "zpopmin"),
        ("zpopmax", KeyspaceEventTypes.SortedSet, "zpopmax"), ("zunionstore", KeyspaceEventTypes.SortedSet, "zunionstore"),
        ("zinterstore", KeyspaceEventTypes.SortedSet, "zinterstore"), ("zdiffstore", KeyspaceEventTypes.SortedSet, "zdiffstore"),
        ("zrangestore", KeyspaceEventTypes.SortedSet, "zrangestore"),
    ];

    /// <summary>Gives every listed command its event; called once the table is built.</summary>
    public static void Attach(CommandTable table)
    {
        foreach (var (command, type, name) in s_events)
        {
            var spec = table.Find(command) ?? throw new InvalidOperationException($"keyspace event for unknown command {command}");
            spec.Event = System.Text.Encoding.ASCII.GetBytes(name);
            spec.EventType = type;
        }
    }
}
