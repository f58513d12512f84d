using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>
/// What Redis's processCommand does with maxmemory set, before a command runs: while memory is
/// over the limit, evict; then refuse a command flagged denyoom when no room could be made.
/// Here the evicting is done first in the shards the command holds (the shards of its keys, or all
/// of them for whole-keyspace commands), then, when those have nothing left, in the others
/// (<see cref="Eviction.PerformInOtherShards"/>), so a write is refused only when the whole
/// keyspace has nothing the policy may evict.
/// </summary>
internal static class MaxMemoryGate
{
    /// <summary>
    /// Called on the thread that holds the command's shards, with the AOF deletion log of the
    /// command in place, once <see cref="Eviction.NeedsEviction"/> said memory is over. True when the command must be refused with
    /// <see cref="Errors.OutOfMemory"/>: it may grow memory, no shard had anything more the policy
    /// allows to evict (or the policy is noeviction), and memory is still over.
    /// </summary>
    public static bool Refuses(Keyspace keyspace, CommandSpec spec, ArgList args)
    {
        var eviction = keyspace.Eviction;
        var flags = spec.Flags;
        EvictionResult result;
        if ((flags & CommandFlags.AllShards) != 0)
        {
            result = EvictionResult.Fail;
            foreach (var shard in keyspace.Shards)
            {
                result = Better(result, eviction.Perform(shard));
                if (!eviction.IsOverLimit)
                    break;
            }
        }
        else if (spec.HasKeys && (flags & CommandFlags.Connection) == 0)
        {
            result = EvictionResult.Fail;
            foreach (int k in KeyPositions.Of(spec, args))
            {
                // Every shard the command holds helps while memory is over; a shard met again
                // finds its part done or nothing left.
                result = Better(result, eviction.Perform(keyspace.ShardOf(Keyspace.Hash(args[k]))));
                if (!eviction.IsOverLimit)
                    break;
            }
        }
        else
        {
            // A command without keys holds no shard: it cannot evict, only be refused while over.
            result = EvictionResult.Fail;
        }

        // The command's shards had nothing left: as Redis, refuse only when nothing in the whole
        // keyspace can be evicted, so evict from the other shards first (a whole-keyspace command
        // already tried them all).
        if (result == EvictionResult.Fail && (flags & CommandFlags.AllShards) == 0 && eviction.IsOverLimit)
            result = eviction.PerformInOtherShards();
        return Decide(eviction, result, denyOom: (flags & CommandFlags.DenyOom) != 0);
    }

    /// <summary>
    /// The refusal for a command that holds none of the shards it would write (one being queued
    /// inside MULTI, or EXEC deciding for its whole queue): evict wherever a shard is free, then
    /// refuse when <paramref name="denyOom"/> and memory is still over with nothing left to evict.
    /// </summary>
    public static bool RefusesWithoutShards(Keyspace keyspace, bool denyOom)
    {
        var eviction = keyspace.Eviction;
        return Decide(eviction, eviction.PerformInOtherShards(), denyOom);
    }

    /// <summary>
    /// After evicting: refuse a denyoom command only when nothing could be evicted and memory is
    /// still over; a shard that stopped at its share leaves the rest to the background.
    /// </summary>
    private static bool Decide(Eviction eviction, EvictionResult result, bool denyOom)
    {
        if (result == EvictionResult.Fail)
        {
            eviction.RequestBackgroundAfterFail();
            return denyOom && eviction.IsOverLimit;
        }
        if (eviction.IsOverLimit)
            eviction.RequestBackground();
        return false;
    }

    /// <summary>The commands Redis still accepts inside MULTI while memory is over the limit.</summary>
    public static bool PassesInMulti(CommandSpec spec) => spec.Name is "exec" or "discard" or "quit" or "reset";

    private static EvictionResult Better(EvictionResult a, EvictionResult b) => (EvictionResult)Math.Min((int)a, (int)b);
}
