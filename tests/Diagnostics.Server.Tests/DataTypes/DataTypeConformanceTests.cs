using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Hash, list, set and sorted set commands sent to this server and to Debian's real redis-server
/// (7.0) side by side, in RESP2 and RESP3, with every reply compared: values, error texts, nulls
/// of the right kind, and the shapes RESP3 gives (maps, sets, doubles, nested score pairs).
/// A command whose reply order Redis leaves unspecified (SMEMBERS, a big hash's HGETALL...) is
/// compared with its items sorted; one marked "~" below. A small hash is a listpack in both, so
/// its HGETALL, HKEYS, HVALS and whole-hash HRANDFIELD come in insertion order and are compared as they are. Commands whose replies are random, or that Redis 7.0
/// lacks (ZRANK WITHSCORE, HSCAN NOVALUES), are covered by the per-type tests instead.
/// </summary>
public sealed class DataTypeConformanceTests
{
    public static IEnumerable<object[]> Scripts => Conformance.Keys.Select(name => new object[] { name });

    [Theory]
    [MemberData(nameof(Scripts))]
    public void RepliesMatchRedis(string script)
    {
        string[] lines = Conformance[script];
        bool[] unordered = [.. lines.Select(line => line.StartsWith('~'))];
        string[][] commands = [.. lines.Select((line, i) => (unordered[i] ? line[1..] : line).Split(' '))];
        SideBySideReplies.AssertSame(commands, c => RespAssert.Ok(c.Call("FLUSHALL")), (i, reply) => Render(reply, unordered[i]));
    }

    internal static string Render(RespValue reply, bool unordered)
    {
        if (!unordered || reply.Items is null)
            return reply.ToString();
        var items = reply.Items.Select(item => item.ToString()).Order(StringComparer.Ordinal);
        return $"{reply.Kind}[{string.Join(", ", items)}]";
    }

