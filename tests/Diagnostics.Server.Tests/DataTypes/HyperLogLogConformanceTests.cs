using System.Buffers.Binary;
using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// The HyperLogLog commands (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST) sent to this server and
/// to the real redis-server 7.0.15 side by side in RESP2 and RESP3, every reply compared, errors
/// and their order included, and every value compared byte for byte with GET: the sparse edits,
/// the cache PFCOUNT writes, promotion to dense (by hll-sparse-max-bytes, by PFMERGE with a dense
/// input, by PFDEBUG), union counts, hand-made and corrupt values set with SET (Debian's 7.0.15
/// carries the CVE-2025-32023 checks: any sparse run past 16384 registers is corrupt).
/// <para>
/// Script lines are split on spaces, with tokens for what a line cannot spell:
/// <c>@prefix:count</c> (or <c>@prefix:start:count</c>) expands to prefix0, prefix1...;
/// <c>hex:..</c> is raw bytes; <c>sparse:..</c> a sparse value with a stale cache and those
/// opcodes (hex); <c>dense:n</c> a dense value with every register n and a stale cache;
/// <c>cached:n:card</c> the same with a valid cached cardinality. A line starting <c>GET </c> is
/// compared as raw bytes (the test client reads bulk strings as text).
/// </para>
/// </summary>
public sealed class HyperLogLogConformanceTests
{
    public static IEnumerable<object[]> Scripts => Conformance.Keys.Select(name => new object[] { name });

    [Theory]
    [MemberData(nameof(Scripts))]
    public void RepliesAndBytesMatchRedis(string script) => AssertSame(Conformance[script]);

