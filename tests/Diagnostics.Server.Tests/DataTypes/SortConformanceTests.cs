using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// SORT and SORT_RO sent to this server and to the real redis-server side by side in RESP2 and
/// RESP3: numeric and ALPHA order, ties, BY and GET patterns (keys in other shards here, hash
/// fields, "#", missing keys), LIMIT edges, STORE over any type, and every error. A reply whose
/// order Redis leaves to a set's walk (BY nosort on a set) is compared sorted ("~").
/// </summary>
public sealed class SortConformanceTests
{
    public static IEnumerable<object[]> Scripts => Conformance.Keys.Select(name => new object[] { name });

    [Theory]
    [MemberData(nameof(Scripts))]
    public void RepliesMatchRedis(string script)
    {
        string[] lines = Conformance[script];
        bool[] unordered = [.. lines.Select(line => line.StartsWith('~'))];
        string[][] commands = [.. lines.Select((line, i) => (unordered[i] ? line[1..] : line).Split(' '))];
        SideBySideReplies.AssertSame(commands, c => RespAssert.Ok(c.Call("FLUSHALL")), (i, reply) => DataTypeConformanceTests.Render(reply, unordered[i]));
    }

    private static readonly Dictionary<string, string[]> Conformance = new()
    {
        ["numeric-and-alpha"] =
        [
            "RPUSH l 3 1 2 10 -5 2.5 1e2 inf -inf", "SORT l", "SORT l DESC", "SORT l ALPHA", "SORT l ALPHA DESC", "SORT l LIMIT 1 3",
            "SORT l LIMIT -5 2", "SORT l LIMIT 0 -1", "SORT l LIMIT 100 5", "SORT l LIMIT 8 5", "SORT l LIMIT 0 0", "SORT l DESC LIMIT 2 2",
            "SORT_RO l", "SORT_RO l DESC LIMIT 0 3", "RPUSH bad 1 x 2", "SORT bad", "SORT bad ALPHA", "SORT_RO bad",
            "SADD s 5 3 9 1", "SORT s", "SORT s DESC", "SORT s ALPHA LIMIT 1 2", "ZADD z 1 30 2 10 3 20", "SORT z", "SORT z DESC",
            "SORT z ALPHA", "RPUSH ties 1 01 1.0 +1 a", "SORT ties ALPHA", "RPUSH num 1 01 1.0 +1 0x10 \"\" 1e400", "SORT num",
            "RPUSH dup b a b a c", "SORT dup ALPHA", "SORT dup ALPHA DESC", "SORT nokey", "SORT nokey ALPHA LIMIT 0 1",
            "SET str v", "SORT str", "HSET h f v", "SORT h", "SORT_RO str", "RPUSH sp \" 1\" 2", "RPUSH ws 2", "SORT ws",
            "RPUSH tiny 1e-310 1e-400 0.0 -0", "SORT tiny", "RPUSH nan nan", "SORT nan",
        ],
        ["patterns"] =
        [
            "RPUSH l 1 2 3 4", "MSET w_1 40 w_2 30 w_3 20 w_4 10", "SORT l BY w_*", "SORT l BY w_* DESC", "SORT l BY w_* LIMIT 1 2",
            "MSET o_1 one o_2 two o_3 three", "SORT l BY w_* GET o_*", "SORT l BY w_* GET # GET o_*", "SORT l GET o_* GET # GET nostar",
            "SORT l BY nosort", "SORT l BY nosort DESC", "SORT l BY nosort LIMIT 1 2", "SORT l BY nosort DESC LIMIT 1 2",
            "SORT l BY nosort GET o_*", "HSET h_1 f 9 g a", "HSET h_2 f 5 g b", "HSET h_3 f 7", "SORT l BY h_*->f", "SORT l BY h_*->f GET h_*->g",
            "SORT l BY h_*->f GET h_*-> GET h_*->nofield", "SORT l BY h_*->", "SORT l BY w_*->f", "SORT l ALPHA BY o_*",
            "SORT l ALPHA BY o_* DESC", "SORT l ALPHA BY o_* GET o_* LIMIT 0 2", "SET w_2 x", "SORT l BY w_*", "SET w_2 30",
            "LPUSH o_4 notastring", "SORT l BY o_* ALPHA GET o_*", "SORT l BY w_* GET o_* GET w_*", "SORT_RO l BY w_* GET o_*",
            "SORT l BY w_*_suffix", "MSET w_1_s 3 w_2_s 1", "SORT l BY w_*_s", "SORT l GET *", "SET 1 k1", "SET 3 k3", "SORT l GET *",
            "ZADD z 1 a 2 b 3 c", "SORT z BY nosort", "SORT z BY nosort DESC", "SORT z BY nosort LIMIT 1 1", "SORT z BY nosort DESC LIMIT 0 2",
            "SADD s c a b", "~SORT s BY nosort", "~SORT s BY nosort ALPHA", "MSET sw_a 3 sw_b 1 sw_c 2", "SORT s BY sw_*",
            "SORT s BY sw_* GET # GET sw_*",
        ],
        ["store"] =
        [
            "RPUSH l 3 1 2", "SORT l STORE d", "LRANGE d 0 -1", "TYPE d", "SORT l DESC STORE l", "LRANGE l 0 -1",
            "MSET o_1 one o_3 three", "SORT l GET o_* GET # STORE d", "LRANGE d 0 -1", "SORT l LIMIT 5 5 STORE d", "EXISTS d",
            "SORT l LIMIT 5 5 STORE d", "SORT nokey STORE d", "SET str v", "SORT l STORE str", "TYPE str", "LRANGE str 0 -1",
            "SADD s c a b", "SORT s BY nosort STORE d2", "LRANGE d2 0 -1", "SORT s BY nosort DESC STORE d2", "LRANGE d2 0 -1",
            "SORT l STORE d STORE d3", "EXISTS d3", "LRANGE d3 0 -1", "SORT l STORE", "SORT_RO l STORE d", "SET ttl x", "EXPIRE ttl 100",
            "SORT l STORE ttl", "TTL ttl", "SORT str STORE d", "RPUSH bad x", "SORT bad STORE d", "LRANGE d 0 -1",
            "COMMAND GETKEYS SORT l STORE d", "COMMAND GETKEYS SORT l BY w_* GET o_* STORE d2 LIMIT 0 1", "COMMAND GETKEYS SORT_RO l BY w_*",
        ],
        ["errors"] =
        [
            "RPUSH l 1 2", "SORT l LIMIT", "SORT l LIMIT 1", "SORT l LIMIT x 1", "SORT l LIMIT 1 x", "SORT l LIMIT x y FOO", "SORT l FOO",
            "SORT l FOO LIMIT x 1", "SORT l LIMIT 0 1 FOO", "SORT l BY", "SORT l GET", "SORT l ASC DESC", "SORT l DESC ASC", "SORT l alpha Alpha",
            "SORT_RO l STORE", "SORT_RO l LIMIT 0 x", "SORT", "SORT_RO", "SORT nokey FOO", "SORT nokey LIMIT x 1",
            "SORT l LIMIT 9223372036854775807 9223372036854775807", "SORT l LIMIT -9223372036854775808 -1", "SORT l LIMIT 1 9223372036854775807",
        ],
    };
}
