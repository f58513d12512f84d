using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// The bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO) sent to
/// this server and to the real redis-server side by side in RESP2 and RESP3, every reply compared,
/// errors and their order included (Redis 7.0 looks BITCOUNT's key up before its range, BITPOS's
/// bit before its key, and parses every BITFIELD operation before running one).
/// </summary>
public sealed class BitmapConformanceTests
{
    public static IEnumerable<object[]> Scripts => Conformance.Keys.Select(name => new object[] { name });

    [Theory]
    [MemberData(nameof(Scripts))]
    public void RepliesMatchRedis(string script)
    {
        string[][] commands = [.. Conformance[script].Select(line => line.Split(' '))];
        SideBySideReplies.AssertSame(commands, c => RespAssert.Ok(c.Call("FLUSHALL")), (_, reply) => DataTypeConformanceTests.Render(reply, false));
    }

    private static readonly Dictionary<string, string[]> Conformance = new()
    {
        ["setbit-getbit"] =
        [
            "SETBIT b 7 1", "GET b", "SETBIT b 7 0", "SETBIT b 7 1", "SETBIT b 100 1", "STRLEN b", "GET b", "GETBIT b 100",
            "GETBIT b 101", "GETBIT b 99999", "GETBIT nokey 3", "SETBIT b -1 1", "SETBIT b x 1", "SETBIT b 1 2", "SETBIT b 1 -1",
            "SETBIT b 1 x", "GETBIT b -1", "GETBIT b x", "SETBIT b 4294967296 1", "GETBIT b 4294967295",
            "GETBIT b 4294967296", "SET n 12345", "GETBIT n 2", "SETBIT n 2 0", "GET n", "LPUSH l a", "SETBIT l 1 1",
            "GETBIT l 1", "SETBIT l 1 2", "GETBIT l x", "SETBIT fresh 0 0", "GET fresh", "EXISTS fresh", "TYPE b",
        ],
        ["bitcount"] =
        [
            "SET s foobar", "BITCOUNT s", "BITCOUNT s 0 0", "BITCOUNT s 1 1", "BITCOUNT s 1 -2", "BITCOUNT s -3 -1",
            "BITCOUNT s -1 -3", "BITCOUNT s 5 1", "BITCOUNT s 0 100", "BITCOUNT s -100 -50", "BITCOUNT s 5 30 BIT",
            "BITCOUNT s 0 0 BIT", "BITCOUNT s 1 6 bit", "BITCOUNT s -9 -1 BIT", "BITCOUNT s 2 2 BYTE", "BITCOUNT s 0 -1 bit",
            "BITCOUNT s 0 1 bad", "BITCOUNT s a b", "BITCOUNT s 1 x", "BITCOUNT s 1", "BITCOUNT s 0 1 BIT extra",
            "BITCOUNT nokey", "BITCOUNT nokey a b", "BITCOUNT nokey 0 1 bad", "BITCOUNT nokey 1", "SET empty x", "GETDEL empty", "LPUSH l a", "BITCOUNT l", "BITCOUNT l a b", "SET n 255", "BITCOUNT n",
            "SET big 0123456789abcdef0123456789abcdef0123456789", "BITCOUNT big", "BITCOUNT big 3 37", "BITCOUNT big 13 300 BIT",
            "BITCOUNT big 8 15 BIT", "BITCOUNT big 7 8 BIT",
        ],
        ["bitpos"] =
        [
            "BITFIELD s SET u8 0 255 SET u8 8 240 SET u8 16 0", "BITPOS s 0", "BITPOS s 1", "SETBIT z 0 0", "SETBIT z 15 0", "BITPOS z 1", "BITPOS z 0",
            "BITFIELD ones SET u32 0 4294967295", "BITPOS ones 0", "BITPOS ones 1", "BITPOS ones 0 0 -1", "SETBIT all 7 1", "BITPOS all 0", "BITPOS all 1", "BITPOS nokey 0", "BITPOS nokey 1",
            "BITPOS nokey 2", "BITPOS nokey 1 x", "SET s2 foobar", "BITPOS s2 1", "BITPOS s2 0", "BITPOS s2 1 2", "BITPOS s2 1 2 -1",
            "BITPOS s2 0 1 3", "BITPOS s2 1 -2 -1", "BITPOS s2 1 7 15 BIT", "BITPOS s2 0 7 15 bit", "BITPOS s2 1 2 -1 BIT",
            "BITPOS s2 1 100", "BITPOS s2 0 100", "BITPOS s2 1 5 1", "BITPOS s2 1 x", "BITPOS s2 0 x 2 bad", "BITPOS s2 0 1 x bad",
            "BITPOS s2 0 1 2 bad", "BITPOS s2 0 1 2 BIT x", "BITPOS s2 2", "BITPOS s2 -1", "BITPOS s2 x", "LPUSH l a", "BITPOS l 1",
            "BITPOS l 3", "SET full xxxx", "BITFIELD full SET u8 0 255", "BITPOS full 0 0 -1", "BITPOS full 0 0", "BITPOS full 1 3 2 BIT",
            "BITPOS full 0 -5 -1 BIT", "BITPOS full 1 -1000 -900 BIT", "BITPOS full 0 8 31 BIT", "BITPOS full 1 9 13 BIT",
        ],
        ["bitop"] =
        [
            "SET a abc", "SET b foobar", "BITOP AND d a b", "GET d", "BITOP OR d a b", "GET d", "BITOP XOR d a b", "GET d",
            "BITOP NOT d a", "GET d", "BITOP and d a b nokey", "GET d", "BITOP or d nokey b", "GET d", "BITOP NOT d a b",
            "BITOP NOT d nokey", "EXISTS d", "BITOP AND d nokey nokey2", "EXISTS d", "BITOP foo d a", "BITOP and", "LPUSH l x",
            "BITOP AND d a l", "BITOP OR l a", "TYPE l", "GET l", "SET c 0123456789abcdefghijklmnopqrstuvwxyz0123456789",
            "SET e zyxwvutsrqponmlkjihgfedcba9876543210abcdefghij", "BITOP AND d c e", "GET d", "BITOP OR d c e a", "GET d",
            "BITOP XOR d c e b", "GET d", "BITOP NOT d c", "GET d", "BITOP XOR a a a", "GET a", "SET t x", "EXPIRE t 100",
            "BITOP OR t b", "TTL t",
        ],
        ["bitfield"] =
        [
            "BITFIELD nokey GET i8 0 SET u8 0 255 GET u8 0", "BITFIELD nokey", "BITFIELD k GET u4 0", "EXISTS k",
            "BITFIELD k SET i8 0 -100 GET i8 0 GET u8 0", "BITFIELD k INCRBY u2 100 1 OVERFLOW SAT INCRBY u2 102 1",
            "BITFIELD k OVERFLOW WRAP INCRBY u8 0 300 INCRBY i8 0 200 OVERFLOW SAT INCRBY i8 0 200 INCRBY u8 8 -5",
            "BITFIELD k OVERFLOW FAIL INCRBY i8 0 1000 GET i8 0 SET u3 0 9 SET u3 0 7",
            "BITFIELD k SET i64 0 -1 GET u63 0 GET i64 0 INCRBY i64 0 1 INCRBY i64 0 -9223372036854775808",
            "BITFIELD k OVERFLOW SAT INCRBY i64 0 9223372036854775807 INCRBY i64 0 1 INCRBY i64 0 -9223372036854775808",
            "BITFIELD k OVERFLOW WRAP INCRBY i64 64 9223372036854775807 INCRBY i64 64 1 SET u63 128 9223372036854775807 INCRBY u63 128 1",
            "BITFIELD k OVERFLOW SAT INCRBY u63 128 5 OVERFLOW FAIL INCRBY u63 128 1 INCRBY u1 0 1 INCRBY u1 0 -1",
            "BITFIELD k GET u8 #1 SET u8 #2 65 GET u8 16 GET i4 #3", "BITFIELD k GET i5 #-1", "BITFIELD k GET u64 0",
            "BITFIELD k GET i65 0", "BITFIELD k GET i0 0", "BITFIELD k GET x8 0", "BITFIELD k GET u8 -1", "BITFIELD k GET u8 x",
            "BITFIELD k SET i8 0 x", "BITFIELD k GET", "BITFIELD k foo", "BITFIELD k SET u8 0", "BITFIELD k OVERFLOW",
            "BITFIELD k OVERFLOW foo", "BITFIELD k INCRBY u2 100 1 OVERFLOW SAT INCRBY u2 102 1 OVERFLOW foo",
            "BITFIELD k SET u8 4294967296 1", "BITFIELD k SET u1 4294967296 1", "BITFIELD k GET u8 4294967288", "BITFIELD k GET u8 4294967289", "BITFIELD k GET i8 #536870911", "BITFIELD k GET i8 #536870912",
            "BITFIELD_RO k GET i8 0 GET u16 4", "BITFIELD_RO k SET i8 0 1", "BITFIELD_RO k GET i8 0 OVERFLOW SAT",
            "BITFIELD_RO k INCRBY i8 0 1", "BITFIELD_RO nokey GET u8 0", "BITFIELD_RO k", "LPUSH l a", "BITFIELD l GET i8 0",
            "BITFIELD l SET i8 0 1", "BITFIELD_RO l GET i8 0", "BITFIELD f SET u8 0 0", "GET f", "BITFIELD f2 OVERFLOW FAIL SET u2 0 9",
            "EXISTS f2", "GET f2", "BITFIELD k SET i3 5 3 GET i3 5 SET i3 5 4 GET i3 5 SET u1 1 5 GET k 0", "GET k",
        ],
    };
}