    private static readonly Dictionary<string, string[]> Conformance = new()
    {
        // PFADD's replies and bytes from the empty value up to promotion, with PFCOUNT (which
        // writes the cache once, then answers from it) in between.
        ["pfadd-pfcount"] =
        [
            "PFADD k", "GET k", "PFADD k", "PFCOUNT k", "GET k", "PFCOUNT k", "PFADD k a", "GET k", "PFADD k a", "GET k",
            "PFCOUNT k", "GET k", "PFADD k b c d e f g", "GET k", "PFADD k b c", "PFCOUNT k", "GET k",
            "PFADD k @e:100", "GET k", "PFCOUNT k", "GET k", "PFDEBUG ENCODING k", "PFADD k @e:100:400", "GET k",
            "PFCOUNT k", "PFDEBUG ENCODING k", "PFADD k @e:500:1000", "GET k", "PFDEBUG ENCODING k", "PFCOUNT k", "GET k",
            "PFADD k @e:1500:2000", "PFDEBUG ENCODING k", "GET k", "PFCOUNT k", "GET k", "PFADD k @e:0:3500", "PFADD k @f:20000",
            "PFCOUNT k", "GET k", "PFADD new x", "GET new", "PFCOUNT new", "PFCOUNT nokey", "EXISTS nokey", "STRLEN k", "TYPE k",
            "PFADD bin hex:00 hex:ff00ff hex:0d0a", "GET bin", "PFCOUNT bin", "PFADD ttl a", "EXPIRE ttl 1000", "PFADD ttl @t:3000",
            "PFDEBUG ENCODING ttl", "TTL ttl", "PFCOUNT ttl", "TTL ttl",
        ],
        // hll-sparse-max-bytes: a lower ceiling promotes sooner, 0 at the first register, a huge
        // one keeps the value sparse; the setting itself as CONFIG reports and checks it.
        ["sparse-max-bytes"] =
        [
            "CONFIG GET hll-sparse-max-bytes", "CONFIG SET hll-sparse-max-bytes 200", "PFADD a @e:40", "GET a", "PFDEBUG ENCODING a",
            "PFADD a @e:40:20", "GET a", "PFDEBUG ENCODING a", "PFADD b @e:200", "GET b", "PFDEBUG ENCODING b",
            "CONFIG SET hll-sparse-max-bytes 0", "PFADD z", "GET z", "PFDEBUG ENCODING z", "PFADD z a", "PFDEBUG ENCODING z", "GET z",
            "CONFIG SET hll-sparse-max-bytes 9223372036854775807", "PFADD h @e:20000", "PFDEBUG ENCODING h", "GET h", "PFCOUNT h",
            "PFMERGE hm h", "PFDEBUG ENCODING hm", "GET hm", "CONFIG SET hll-sparse-max-bytes 1k", "CONFIG GET hll-sparse-max-bytes",
            "PFADD c @e:300", "GET c", "CONFIG SET hll-sparse-max-bytes -1", "CONFIG SET hll-sparse-max-bytes x",
            "CONFIG GET hll-sparse-max-bytes", "CONFIG SET hll-sparse-max-bytes 3000",
        ],
        // Union counts (missing keys count as empty) and PFMERGE into new, existing, sparse and
        // dense destinations, the destination among the sources, a TTL kept.
        ["union-and-merge"] =
        [
            "PFADD a @e:100", "PFADD b @e:50:200", "PFADD big @e:5000", "PFCOUNT a b", "PFCOUNT a b nokey", "PFCOUNT nokey nokey2",
            "PFCOUNT a a", "PFCOUNT a big", "PFCOUNT big a b", "GET a", "PFMERGE ab a b", "GET ab", "PFCOUNT ab", "GET ab",
            "PFMERGE ad a big", "PFDEBUG ENCODING ad", "GET ad", "PFCOUNT ad", "PFMERGE a b", "GET a", "PFCOUNT a",
            "PFMERGE only", "GET only", "EXISTS only", "PFMERGE only nokey", "GET only", "PFMERGE b", "GET b", "PFCOUNT b",
            "PFADD x @x:1000", "PFADD y @y:1000", "PFMERGE xy x y", "PFDEBUG ENCODING xy", "GET xy", "PFCOUNT xy", "PFCOUNT x y",
            "PFMERGE big x", "GET big", "PFCOUNT big", "PFADD t a", "EXPIRE t 1000", "PFMERGE t big", "TTL t", "GET t",
            "SET dense dense:5", "PFMERGE sp dense a", "GET sp", "PFCOUNT dense a", "PFCOUNT sp",
            "SET high dense:40", "PFADD s a", "PFMERGE s high", "PFDEBUG ENCODING s", "GET s", "PFCOUNT s",
        ],
        // Values set by hand: Redis's checks of the header (WRONGTYPE's own text), corrupt sparse
        // forms (INVALIDOBJ) through each command, the cached cardinality answered as stored, and
        // the other types.
        ["hand-made-and-corrupt"] =
        [
            "SET c sparse:7fff", "PFCOUNT c", "GET c", "SET c sparse:", "PFCOUNT c", "PFCOUNT c nokey", "PFADD c x", "PFMERGE d c",
            "PFDEBUG TODENSE c", "PFDEBUG GETREG c", "PFDEBUG DECODE c", "PFDEBUG ENCODING c", "EXISTS d",
            "SET c sparse:7fff00", "PFCOUNT c", "PFCOUNT nokey c", "PFADD c x y z", "GET c", "PFDEBUG DECODE c", "PFDEBUG TODENSE c",
            "SET c sparse:7ffe", "PFCOUNT c", "PFADD c x y z", "GET c", "PFMERGE c", "SET c sparse:7fff80", "PFCOUNT c",
            "PFADD c x y z", "GET c", "PFDEBUG DECODE c", "SET c sparse:7ffd83", "PFCOUNT c", "PFADD c x y z", "GET c",
            "SET c sparse:41fe7e", "PFCOUNT c", "PFADD c x y z", "GET c", "PFDEBUG DECODE c", "SET c sparse:7f", "PFCOUNT c",
            "PFADD c x y z", "GET c", "PFDEBUG DECODE c", "SET c sparse:8000", "PFCOUNT c", "PFADD c a", "GET c",
            "SET c sparse:bf7ffb", "PFCOUNT c", "PFADD c x", "GET c", "PFDEBUG DECODE c",
            "SET c dense:51", "PFCOUNT c", "GET c", "PFCOUNT c nokey", "SET c dense:63", "PFCOUNT c", "PFCOUNT c nokey",
            "SET c dense:40", "PFCOUNT c", "GET c", "SET c cached:63:12345", "PFCOUNT c", "GET c", "PFADD c x", "PFCOUNT c",
            "SET c cached:0:77", "PFCOUNT c", "PFADD c x", "PFCOUNT c", "GET c",
            "SET c HYLL", "PFADD c a", "PFCOUNT c", "PFCOUNT nokey c", "PFMERGE c", "PFMERGE d c", "PFDEBUG ENCODING c",
            "SET c hex:48594c4c020000000000000000000000", "PFADD c a", "PFCOUNT c", "SET c hex:48594c4c000000000000000000000000",
            "PFADD c a", "PFCOUNT c", "PFDEBUG GETREG c", "SET c hex:48594c58010000000000000000000080", "PFADD c a",
            "SET c hex:48594c4c0100000000000000000080", "PFADD c a", "SET c 1234567890123456789", "PFADD c a", "PFCOUNT c",
            "SET c sparse:7fff", "APPEND c x", "PFCOUNT c", "SET c sparse:7fff", "SETRANGE c 4 hex:00", "PFCOUNT c",
            "LPUSH l x", "PFADD l a", "PFCOUNT l", "PFCOUNT a l", "PFMERGE l", "PFMERGE d l", "PFDEBUG ENCODING l",
            "HSET h f v", "PFADD h a", "SADD s m", "PFCOUNT s", "ZADD z 1 m", "PFMERGE z", "PFADD ok a", "PFCOUNT ok s",
            "PFMERGE ok s", "GET ok", "PFCOUNT ok nokey c",
        ],
        // PFDEBUG: every subcommand, its checks in Redis's order (the key first, then its type,
        // then the subcommand), and PFSELFTEST.
        ["pfdebug-and-selftest"] =
        [
            "PFADD k a b c", "PFDEBUG DECODE k", "PFDEBUG ENCODING k", "PFDEBUG GETREG k", "PFDEBUG ENCODING k", "GET k",
            "PFDEBUG DECODE k", "PFDEBUG TODENSE k", "PFADD k2 @e:50", "PFDEBUG decode k2", "PFDEBUG todense k2", "PFDEBUG todense k2",
            "GET k2", "PFDEBUG Encoding k2", "PFDEBUG GETREG k2", "PFADD k3", "PFDEBUG DECODE k3", "PFDEBUG GETREG k3",
            "PFDEBUG foo k", "PFDEBUG foo nokey", "PFDEBUG GETREG nokey", "SET s hello", "PFDEBUG foo s", "PFDEBUG ENCODING s",
            "LPUSH l x", "PFDEBUG foo l", "PFDEBUG GETREG l", "PFDEBUG", "PFDEBUG GETREG", "PFDEBUG GETREG k extra",
            "SET e sparse:", "PFDEBUG DECODE e", "PFDEBUG ENCODING e", "SET x sparse:7fff00", "PFDEBUG DECODE x",
            "PFDEBUG hex:0d0a k", "PFSELFTEST", "PFSELFTEST x", "PFADD", "PFCOUNT", "PFMERGE",
        ],
        // The cache write of PFCOUNT changes the key as Redis sees it (a WATCH fails); PFDEBUG's
        // conversion does not (Redis does not signal it); a PFADD that changed nothing does not.
        ["watch"] =
        [
            "PFADD w x y", "WATCH w", "PFCOUNT w", "MULTI", "GET w", "EXEC", "WATCH w", "PFCOUNT w", "MULTI", "GET w", "EXEC",
            "WATCH w", "PFADD w x", "MULTI", "GET w", "EXEC", "WATCH w", "PFDEBUG TODENSE w", "MULTI", "GET w", "EXEC",
            "WATCH w", "PFDEBUG GETREG w", "MULTI", "PFCOUNT w", "EXEC", "PFADD v a", "WATCH v", "PFDEBUG GETREG v", "MULTI",
            "PFDEBUG ENCODING v", "EXEC", "WATCH w", "PFMERGE w", "MULTI", "GET w", "EXEC", "WATCH w", "PFMERGE other w", "MULTI",
            "GET w", "EXEC", "WATCH w", "PFADD w zz", "MULTI", "GET w", "EXEC", "MULTI", "PFADD m a", "PFCOUNT m", "PFMERGE n m",
            "GET n", "EXEC",
        ],
    };

