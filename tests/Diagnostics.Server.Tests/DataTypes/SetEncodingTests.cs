using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Sets in each form this server holds them (intset, listpack, hash table), as Redis 7.2 holds
/// them. Every set command runs on every form side by side with Debian's redis-server 7.0 in
/// RESP2 and RESP3. Redis 7.0 has intsets and hash tables but no listpack sets, so a set of
/// strings is a hash table there: replies whose order is then Redis's hash order are compared
/// unordered, and where 7.2 answers differently from 7.0 (OBJECT ENCODING "listpack", the
/// set-max-listpack-* settings, SADD converting up front) the test states the 7.2 answer.
/// </summary>
public sealed class SetEncodingTests
{
    /// <summary>
    /// The seed of each form, under keys "{f}a" (small), "{f}b" (overlapping with it): the hash
    /// table ones have more members than a listpack (128) or an intset (512) may hold.
    /// </summary>
    private static string[][] Seed(string form) => form switch
    {
        "intset" => [["SADD", "{f}a", "3", "1", "2", "-5", "70000", "9223372036854775807", "-9223372036854775808"], ["SADD", "{f}b", "2", "3", "4", "100"]],
        "listpack" => [["SADD", "{f}a", "a", "b", "c", "1", "2", "-7", "long-member-here"], ["SADD", "{f}b", "b", "c", "d", "2", "x"]],
        _ => [["SADD", "{f}a", .. Enumerable.Range(0, 200).Select(i => i % 3 == 0 ? i.ToString(CultureInfo.InvariantCulture) : "m" + i)], ["SADD", "{f}b", .. Enumerable.Range(100, 700).Select(i => i.ToString(CultureInfo.InvariantCulture))]],
    };

    public static IEnumerable<object[]> Forms => [["intset"], ["listpack"], ["hashtable"]];

    // Line prefixes: "~" compares the reply's items unordered (Redis's hash order, or a listpack's
    // order against 7.0's hash table), "%" a SCAN reply with its items unordered, "#" only the
    // reply's kind and length (random picks), "=" the reply as it is.
    private static readonly string[] Script =
    [
        "=SCARD {f}a", "=SCARD {f}b", "~SMEMBERS {f}a", "=SISMEMBER {f}a 1", "=SISMEMBER {f}a a", "=SISMEMBER {f}a 01",
        "=SISMEMBER {f}a 9223372036854775808", "=SMISMEMBER {f}a 1 2 a zz -5 m1 100", "=SMISMEMBER nokey 1 a",
        "~SINTER {f}a {f}b", "=SINTERCARD 2 {f}a {f}b", "=SINTERCARD 2 {f}a {f}b LIMIT 1", "~SUNION {f}a {f}b", "~SDIFF {f}a {f}b", "~SDIFF {f}b {f}a",
        "~SINTER {f}a {f}a", "=SDIFF {f}a {f}a", "~SDIFF {f}a nokey {f}b", "=SINTER {f}a nokey",
        "=SINTERSTORE {f}i {f}a {f}b", "~SMEMBERS {f}i", "=SUNIONSTORE {f}u {f}a {f}b", "~SMEMBERS {f}u",
        "=SDIFFSTORE {f}d {f}a {f}b", "~SMEMBERS {f}d", "=SINTERSTORE {f}i {f}a nokey", "=EXISTS {f}i",
        "%SSCAN {f}a 0 COUNT 1000", "%SSCAN {f}a 0 MATCH *1* COUNT 1000", "=SSCAN nokey 0",
        "#SRANDMEMBER {f}a", "#SRANDMEMBER {f}a 3", "#SRANDMEMBER {f}a -20", "~SRANDMEMBER {f}a 1000", "=SRANDMEMBER {f}a 0",
        "=SADD {f}a 1 a 2", "=SREM {f}a 1 a zz 2", "=SISMEMBER {f}a 1", "=SCARD {f}a",
        "=SMOVE {f}a {f}b 3", "=SMOVE {f}a {f}b 3", "=SMOVE {f}a {f}new b", "=SMOVE {f}a {f}new c", "~SMEMBERS {f}new",
        "=SMOVE {f}a {f}a -5", "=SMOVE {f}a {f}new2 -5", "=SMEMBERS {f}new2",
        "=SADD {f}a 3", "=SADD {f}a ddd", "=SCARD {f}a", "=SREM {f}a ddd",
        "#SPOP {f}a", "=SCARD {f}a", "#SPOP {f}a 2", "=SCARD {f}a", "=SPOP {f}a 0", "=SPOP nokey", "=SPOP nokey 3",
        "~SPOP {f}b 100000", "=EXISTS {f}b", "=SREM {f}a 4",
        "=SORT {f}d ALPHA LIMIT 0 5", "=SORT {f}i ALPHA", "=COPY {f}u {f}copy", "~SMEMBERS {f}copy",
        "=EVAL \"return redis.call('scard', KEYS[1])\" 1 {f}u", "=EVAL \"return redis.call('sort', KEYS[1], 'alpha')\" 1 {f}u",
        "=SET {f}str v", "=SADD {f}str 1", "=SINTER {f}u {f}str", "=SMOVE {f}u {f}str 2",
    ];