    private static readonly Dictionary<string, string[]> Conformance = new()
    {
        ["transactions"] =
        [
            "MULTI", "WATCH a", "SET a 1", "EXEC", "GET a", "MULTI", "MULTI", "SET a 2", "EXEC", "GET a",
            "MULTI", "NOSUCH", "SET a 3", "EXEC", "GET a", "MULTI", "SET a", "EXEC", "EXEC", "DISCARD",
            "MULTI", "INCR a", "LPUSH a x", "INCR a", "EXEC", "MULTI", "BLPOP l 0", "BRPOPLPUSH l m 0", "BZPOPMIN z 0", "EXEC",
            "WATCH a", "UNWATCH", "MULTI", "DISCARD", "MULTI", "PING", "ECHO x", "MSET k1 1 k2 2 k3 3 k4 4",
            "MGET k1 k2 k3 k4", "EXEC", "MULTI", "EXEC", "WATCH a", "SET a changed", "MULTI", "GET a", "EXEC",
            "WATCH zz", "MULTI", "SET zz 1", "EXEC", "MULTI", "SHUTDOWN", "EXEC", "MULTI", "SELECT 2", "SET in2 x", "EXEC",
            "GET in2", "SELECT 2", "GET in2", "SELECT 0", "MULTI", "HSET h f v", "HGETALL h", "ZADD z 1 m", "ZRANGE z 0 -1 WITHSCORES", "EXEC",
        ],
        // Counts at the edges of a 64-bit long: Redis refuses LONG_MIN (its negation would be the
        // reply's length) before it looks at the key or the syntax, and bounds a count with values
        // to +-LONG_MAX/2. No large negative count on an existing key: Redis would send that many.
        ["random-counts"] =
        [
            "SADD s a b c", "HSET h a 1 b 2", "ZADD z 1 a 2 b",
            "SRANDMEMBER s -9223372036854775808", "SRANDMEMBER nos -9223372036854775808", "SRANDMEMBER s 1 x",
            "SRANDMEMBER nos -9223372036854775807", "~SRANDMEMBER s 9223372036854775807", "SRANDMEMBER s abc",
            "HRANDFIELD h -9223372036854775808", "HRANDFIELD noh -9223372036854775808",
            "HRANDFIELD h -9223372036854775808 WITHVALUES", "HRANDFIELD noh -9223372036854775808 WITHVALUES",
            "HRANDFIELD h -9223372036854775808 X", "HRANDFIELD h abc X", "HRANDFIELD h 4611686018427387904 WITHVALUES",
            "HRANDFIELD noh -4611686018427387904 WITHVALUES", "HRANDFIELD noh -4611686018427387903 WITHVALUES",
            "HRANDFIELD h 4611686018427387903 WITHVALUES", "HRANDFIELD h 9223372036854775807",
            "ZRANDMEMBER z -9223372036854775808", "ZRANDMEMBER noz -9223372036854775808",
            "ZRANDMEMBER z -9223372036854775808 WITHSCORES", "ZRANDMEMBER noz -9223372036854775808 WITHSCORES",
            "ZRANDMEMBER z -9223372036854775808 X", "ZRANDMEMBER z abc X", "ZRANDMEMBER z 4611686018427387904 WITHSCORES",
            "ZRANDMEMBER noz -4611686018427387904 WITHSCORES", "ZRANDMEMBER noz -4611686018427387903 WITHSCORES",
            "~ZRANDMEMBER z 4611686018427387903 WITHSCORES", "~ZRANDMEMBER z 9223372036854775807",
        ],
        ["hash"] =
        [
            "HSET h a 1 b 2 c 3", "HSET h a 10", "HSET h x", "HGET h a", "HGET h nope", "HGET nokey a",
            "HMGET h a nope c", "HMGET nokey a b", "HLEN h", "HLEN nokey", "HEXISTS h a", "HEXISTS h nope",
            "HSTRLEN h a", "HSTRLEN h nope", "HGETALL h", "HKEYS h", "HVALS h", "HGETALL nokey", "HKEYS nokey",
            "HSETNX h a 5", "HSETNX h d 4", "HMSET h e 5 f 6", "HMSET h e", "HLEN h",
            "HINCRBY h a 5", "HINCRBY h new -3", "HINCRBY h a x", "HSET h s text", "HINCRBY h s 1",
            "HINCRBY h a 9223372036854775807", "HINCRBYFLOAT h fl 1.5", "HINCRBYFLOAT h fl 1e400", "HINCRBYFLOAT h s 1",
            "HINCRBYFLOAT h fl -0.25", "HINCRBYFLOAT h fl abc", "HGET h fl",
            "HDEL h a b nope", "HDEL h nope", "HDEL nokey a", "HDEL h c d e f new s fl", "EXISTS h",
            "SET str v", "HSET str a 1", "HGET str a", "HLEN str", "HGETALL str", "HDEL str a", "TYPE h",
            "HSET t f v", "TYPE t", "HSCAN t 0", "HSCAN nokey 0", "HSCAN t 0 COUNT 0", "HSCAN t x", "HSCAN t 0 MATCH f*",
            "HRANDFIELD nokey", "HRANDFIELD nokey 3", "HRANDFIELD t 1", "HRANDFIELD t -1 WITHVALUES", "HRANDFIELD t 5 WITHVALUES",
            "HRANDFIELD t 1 NOPE", "HRANDFIELD t x",
        ],
        ["list"] =
        [
            "RPUSH l a b c d e", "LPUSH l z", "LRANGE l 0 -1", "LRANGE l -2 100", "LRANGE l 5 2", "LRANGE l -100 -50",
            "LRANGE nokey 0 -1", "LRANGE l a b", "LINDEX l -1", "LINDEX l 99", "LINDEX l 0", "LINDEX nokey 0",
            "LSET l 1 A", "LSET l 99 x", "LSET nokey 0 x", "LSET l -1 E",
            "LINSERT l BEFORE c bc", "LINSERT l AFTER E ee", "LINSERT l after nope x", "LINSERT l middle a x",
            "LINSERT nokey before a b", "LRANGE l 0 -1", "LREM l 0 x", "RPUSH l x y x x", "LREM l -2 x", "LREM l 1 x",
            "LRANGE l 0 -1", "LPOS l bc", "LPOS l x", "RPUSH l bc bc", "LPOS l bc COUNT 0", "LPOS l bc RANK -1",
            "LPOS l bc RANK 2 COUNT 2", "LPOS l bc COUNT 0 MAXLEN 3", "LPOS l nope", "LPOS l nope COUNT 2",
            "LPOS l bc RANK 0", "LPOS l bc COUNT -1", "LPOS l bc COUNT x", "LPOS l bc MAXLEN -1", "LPOS l bc MAXLEN x", "LPOS l bc FOO 1", "LPOS nokey a",
            "LTRIM l 1 -2", "LRANGE l 0 -1", "LPOP l", "RPOP l 2", "LPOP l 0", "LPOP nokey 2", "LPOP nokey",
            "LPOP l -1", "RPOP l 1 2", "LLEN l", "LLEN nokey",
            "LMOVE l l2 LEFT RIGHT", "LMOVE l l LEFT RIGHT", "LMOVE l l RIGHT RIGHT", "LRANGE l 0 -1",
            "RPOPLPUSH l l2", "LRANGE l2 0 -1", "LMOVE l l2 UP DOWN", "LMOVE nokey l2 LEFT LEFT", "EXISTS nokey",
            "LMPOP 2 nokey l2 RIGHT COUNT 5", "EXISTS l2", "LMPOP 1 nokey LEFT", "LMPOP 0 l LEFT", "LMPOP 1 l UP",
            "LMPOP 1 l LEFT COUNT 0", "LMPOP 3 l LEFT", "LMPOP 1 l LEFT COUNT 1 2",
            "LPUSHX nokey a", "RPUSHX l q", "LRANGE l 0 -1", "SET str v", "LPUSH str a", "LRANGE str 0 1", "LPOP str",
            "LMOVE l str LEFT LEFT", "LTRIM l 5 1", "EXISTS l", "RPUSH big 0123456789abcdef short 7bytes! 8bytes!!",
            "LRANGE big 0 -1", "LSET big 1 a-much-longer-element-than-before", "LINDEX big 1", "TYPE big",
        ],
        ["set"] =
        [
            "SADD s a b c", "SADD s a", "SADD s d e", "SREM s a zz", "SREM nokey a", "SCARD s", "SCARD nokey",
            "SISMEMBER s b", "SISMEMBER s zz", "SISMEMBER nokey a", "SMISMEMBER s b zz c", "SMISMEMBER nokey a",
            "~SMEMBERS s", "SMEMBERS nokey", "SADD t b x", "~SINTER s t", "SINTER s nokey", "~SUNION s t nokey",
            "~SDIFF s t", "SDIFF nokey s", "SINTERSTORE d s t", "~SMEMBERS d", "SINTERCARD 2 s t", "SINTERCARD 2 s t LIMIT 0",
            "SINTERCARD 2 s t LIMIT 1", "SINTERCARD 0 s", "SINTERCARD 3 s", "SINTERCARD 1 s LIMIT -1", "SINTERCARD 1 s LIMIT x", "SPOP s x", "SSCAN s 0 COUNT 0", "SINTERCARD 1 s LIMIT",
            "SDIFFSTORE d2 s t", "~SMEMBERS d2", "SUNIONSTORE d3 s t nokey", "SCARD d3", "SINTERSTORE d s nokey", "EXISTS d",
            "SDIFFSTORE s s s", "EXISTS s", "SADD s a b c", "SMOVE s t c", "SMOVE s t c", "SMOVE nokey s c", "SMOVE t t b",
            "SMOVE t t zz", "SET str v", "SMOVE t str b", "SMOVE str t b", "SMOVE nokey str b", "SADD str a", "SINTER s str",
            "SUNIONSTORE str s", "TYPE str", "SPOP s -1", "SPOP nokey 0", "SPOP nokey", "SPOP nokey 3", "SPOP s 0",
            "SRANDMEMBER nokey 5", "SRANDMEMBER nokey", "SRANDMEMBER s 0", "SRANDMEMBER s 1 2", "SSCAN nokey 0",
            "SADD one only", "SSCAN one 0", "SSCAN one 0 NOVALUES", "SPOP one", "EXISTS one", "SADD two x y", "~SPOP two 5", "EXISTS two",
        ],
        ["zset"] =
        [
            "ZADD z 1 a 2 b 3 c", "ZPOPMIN z 2", "ZMPOP 1 z MAX COUNT 1", "ZADD z 1 a 2 b 3 c 3 d -inf m +inf p",
            "ZRANGEBYSCORE z -inf +inf WITHSCORES LIMIT 1 3", "ZRANGEBYSCORE z (1 3", "ZREVRANGEBYSCORE z 3 (1 WITHSCORES",
            "ZREVRANGEBYSCORE z +inf -inf LIMIT 2 2", "ZRANGEBYSCORE z 3 1", "ZRANGEBYSCORE z (3 (3", "ZRANGEBYSCORE z x 1",
            "ZRANGEBYSCORE z -inf +inf LIMIT -1 2", "ZRANGEBYSCORE z -inf +inf LIMIT 0 -1",
            "ZUNION 2 z nokey WITHSCORES", "ZUNION 0 z", "ZUNION 3 z", "ZUNIONSTORE d 0 z", "ZINTER 1 z WEIGHTS x",
            "ZINTER 1 z AGGREGATE foo", "ZINTERCARD 0 z", "ZRANGE z 0 1 LIMIT 0 1", "ZRANGE z a b BYLEX WITHSCORES",
            "ZREVRANK z a", "ZRANK z zz", "ZRANK nokey a", "ZRANGE z (1 +inf BYSCORE REV", "ZRANGE z +inf (1 BYSCORE REV LIMIT 0 1",
            "ZRANGESTORE d z 0 -1", "ZRANGE d 0 -1 WITHSCORES", "ZRANGESTORE d z 5 1", "EXISTS d", "ZRANGE z -2 -1",
            "ZRANGE z 0 -1 REV", "ZREVRANGE z 0 1 WITHSCORES", "ZREVRANGE z 0 1 LIMIT 0 1", "ZRANGE z 0 -1 FOO",
            "ZLEXCOUNT z - +", "ZLEXCOUNT z a b", "ZCOUNT z -inf +inf", "ZCOUNT z (1 3", "ZCOUNT z 5 1", "ZCOUNT z a 1",
            "ZREMRANGEBYRANK z 0 0", "ZMSCORE nokey a", "ZMSCORE z b x", "ZSCORE nokey a", "ZSCORE z p", "ZSCORE z m",
            "ZINCRBY z x a", "ZINCRBY z 2.5 b", "ZINCRBY z 1 fresh", "ZADD z", "ZADD z 1", "ZADD z 1 a 2",
            "ZADD z XX INCR 1 nokey", "ZADD nokey XX 1 a", "EXISTS nokey", "ZADD z CH GT 0 b 10 c 5 new", "ZADD z LT CH 1 c",
            "ZADD z NX INCR 1 c", "ZADD z INCR 1 c", "ZADD z GT INCR -1 c", "ZADD z nan x", "ZADD z 1 x y z",
            "ZADD z NX XX 1 a", "ZADD z GT LT 1 a", "ZADD z NX GT 1 a", "ZADD z INCR 1 a 2 b", "ZINCRBY z -inf p",
            "ZADD z INCR -inf p", "ZRANGE z 0 -1 WITHSCORES", "ZREMRANGEBYSCORE z -inf (3", "ZREMRANGEBYSCORE z x y",
            "ZREMRANGEBYLEX z - +", "EXISTS z", "ZADD lx 0 a 0 b 0 c 0 d 0 e", "ZRANGEBYLEX lx [b (d",
            "ZREVRANGEBYLEX lx + - LIMIT 1 2", "ZRANGEBYLEX lx - [c", "ZRANGEBYLEX lx b c", "ZRANGEBYLEX lx - + WITHSCORES",
            "ZLEXCOUNT lx (a [e", "ZRANGE lx [b [d BYLEX", "ZRANGE lx [d [b BYLEX REV", "ZREMRANGEBYLEX lx [d +", "ZRANGE lx 0 -1",
            "ZADD z1 1 a 2 b", "ZADD z2 10 b 20 c", "SADD s1 a c", "ZUNIONSTORE u 3 z1 z2 s1 WEIGHTS 1 2 3",
            "ZRANGE u 0 -1 WITHSCORES", "ZINTERSTORE i 2 z1 z2 AGGREGATE MAX", "ZRANGE i 0 -1 WITHSCORES",
            "ZINTER 2 z1 s1 WITHSCORES", "ZDIFF 2 z1 z2 WITHSCORES", "ZDIFFSTORE dd 2 z1 z2", "ZRANGE dd 0 -1 WITHSCORES",
            "ZINTERCARD 2 z1 z2", "ZINTERCARD 2 z1 z2 LIMIT 1", "ZINTERCARD 2 z1 nokey", "ZUNION 2 z1 z2 AGGREGATE MIN WITHSCORES",
            "ZUNION 2 z1 z2 WEIGHTS 1", "ZDIFF 2 z1 z2 WEIGHTS 1 1", "ZUNIONSTORE u2 1 z1 WITHSCORES",
            "ZPOPMIN u 2", "ZPOPMAX u", "ZPOPMAX u -1", "ZPOPMIN nokey", "ZPOPMIN nokey 2", "ZPOPMIN u 0", "ZPOPMIN u 1 2", "SPOP s 1 2",
            "ZMPOP 2 nokey u MIN COUNT 10", "ZMPOP 1 nokey MAX", "ZMPOP 0 u MIN", "ZMPOP 1 u UP", "ZMPOP 1 i MIN COUNT 0", "ZMPOP 3 i MIN", "ZMPOP 1 i MIN COUNT -1",
            "ZADD inf inf a -inf b", "ZUNIONSTORE o 2 inf inf WEIGHTS 1 -1", "ZRANGE o 0 -1 WITHSCORES",
            "ZUNIONSTORE o 1 inf WEIGHTS 0", "ZRANGE o 0 -1 WITHSCORES", "ZINTERSTORE o 2 inf inf", "ZRANGE o 0 -1 WITHSCORES",
            "SET str v", "ZADD str 1 a", "ZSCORE str a", "ZUNION 2 z1 str", "ZRANGE str 0 1", "TYPE o",
            "ZRANDMEMBER nokey", "ZRANDMEMBER nokey 2", "ZRANDMEMBER z1 0", "ZRANDMEMBER z1 1 2",
            "ZADD one 1 only", "ZSCAN one 0", "ZRANDMEMBER one -1 WITHSCORES", "ZRANDMEMBER one 5 WITHSCORES",
            "ZADD ties 1 b 1 a 1 c 0.5 z", "ZRANGE ties 0 -1 WITHSCORES", "ZRANK ties c", "ZREVRANK ties z", "ZRANGE ties 1 1 BYSCORE",
        ],
    };
}