    private static void AssertSame(string[] script)
    {
        var commands = script.Select(Parse).ToArray();
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        foreach (int protocol in (int[])[2, 3])
        {
            using var a = ours.Connect();
            using var b = redis.Connect();
            foreach (var c in new[] { a, b })
            {
                if (protocol == 3)
                    Assert.Equal('%', c.Call("HELLO", "3").Kind);
                RespAssert.Ok(c.Call("FLUSHALL"));
                RespAssert.Ok(c.Call("CONFIG", "SET", "hll-sparse-max-bytes", "3000"));
            }
            for (int i = 0; i < commands.Length; i++)
            {
                bool raw = script[i].StartsWith("GET ", StringComparison.Ordinal);
                string mine = raw ? RawValue(a, script[i][4..]) : a.Call(commands[i]).ToString();
                string theirs = raw ? RawValue(b, script[i][4..]) : b.Call(commands[i]).ToString();
                Assert.True(mine == theirs, $"RESP{protocol} {script[i]}\n  redis: {Cut(theirs)}\n  ours:  {Cut(mine)}");
            }
        }
    }

    /// <summary>GET's bulk string as hex, byte for byte; "(not a bulk string)" for anything else.</summary>
    private static string RawValue(RespClient client, string key)
    {
        try
        {
            return Convert.ToHexString(client.CallForBytes("GET", key));
        }
        catch (Exception ex) when (ex is InvalidDataException or OverflowException)
        {
            return "(not a bulk string)";
        }
    }