    [Theory]
    [MemberData(nameof(Forms))]
    public void EveryCommandMatchesRedis(string form)
    {
        var commands = new List<string[]>(Seed(form));
        var marks = new List<char>(commands.Select(_ => '='));
        foreach (string line in Script)
        {
            marks.Add(line[0]);
            commands.Add(Split(line[1..].Replace("{f}", form + ":", StringComparison.Ordinal)));
        }
        for (int i = 0; i < commands.Count; i++)
            for (int j = 0; j < commands[i].Length; j++)
                commands[i][j] = commands[i][j].Replace("{f}", form + ":", StringComparison.Ordinal);
        SideBySideReplies.AssertSame(commands, c => RespAssert.Ok(c.Call("FLUSHALL")), (i, reply) => Render(reply, marks[i]));
    }

    /// <summary>A line's words, a double-quoted phrase (a script) kept as one argument.</summary>
    private static string[] Split(string line)
    {
        var words = new List<string>();
        for (int i = 0; i < line.Length;)
        {
            if (line[i] == ' ')
            {
                i++;
                continue;
            }
            if (line[i] == '"')
            {
                int close = line.IndexOf('"', i + 1);
                words.Add(line[(i + 1)..close]);
                i = close + 1;
                continue;
            }
            int end = line.IndexOf(' ', i);
            if (end < 0)
                end = line.Length;
            words.Add(line[i..end]);
            i = end;
        }
        return [.. words];
    }

    private static string Render(RespValue reply, char mark) => mark switch
    {
        '~' => DataTypeConformanceTests.Render(reply, unordered: true),
        '%' when reply.Items is { Count: 2 } scan => $"{scan[0]} {DataTypeConformanceTests.Render(scan[1], unordered: true)}",
        '#' => reply.Items is null ? (reply.IsNull ? "null" : reply.Kind.ToString()) : $"{reply.Kind}{reply.Items.Count}",
        _ => reply.ToString(),
    };

    /// <summary>SMEMBERS of an intset is ascending in both servers, and SSCAN of one answers everything with cursor 0.</summary>
    [Fact]
    public void IntsetOrderAndScanMatchRedisExactly()
    {
        string[][] commands =
        [
            ["SADD", "s", "5", "-1", "300", "2", "-40000", "7"], ["SMEMBERS", "s"], ["SSCAN", "s", "0"], ["SSCAN", "s", "17", "COUNT", "1"],
            ["SSCAN", "s", "0", "MATCH", "-*"], ["SUNION", "s", "nokey"], ["SINTER", "s", "s"], ["SRANDMEMBER", "s", "100"],
            ["SDIFF", "s", "nokey"], ["SPOP", "s", "100"], ["OBJECT", "ENCODING", "s"],
        ];
        SideBySideReplies.AssertSame(commands, c => RespAssert.Ok(c.Call("FLUSHALL")));
    }