    private static string Cut(string text) => text.Length <= 2000 ? text : text[..2000] + "...";

    private static byte[][] Parse(string line)
    {
        var args = new List<byte[]>();
        foreach (string token in line.Split(' '))
        {
            if (token.StartsWith('@'))
            {
                string[] parts = token[1..].Split(':');
                int start = parts.Length == 3 ? int.Parse(parts[1]) : 0;
                int count = int.Parse(parts[^1]);
                for (int i = start; i < start + count; i++)
                    args.Add(Encoding.ASCII.GetBytes(parts[0] + i));
            }
            else if (token.StartsWith("hex:", StringComparison.Ordinal))
                args.Add(Convert.FromHexString(token[4..]));
            else if (token.StartsWith("sparse:", StringComparison.Ordinal))
                args.Add([.. Convert.FromHexString("48594c4c010000000000000000000080"), .. Convert.FromHexString(token[7..])]);
            else if (token.StartsWith("dense:", StringComparison.Ordinal))
                args.Add(Dense(int.Parse(token[6..]), cached: null));
            else if (token.StartsWith("cached:", StringComparison.Ordinal))
            {
                string[] parts = token[7..].Split(':');
                args.Add(Dense(int.Parse(parts[0]), cached: long.Parse(parts[1])));
            }
            else
                args.Add(Encoding.UTF8.GetBytes(token));
        }
        return [.. args];
    }

    /// <summary>A dense HyperLogLog with every register at <paramref name="register"/>; its cache stale, or valid holding <paramref name="cached"/>.</summary>
    internal static byte[] Dense(int register, long? cached)
    {
        var value = new byte[16 + 12288];
        "HYLL"u8.CopyTo(value);
        if (cached is { } card)
            BinaryPrimitives.WriteInt64LittleEndian(value.AsSpan(8), card);
        else
            value[15] = 0x80;
        // Four 6-bit registers in every three bytes, packed from the low bit up.
        int packed = register | register << 6 | register << 12 | register << 18;
        for (int at = 16; at < value.Length; at += 3)
        {
            value[at] = (byte)packed;
            value[at + 1] = (byte)(packed >> 8);
            value[at + 2] = (byte)(packed >> 16);
        }
        return value;
    }
}