    /// <summary>A small set of strings in this server: SSCAN gives all of it at once with cursor 0, SMEMBERS in insertion order, as Redis 7.2's listpack.</summary>
    [Fact]
    public void ListpackKeepsInsertionOrderAndScansInOneReply()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Integer(5, c.Call("SADD", "s", "zeta", "alpha", "10", "mid", "-3"));
        Assert.Equal("*[$zeta, $alpha, $10, $mid, $-3]", c.Call("SMEMBERS", "s").ToString());
        Assert.Equal("*[$0, *[$zeta, $alpha, $10, $mid, $-3]]", c.Call("SSCAN", "s", "99", "COUNT", "1").ToString());
        Assert.Equal("*[$0, *[$alpha]]", c.Call("SSCAN", "s", "0", "MATCH", "a*").ToString());
        RespAssert.Integer(1, c.Call("SREM", "s", "alpha"));
        Assert.Equal("*[$zeta, $10, $mid, $-3]", c.Call("SMEMBERS", "s").ToString());
        Assert.Equal("listpack", c.Call("OBJECT", "ENCODING", "s").Text);
        // A union grows from an intset as Redis 7.2's does: integers first (ascending), then the rest in order.
        RespAssert.Integer(3, c.Call("SADD", "t", "9", "b", "4"));
        Assert.Equal("*[$9, $b, $4]", c.Call("SMEMBERS", "t").ToString());
        Assert.Equal("*[$9, $b, $4]", c.Call("SUNION", "t").ToString());
        RespAssert.Integer(3, c.Call("SADD", "u", "9", "4", "b"));
        Assert.Equal("*[$4, $9, $b]", c.Call("SUNION", "u").ToString());
    }

    private static string Encoding(RespClient c, string key) => c.Call("OBJECT", "ENCODING", key).Text!;

    /// <summary>
    /// The intset limit, side by side (both servers convert at set-max-intset-entries, and on the
    /// first member that is not an integer once 7.0 has no listpack to go to).
    /// </summary>
    [Fact]
    public void IntsetLimitMatchesRedis()
    {
        string[][] commands =
        [
            ["CONFIG", "SET", "set-max-intset-entries", "4"], ["SADD", "a", "1", "2", "3", "4"], ["OBJECT", "ENCODING", "a"],
            ["SADD", "a", "4"], ["OBJECT", "ENCODING", "a"], ["SADD", "a", "5"], ["OBJECT", "ENCODING", "a"],
            ["SREM", "a", "1", "2", "3", "4"], ["OBJECT", "ENCODING", "a"], ["SADD", "b", "1", "2", "3", "4"], ["SADD", "b", "5"], ["OBJECT", "ENCODING", "b"],
            ["SADD", "g", "-9223372036854775808", "9223372036854775807"], ["OBJECT", "ENCODING", "g"],
            ["SINTERSTORE", "h", "g", "g"], ["OBJECT", "ENCODING", "h"], ["SUNIONSTORE", "h", "a", "g"], ["OBJECT", "ENCODING", "h"],
            ["SMOVE", "g", "i", "7"], ["SMOVE", "g", "i", "9223372036854775807"], ["OBJECT", "ENCODING", "i"],
            ["CONFIG", "SET", "set-max-intset-entries", "512"],
        ];
        SideBySideReplies.AssertSame(commands, c => RespAssert.Ok(c.Call("FLUSHALL")));
    }

    /// <summary>Redis 7.2's answers where 7.0 has no listpack sets: each conversion at its limit, never back.</summary>
    [Fact]
    public void ListpackLimitsConvertAsRedis72()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        // A set of strings: hashtable in 7.0, listpack in 7.2, up to 128 members of up to 64 bytes.
        c.Call(["SADD", "s", .. Enumerable.Range(0, 128).Select(i => "m" + i)]);
        Assert.Equal("listpack", Encoding(c, "s"));
        c.Call("SADD", "s", "m0");
        Assert.Equal("listpack", Encoding(c, "s"));
        c.Call("SADD", "s", "one-more");
        Assert.Equal("hashtable", Encoding(c, "s"));
        c.Call(["SREM", "s", .. Enumerable.Range(0, 128).Select(i => "m" + i)]);
        Assert.Equal("hashtable", Encoding(c, "s")); // never back while running

        c.Call("SADD", "v", new string('x', 64));
        Assert.Equal("listpack", Encoding(c, "v"));
        c.Call("SADD", "v", new string('y', 65));
        Assert.Equal("hashtable", Encoding(c, "v"));
        c.Call("SADD", "w", new string('y', 65));
        Assert.Equal("hashtable", Encoding(c, "w"));

        // An intset meeting a string: a listpack while all of it fits one, else a hash table.
        c.Call(["SADD", "i127", .. Enumerable.Range(0, 127).Select(i => i.ToString(CultureInfo.InvariantCulture))]);
        c.Call("SADD", "i127", "x");
        Assert.Equal("listpack", Encoding(c, "i127"));
        RespAssert.Integer(128, c.Call("SCARD", "i127"));
        c.Call(["SADD", "i128", .. Enumerable.Range(0, 128).Select(i => i.ToString(CultureInfo.InvariantCulture))]);
        Assert.Equal("intset", Encoding(c, "i128"));
        c.Call("SADD", "i128", "x");
        Assert.Equal("hashtable", Encoding(c, "i128"));
        // Text that is not a canonical 64-bit integer is a string (string2ll): these are listpacks in 7.2, hash tables in 7.0.
        foreach (string notInteger in new[] { "18446744073709551616", "01", "-0", " 1", "+1", "1.0" })
        {
            c.Call("SADD", "n" + notInteger, notInteger);
            Assert.Equal("listpack", Encoding(c, "n" + notInteger));
        }
        c.Call("SADD", "c", "1");
        c.Call("SADD", "c", "18446744073709551616");
        Assert.Equal("listpack", Encoding(c, "c"));
        c.Call("SADD", "ilong", "1");
        c.Call("SADD", "ilong", new string('z', 65));
        Assert.Equal("hashtable", Encoding(c, "ilong"));

        // SADD sizes the set by its argument count first (setTypeCreate, setTypeMaybeConvert):
        // 7.0 would keep these an intset, and make "five" (an intset past 4) a hash table.
        RespAssert.Ok(c.Call("CONFIG", "SET", "set-max-intset-entries", "4"));
        c.Call("SADD", "five", "1", "2", "3", "4", "5");
        Assert.Equal("listpack", Encoding(c, "five"));
        c.Call("SADD", "four", "1", "2");
        c.Call("SADD", "four", "1", "2", "1", "2", "1");
        Assert.Equal("hashtable", Encoding(c, "four"));
        RespAssert.Ok(c.Call("CONFIG", "SET", "set-max-intset-entries", "512"));
        c.Call(["SADD", "many", .. Enumerable.Range(0, 129).Select(i => "s" + (i % 2))]);
        Assert.Equal("hashtable", Encoding(c, "many"));
        RespAssert.Integer(2, c.Call("SCARD", "many"));
        c.Call(["SADD", "ints", .. Enumerable.Range(0, 513).Select(i => (i % 3).ToString(CultureInfo.InvariantCulture))]);
        Assert.Equal("hashtable", Encoding(c, "ints"));
        c.Call("SADD", "grow", "1", "2");
        c.Call(["SADD", "grow", .. Enumerable.Repeat("1", 513)]);
        Assert.Equal("hashtable", Encoding(c, "grow"));
        c.Call("SADD", "grow2", "a");
        c.Call(["SADD", "grow2", .. Enumerable.Repeat("a", 129)]);
        Assert.Equal("hashtable", Encoding(c, "grow2"));

        // The settings are real: set-max-listpack-value is a memory setting, entries 0 turns listpacks off.
        RespAssert.Ok(c.Call("CONFIG", "SET", "set-max-listpack-value", "3", "set-max-listpack-entries", "2"));
        Assert.Equal("*[$set-max-listpack-entries, $2, $set-max-listpack-value, $3]", c.Call("CONFIG", "GET", "set-max-listpack-*").ToString().Replace("%", "*", StringComparison.Ordinal));
        c.Call("SADD", "t1", "100");
        c.Call("SADD", "t1", "a");
        Assert.Equal("listpack", Encoding(c, "t1"));
        c.Call("SADD", "t1", "b");
        Assert.Equal("hashtable", Encoding(c, "t1"));
        c.Call("SADD", "t2", "1000"); // four digits: its text would not fit a listpack of 3-byte values
        c.Call("SADD", "t2", "a");
        Assert.Equal("hashtable", Encoding(c, "t2"));
        c.Call("SADD", "t3", "-10");
        c.Call("SADD", "t3", "abc");
        Assert.Equal("listpack", Encoding(c, "t3"));
        RespAssert.Ok(c.Call("CONFIG", "SET", "set-max-listpack-entries", "0"));
        c.Call("SADD", "t4", "a");
        Assert.Equal("hashtable", Encoding(c, "t4"));
        c.Call("SADD", "t5", "1");
        Assert.Equal("intset", Encoding(c, "t5"));
        RespAssert.Ok(c.Call("CONFIG", "SET", "set-max-listpack-value", "1kb"));
        Assert.Equal("1024", c.Call("CONFIG", "GET", "set-max-listpack-value").Array[1].Text);
        Assert.True(c.Call("CONFIG", "SET", "set-max-listpack-entries", "-1").IsError);
    }

    /// <summary>The STORE forms create their result in the form Redis 7.2 gives it.</summary>
    [Fact]
    public void StoredResultsTakeRedis72Forms()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        c.Call("SADD", "ints", "1", "2", "3");
        c.Call("SADD", "mixed", "1", "2", "a");
        c.Call(["SADD", "bigints", .. Enumerable.Range(0, 600).Select(i => i.ToString(CultureInfo.InvariantCulture))]);
        c.Call(["SADD", "bigmixed", "a", .. Enumerable.Range(0, 300).Select(i => i.ToString(CultureInfo.InvariantCulture))]);
        Assert.Equal("hashtable", Encoding(c, "bigints"));

        RespAssert.Integer(2, c.Call("SINTERSTORE", "r", "mixed", "ints"));
        Assert.Equal("intset", Encoding(c, "r")); // the smallest input is an intset
        RespAssert.Integer(3, c.Call("SINTERSTORE", "r", "mixed", "bigmixed"));
        Assert.Equal("listpack", Encoding(c, "r"));
        RespAssert.Integer(2, c.Call("SINTERSTORE", "r", "mixed", "bigints"));
        Assert.Equal("intset", Encoding(c, "r")); // a listpack's result of integers only becomes an intset
        RespAssert.Integer(3, c.Call("SINTERSTORE", "r", "bigints", "ints"));
        Assert.Equal("intset", Encoding(c, "r"));
        RespAssert.Integer(300, c.Call("SINTERSTORE", "r", "bigints", "bigmixed"));
        Assert.Equal("intset", Encoding(c, "r")); // from a hash table, integers only: an intset
        RespAssert.Integer(301, c.Call("SINTERSTORE", "r", "bigmixed", "bigmixed"));
        Assert.Equal("hashtable", Encoding(c, "r"));
        RespAssert.Integer(4, c.Call("SUNIONSTORE", "r", "ints", "mixed"));
        Assert.Equal("listpack", Encoding(c, "r"));
        Assert.Equal("*[$1, $2, $3, $a]", c.Call("SMEMBERS", "r").ToString());
        RespAssert.Integer(3, c.Call("SUNIONSTORE", "r", "ints"));
        Assert.Equal("intset", Encoding(c, "r"));
        RespAssert.Integer(600, c.Call("SUNIONSTORE", "r", "bigints"));
        Assert.Equal("hashtable", Encoding(c, "r"));
        RespAssert.Integer(1, c.Call("SDIFFSTORE", "r", "mixed", "ints"));
        Assert.Equal("listpack", Encoding(c, "r"));
        RespAssert.Integer(300, c.Call("SDIFFSTORE", "r", "bigints", "bigmixed", "ints"));
        Assert.Equal("intset", Encoding(c, "r"));
        // A big difference down to a few members: Redis 7.2 tests each member of the first
        // against the others here (the others are larger), so the result never grows big.
        RespAssert.Integer(1, c.Call("SDIFFSTORE", "r", "bigmixed", "bigints"));
        Assert.Equal("listpack", Encoding(c, "r"));
        // The other way (the first is much larger): it is copied whole, then the others removed.
        RespAssert.Integer(597, c.Call("SDIFFSTORE", "r", "bigints", "ints"));
        Assert.Equal("hashtable", Encoding(c, "r"));
        RespAssert.Integer(1, c.Call("SMOVE", "mixed", "fresh", "a"));
        Assert.Equal("listpack", Encoding(c, "fresh"));
        RespAssert.Integer(1, c.Call("SMOVE", "mixed", "fresh2", "1"));
        Assert.Equal("intset", Encoding(c, "fresh2"));
    }

    /// <summary>
    /// DUMP of an intset is redis-server's byte for byte, whatever widths its history went
    /// through (the width never shrinks, in both); payloads restore across both servers, a set of
    /// strings going over as a plain set (type 2) since 7.0 cannot read listpack sets.
    /// </summary>
    [Fact]
    public void DumpOfIntsetIsRedisBytesAndPayloadsCrossOver()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start("--enable-debug-command", "yes");
        using var a = ours.Connect();
        using var b = redis.Connect();
        string[][] build =
        [
            ["SADD", "w16", "1", "-2", "32767", "-32768"],
            ["SADD", "w32", "1", "32768", "-5", "2147483647"],
            ["SADD", "w64", "3", "-9223372036854775808", "2147483648", "0"],
            ["SADD", "shrunk", "1", "2", "5000000000"], ["SREM", "shrunk", "5000000000"],
            ["SADD", "one", "42"],
            ["SADD", "upgrade-negative", "1", "2", "-100000"],
        ];
        foreach (var command in build)
        {
            Assert.Equal(b.Call(command).ToString(), a.Call(command).ToString());
        }
        foreach (string key in new[] { "w16", "w32", "w64", "shrunk", "one", "upgrade-negative" })
        {
            Assert.Equal("intset", Encoding(a, key));
            byte[] mine = a.CallForBytes("DUMP", key);
            byte[] theirs = b.CallForBytes("DUMP", key);
            Assert.True(mine.AsSpan().SequenceEqual(theirs), $"DUMP {key}\n  redis: {Convert.ToHexString(theirs)}\n  ours:  {Convert.ToHexString(mine)}");
        }

        a.Call("SADD", "strings", "a", "b", "1");
        byte[] payload = a.CallForBytes("DUMP", "strings");
        Assert.Equal(2, payload[0]); // RDB_TYPE_SET
        RespAssert.Ok(b.Call([.. new[] { "RESTORE", "strings", "0" }.Select(System.Text.Encoding.UTF8.GetBytes), payload]));
        Assert.Equal("*[$1, $a, $b]", DataTypeConformanceTests.Render(b.Call("SMEMBERS", "strings"), unordered: true).Replace("~", "*", StringComparison.Ordinal));

        // Redis's payloads into this server: forms chosen as Redis 7.2's load chooses them.
        b.Call("SADD", "r-ints", "5", "6");
        b.Call("SADD", "r-strings", "x", "y", "7");
        b.Call(["SADD", "r-many-ints", .. Enumerable.Range(0, 600).Select(i => i.ToString(CultureInfo.InvariantCulture))]);
        b.Call(["SADD", "r-many-strings", .. Enumerable.Range(0, 200).Select(i => "s" + i)]);
        b.Call("SADD", "r-long", new string('q', 65));
        b.Call(["SADD", "r-500-ints", .. Enumerable.Range(0, 500).Select(i => i.ToString(CultureInfo.InvariantCulture))]);
        b.Call("SREM", "r-500-ints", "0");
        b.Call(["SADD", "r-ints-then-string", .. Enumerable.Range(0, 20).Select(i => i.ToString(CultureInfo.InvariantCulture))]);
        b.Call("SADD", "r-ints-then-string", "tail");
        var expected = new Dictionary<string, string>
        {
            ["r-ints"] = "intset", ["r-strings"] = "listpack", ["r-many-ints"] = "hashtable", ["r-many-strings"] = "hashtable",
            ["r-long"] = "hashtable", ["r-500-ints"] = "intset", ["r-ints-then-string"] = "listpack",
        };
        foreach (var (key, encoding) in expected)
        {
            byte[] dumped = b.CallForBytes("DUMP", key);
            RespAssert.Ok(a.Call([.. new[] { "RESTORE", key, "0" }.Select(System.Text.Encoding.UTF8.GetBytes), dumped]));
            Assert.True(encoding == Encoding(a, key), $"RESTORE {key}: {Encoding(a, key)}, Redis 7.2 holds it as {encoding}");
            Assert.Equal(b.Call("DEBUG", "DIGEST-VALUE", key).ToString(), a.Call("DEBUG", "DIGEST-VALUE", key).ToString());
        }
        // An intset payload with a member twice is refused (RESTORE builds strictly, member by member).
        byte[] dup = [11, 12, 2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 1, 0];
        Assert.True(a.Call([.. new[] { "RESTORE", "dup", "0" }.Select(System.Text.Encoding.UTF8.GetBytes), WithTrailer(dup)]).IsError);
    }

    /// <summary>
    /// RDB files both ways: redis-server's dump loads here with each set in the form Redis 7.2's
    /// load gives it; our SAVE passes redis-check-rdb and loads in redis-server with the same
    /// members; DEBUG RELOAD and a restart keep the forms.
    /// </summary>
    [Fact]
    public void RdbFilesCrossLoadWithRedis72Forms()
    {
        using var dir = new TempDirectory();
        var expected = new Dictionary<string, string>
        {
            ["ints"] = "intset", ["strings"] = "listpack", ["many-ints"] = "hashtable", ["many-strings"] = "hashtable",
            ["long"] = "hashtable", ["mixed"] = "listpack", ["wide"] = "intset",
        };
        string[][] build =
        [
            ["SADD", "ints", "5", "-6", "7"], ["SADD", "strings", "x", "y", "7"],
            ["SADD", "many-ints", .. Enumerable.Range(0, 600).Select(i => i.ToString(CultureInfo.InvariantCulture))],
            ["SADD", "many-strings", .. Enumerable.Range(0, 200).Select(i => "s" + i)], ["SADD", "long", "1", new string('q', 65)],
            ["SADD", "mixed", "1", "2", "three"], ["SADD", "wide", "1", "-9223372036854775808"],
        ];
        using (var redis = RealRedisServer.StartIn(dir.Path, "--enable-debug-command", "yes"))
        using (var theirs = redis.Connect())
        {
            foreach (var command in build)
                Assert.False(theirs.Call(command).IsError);
            RespAssert.Ok(theirs.Call("SAVE"));
        }
        var digests = new Dictionary<string, string>();
        using (var server = ServerProcess.Start("--dir", dir.Path))
        using (var c = server.Connect())
        {
            foreach (var (key, encoding) in expected)
            {
                Assert.True(encoding == Encoding(c, key), $"{key} loaded from redis-server's dump as {Encoding(c, key)}, Redis 7.2 gives {encoding}");
                digests[key] = c.Call("DEBUG", "DIGEST-VALUE", key).ToString();
            }
            RespAssert.Ok(c.Call("DEBUG", "RELOAD"));
            foreach (var (key, encoding) in expected)
                Assert.Equal(encoding, Encoding(c, key));
            // Ours, saved, checked and loaded by redis-server.
            RespAssert.Ok(c.Call("SAVE"));
        }
        var check = ExternalTool.Run("redis-check-rdb", "redis-tools", [Path.Combine(dir.Path, "dump.rdb")]);
        Assert.True(check.ExitCode == 0 && check.StandardOutput.Contains("RDB looks OK", StringComparison.Ordinal), check.StandardOutput + check.StandardError);
        using (var redis = RealRedisServer.StartIn(dir.Path, "--enable-debug-command", "yes"))
        using (var theirs = redis.Connect())
        {
            foreach (var key in expected.Keys)
                Assert.True(digests[key] == theirs.Call("DEBUG", "DIGEST-VALUE", key).ToString(), $"{key}: redis-server loading our dump holds other members");
            Assert.Equal("intset", theirs.Call("OBJECT", "ENCODING", "ints").Text);
        }
    }

    /// <summary>A DUMP payload around <paramref name="body"/>: RDB version 10 and the CRC-64, little-endian.</summary>
    private static byte[] WithTrailer(byte[] body)
    {
        byte[] payload = [.. body, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        ulong crc = Persistence.Crc64.Compute(payload.AsSpan(0, payload.Length - 8));
        System.Buffers.Binary.BinaryPrimitives.WriteUInt64LittleEndian(payload.AsSpan(payload.Length - 8), crc);
        return payload;
    }

    /// <summary>DEBUG DIGEST-VALUE, SORT, COPY and scripts read every form as redis-server reads the same members.</summary>
    [Theory]
    [MemberData(nameof(Forms))]
    public void DigestsMatchRedisOnEveryForm(string form)
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start("--enable-debug-command", "yes");
        using var a = ours.Connect();
        using var b = redis.Connect();
        foreach (var seed in Seed(form))
            Assert.Equal(b.Call(seed).ToString(), a.Call(seed).ToString());
        Assert.Equal(form, Encoding(a, "{f}a"));
        foreach (var command in new[]
        {
            new[] { "DEBUG", "DIGEST-VALUE", "{f}a", "{f}b" }, ["COPY", "{f}a", "copy"], ["DEBUG", "DIGEST-VALUE", "copy"],
            ["SUNIONSTORE", "u", "{f}a", "{f}b"], ["DEBUG", "DIGEST-VALUE", "u"], ["SINTERSTORE", "i", "{f}b", "{f}a"], ["DEBUG", "DIGEST-VALUE", "i"],
            ["SORT", "{f}a", "ALPHA"], ["SORT", "{f}b", "ALPHA", "DESC", "LIMIT", "1", "3"], ["SORT", "{f}a", "ALPHA", "STORE", "sorted"], ["LRANGE", "sorted", "0", "-1"],
            ["EVAL", "local m = redis.call('smembers', KEYS[1]); table.sort(m); return m", "1", "{f}a"],
            ["EVAL", "return redis.call('sismember', KEYS[1], ARGV[1])", "1", "{f}a", "3"],
            ["DEBUG", "DIGEST"],
        })
        {
            Assert.Equal(b.Call(command).ToString(), a.Call(command).ToString());
        }
        Assert.Equal(Encoding(a, "{f}a"), Encoding(a, "copy"));
    }

    /// <summary>
    /// MEMORY USAGE of packed sets is exact: over many keys of one form, the sum of their
    /// MEMORY USAGE is the growth of used_memory (the allocator's own total), and DEL gives it back.
    /// </summary>
    [Theory]
    [MemberData(nameof(Forms))]
    public void MemoryUsageIsExact(string form)
    {
        const int Keys = 3000;
        // Nothing else may allocate meanwhile: no slow log entries on a loaded machine.
        using var server = ServerProcess.Start("--slowlog-log-slower-than", "-1", "--latency-monitor-threshold", "0");
        using var observer = server.Connect();
        IEnumerable<string[]> Load() => Enumerable.Range(0, Keys).Select(k => form switch
        {
            "intset" => new[] { "SADD", "k" + k, "1", "2", "3", "4", (k * 7).ToString(CultureInfo.InvariantCulture) },
            "listpack" => new[] { "SADD", "k" + k, "a", "bb", "ccc", "d" + k, "e" },
            _ => ["SADD", "k" + k, .. Enumerable.Range(0, 130).Select(i => "m" + i)],
        });
        // One loader, used twice: the first load and FLUSHALL grow what the server keeps once
        // grown (the connection's buffers, per-shard and per-thread state), so the baseline has
        // it and the second load adds only the keys.
        using var loader = server.Connect();
        Pipeline.RunAll(loader, Load());
        RespAssert.Ok(loader.Call("FLUSHALL"));
        UsedMemory(observer);
        long baseline = UsedMemory(observer);
        Pipeline.RunAll(loader, Load());
        UsedMemory(observer);
        long held = UsedMemory(observer) - baseline;
        var usages = Pipeline.Run(observer, Enumerable.Range(0, Keys).Select(k => new[] { "MEMORY", "USAGE", "k" + k }));
        Assert.Equal(form, Encoding(observer, "k0"));
        long sum = usages.Sum(u => u.Integer);
        // The key table's share is charged to each key evenly (integer division, under a byte a
        // key). Right after the load a shard's key table may still hold its old bucket array
        // (incremental rehashing, finished by the writes and the cron): used_memory then exceeds
        // the keys' sum by those arrays (about 1 KB a shard here) until the cron is done with them.
        Poll.Until(() => Math.Abs(sum - (UsedMemory(observer) - baseline)) <= Keys * 4,
            () => $"{form}: MEMORY USAGE sums to {sum} bytes, used_memory grew by {UsedMemory(observer) - baseline} (first read {held})");
        RespAssert.Ok(observer.Call("FLUSHALL"));
        Poll.Until(() => UsedMemory(observer) - baseline < 64 * 1024, () => $"{form}: used_memory back near {baseline} after FLUSHALL (now {UsedMemory(observer)})");
    }

    private static long UsedMemory(RespClient c)
    {
        foreach (string line in c.Call("INFO", "memory").Text!.Split('\n'))
            if (line.StartsWith("used_memory:", StringComparison.Ordinal))
                return long.Parse(line["used_memory:".Length..].Trim(), CultureInfo.InvariantCulture);
        throw new InvalidOperationException("INFO memory has no used_memory");
    }
}
