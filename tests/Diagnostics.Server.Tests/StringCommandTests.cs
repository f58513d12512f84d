using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The string commands over the wire, with replies and error texts checked against what Redis
/// 7.0 answers for the same requests (expected values below were taken from a real redis-server).
/// </summary>
public sealed class StringCommandTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private const string NotInteger = "ERR value is not an integer or out of range";
    private const string NotFloat = "ERR value is not a valid float";
    private const string Syntax = "ERR syntax error";
    private const string Overflow = "ERR increment or decrement would overflow";

    private static byte[] B(string text) => Encoding.UTF8.GetBytes(text);

    // ---- GET / SET ---------------------------------------------------------------------------

    [Fact]
    public void GetOfMissingKeyIsNull()
    {
        using var c = shared.Connect();
        RespAssert.Null(c.Call("GET", "get-missing:k"));
    }

    [Fact]
    public void SetAndGetAreBinarySafe()
    {
        using var c = shared.Connect();
        string binary = "a\0b\r\nc\r\n\0";
        RespAssert.Ok(c.Call(B("SET"), B("binary:k"), B(binary)));
        RespAssert.Bulk(binary, c.Call("GET", "binary:k"));
        RespAssert.Integer(binary.Length, c.Call("STRLEN", "binary:k"));
        RespAssert.Ok(c.Call("SET", "binary:empty", ""));
        RespAssert.Bulk("", c.Call("GET", "binary:empty"));
        // A key may hold CR LF and NUL too.
        RespAssert.Ok(c.Call(B("SET"), B("binary:\0\r\nkey"), B("v")));
        RespAssert.Bulk("v", c.Call(B("GET"), B("binary:\0\r\nkey")));
        RespAssert.Null(c.Call(B("GET"), B("binary:\0\r\nke")));
    }

    [Fact]
    public void SetOverwritesWithLongerAndShorterValues()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "overwrite:k", "short"));
        string longValue = new('x', 100_000);
        RespAssert.Ok(c.Call("SET", "overwrite:k", longValue));
        RespAssert.Bulk(longValue, c.Call("GET", "overwrite:k"));
        RespAssert.Ok(c.Call("SET", "overwrite:k", "s"));
        RespAssert.Bulk("s", c.Call("GET", "overwrite:k"));
    }

    [Fact]
    public void SetNxAndXxConditions()
    {
        using var c = shared.Connect();
        RespAssert.Null(c.Call("SET", "setcond:k", "v", "XX"));
        RespAssert.Null(c.Call("GET", "setcond:k"));
        RespAssert.Ok(c.Call("SET", "setcond:k", "v1", "NX"));
        RespAssert.Null(c.Call("SET", "setcond:k", "v2", "NX"));
        RespAssert.Bulk("v1", c.Call("GET", "setcond:k"));
        RespAssert.Ok(c.Call("SET", "setcond:k", "v3", "xx"));
        RespAssert.Bulk("v3", c.Call("GET", "setcond:k"));
    }

    [Theory]
    [InlineData("NX", "XX")]
    [InlineData("XX", "NX")]
    [InlineData("KEEPTTL", "EX", "10")]
    [InlineData("EX", "10", "KEEPTTL")]
    [InlineData("EX", "10", "PX", "10")]
    [InlineData("PXAT", "10", "EXAT", "10")]
    [InlineData("EX", "10", "EX", "20", "EXAT", "100")]
    [InlineData("PX")]
    [InlineData("FOO")]
    [InlineData("PERSIST")]
    // The options are all read before the time is checked, so the conflict wins.
    [InlineData("EX", "0", "NX", "XX")]
    public void SetConflictingOrUnknownOptionsAreSyntaxErrors(params string[] options)
    {
        using var c = shared.Connect();
        RespAssert.Error(Syntax, c.Call(["SET", "setsyntax:k", "v", .. options]));
        RespAssert.Null(c.Call("GET", "setsyntax:k"));
    }

    [Fact]
    public void SetAcceptsRepeatedOptionsAndKeepsTheLastTime()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "setrepeat:k", "v", "EX", "10", "EX", "20"));
        RespAssert.Ok(c.Call("SET", "setrepeat:k", "v", "EX", "abc", "EX", "10"));
        RespAssert.Ok(c.Call("SET", "setrepeat:k", "v", "XX", "XX"));
        RespAssert.Null(c.Call("SET", "setrepeat:k", "v", "NX", "NX"));
        RespAssert.Bulk("v", c.Call("SET", "setrepeat:k", "w", "GET", "GET"));
        RespAssert.Bulk("w", c.Call("GET", "setrepeat:k"));
    }

    [Theory]
    [InlineData("EX", "0")]
    [InlineData("EX", "-1")]
    [InlineData("PX", "0")]
    [InlineData("PX", "-100")]
    [InlineData("EXAT", "0")]
    [InlineData("PXAT", "0")]
    [InlineData("EX", "9223372036854775807")]
    [InlineData("PX", "9223372036854775807")]
    [InlineData("EXAT", "9223372036854775807")]
    public void SetRejectsInvalidExpireTimes(string unit, string time)
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR invalid expire time in 'set' command", c.Call("SET", "setbadtime:k", "v", unit, time));
        RespAssert.Null(c.Call("GET", "setbadtime:k"));
    }

    [Fact]
    public void SetRejectsNonIntegerExpireTimes()
    {
        using var c = shared.Connect();
        RespAssert.Error(NotInteger, c.Call("SET", "setnanexpire:k", "v", "EX", "abc"));
        RespAssert.Error(NotInteger, c.Call("SET", "setnanexpire:k", "v", "PX", "1.5"));
        RespAssert.Error(NotInteger, c.Call("SET", "setnanexpire:k", "v", "EX", "9223372036854775808"));
        // The largest PXAT is valid: it is simply far in the future.
        RespAssert.Ok(c.Call("SET", "setnanexpire:k", "v", "PXAT", "9223372036854775807"));
        RespAssert.Bulk("v", c.Call("GET", "setnanexpire:k"));
    }

    [Fact]
    public void SetGetReturnsThePreviousValue()
    {
        using var c = shared.Connect();
        RespAssert.Null(c.Call("SET", "setget:k", "v1", "GET"));
        RespAssert.Bulk("v1", c.Call("SET", "setget:k", "v2", "GET"));
        RespAssert.Bulk("v2", c.Call("GET", "setget:k"));
        // NX GET on an existing key: the old value comes back and nothing is written.
        RespAssert.Bulk("v2", c.Call("SET", "setget:k", "v3", "NX", "GET"));
        RespAssert.Bulk("v2", c.Call("GET", "setget:k"));
        // XX GET on a missing key: null, nothing written.
        RespAssert.Null(c.Call("SET", "setget:missing", "v", "XX", "GET"));
        RespAssert.Null(c.Call("GET", "setget:missing"));
        // NX GET on a missing key: null, and the key is written.
        RespAssert.Null(c.Call("SET", "setget:new", "v", "NX", "GET"));
        RespAssert.Bulk("v", c.Call("GET", "setget:new"));
    }

    [Fact]
    public void SetWithAbsoluteTimeInThePastLeavesNoKey()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "setpast:a", "v", "PXAT", "1"));
        RespAssert.Null(c.Call("GET", "setpast:a"));
        RespAssert.Ok(c.Call("SET", "setpast:b", "v", "EXAT", "100"));
        RespAssert.Null(c.Call("GET", "setpast:b"));
    }

    [Fact]
    public void ExpiryOptionsOfSetFamilyAndWhichWritesKeepTheTtl()
    {
        using var c = shared.Connect();
        const string ttl = "600";
        RespAssert.Ok(c.Call("SET", "ttl:px", "v", "PX", ttl));
        RespAssert.Ok(c.Call("SET", "ttl:keepttl", "v", "PX", ttl));
        RespAssert.Ok(c.Call("SET", "ttl:keepttl", "v2", "KEEPTTL"));
        RespAssert.Ok(c.Call("SET", "ttl:plainset", "v", "PX", ttl));
        RespAssert.Ok(c.Call("SET", "ttl:plainset", "v2"));
        RespAssert.Ok(c.Call("SET", "ttl:pxat", "v", "PXAT", (DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() + 600).ToString()));
        RespAssert.Ok(c.Call("SETEX", "ttl:setex", "1", "v"));
        RespAssert.Ok(c.Call("PSETEX", "ttl:psetex", ttl, "v"));
        RespAssert.Ok(c.Call("SET", "ttl:getset", "v", "PX", ttl));
        RespAssert.Bulk("v", c.Call("GETSET", "ttl:getset", "w"));
        RespAssert.Ok(c.Call("SET", "ttl:mset", "v", "PX", ttl));
        RespAssert.Ok(c.Call("MSET", "ttl:mset", "w"));
        RespAssert.Ok(c.Call("SET", "ttl:setget", "v", "PX", ttl));
        RespAssert.Bulk("v", c.Call("SET", "ttl:setget", "w", "GET"));
        // Modifications in place keep the TTL.
        RespAssert.Ok(c.Call("SET", "ttl:incr", "1", "PX", ttl));
        RespAssert.Integer(2, c.Call("INCR", "ttl:incr"));
        RespAssert.Ok(c.Call("SET", "ttl:incrbyfloat", "1", "PX", ttl));
        RespAssert.Bulk("1.5", c.Call("INCRBYFLOAT", "ttl:incrbyfloat", "0.5"));
        RespAssert.Ok(c.Call("SET", "ttl:append", "v", "PX", ttl));
        RespAssert.Integer(2, c.Call("APPEND", "ttl:append", "x"));
        RespAssert.Ok(c.Call("SET", "ttl:setrange", "v", "PX", ttl));
        RespAssert.Integer(1, c.Call("SETRANGE", "ttl:setrange", "0", "x"));

        Thread.Sleep(1300);

        foreach (var expired in new[] { "ttl:px", "ttl:keepttl", "ttl:pxat", "ttl:setex", "ttl:psetex", "ttl:incr", "ttl:incrbyfloat", "ttl:append", "ttl:setrange" })
            Assert.True(c.Call("GET", expired).IsNull, $"{expired} should have expired");
        RespAssert.Bulk("v2", c.Call("GET", "ttl:plainset"));
        RespAssert.Bulk("w", c.Call("GET", "ttl:getset"));
        RespAssert.Bulk("w", c.Call("GET", "ttl:mset"));
        RespAssert.Bulk("w", c.Call("GET", "ttl:setget"));
    }

    // ---- SETNX / SETEX / PSETEX / GETSET / GETDEL -------------------------------------------

    [Fact]
    public void SetNxSetsOnlyMissingKeys()
    {
        using var c = shared.Connect();
        RespAssert.Integer(1, c.Call("SETNX", "setnx:k", "v1"));
        RespAssert.Integer(0, c.Call("SETNX", "setnx:k", "v2"));
        RespAssert.Bulk("v1", c.Call("GET", "setnx:k"));
        RespAssert.Error("ERR wrong number of arguments for 'setnx' command", c.Call("SETNX", "setnx:k"));
    }

    [Fact]
    public void SetExAndPSetExValidateTheirTime()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SETEX", "setex:k", "100", "v"));
        RespAssert.Bulk("v", c.Call("GET", "setex:k"));
        RespAssert.Ok(c.Call("PSETEX", "setex:p", "100000", "pv"));
        RespAssert.Bulk("pv", c.Call("GET", "setex:p"));
        RespAssert.Error("ERR invalid expire time in 'setex' command", c.Call("SETEX", "setex:k", "0", "v"));
        RespAssert.Error("ERR invalid expire time in 'setex' command", c.Call("SETEX", "setex:k", "-5", "v"));
        RespAssert.Error("ERR invalid expire time in 'setex' command", c.Call("SETEX", "setex:k", "9223372036854775", "v"));
        RespAssert.Error("ERR invalid expire time in 'psetex' command", c.Call("PSETEX", "setex:k", "0", "v"));
        RespAssert.Error("ERR invalid expire time in 'psetex' command", c.Call("PSETEX", "setex:k", "9223372036854775807", "v"));
        RespAssert.Error(NotInteger, c.Call("SETEX", "setex:k", "abc", "v"));
        RespAssert.Error("ERR wrong number of arguments for 'setex' command", c.Call("SETEX", "setex:k", "10"));
        RespAssert.Bulk("v", c.Call("GET", "setex:k"));
    }

    [Fact]
    public void GetSetReturnsOldValueAndStoresNewOne()
    {
        using var c = shared.Connect();
        RespAssert.Null(c.Call("GETSET", "getset:k", "a"));
        RespAssert.Bulk("a", c.Call("GETSET", "getset:k", "b"));
        RespAssert.Bulk("b", c.Call("GET", "getset:k"));
    }

    [Fact]
    public void GetDelReturnsValueAndDeletes()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "getdel:k", "x"));
        RespAssert.Bulk("x", c.Call("GETDEL", "getdel:k"));
        RespAssert.Null(c.Call("GET", "getdel:k"));
        RespAssert.Null(c.Call("GETDEL", "getdel:k"));
        RespAssert.Integer(0, c.Call("DEL", "getdel:k"));
    }

    // ---- GETEX -------------------------------------------------------------------------------

    [Fact]
    public void GetExValidatesOptions()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "getexopt:k", "v"));
        RespAssert.Bulk("v", c.Call("GETEX", "getexopt:k"));
        RespAssert.Bulk("v", c.Call("GETEX", "getexopt:k", "persist", "persist"));
        RespAssert.Bulk("v", c.Call("GETEX", "getexopt:k", "EX", "10", "EX", "20"));
        foreach (var options in new[] { new[] { "PERSIST", "EX", "10" }, ["EX", "10", "PERSIST"], ["KEEPTTL"], ["GET"], ["NX"], ["XX"], ["EX"], ["EX", "1", "PX", "1"] })
            RespAssert.Error(Syntax, c.Call(["GETEX", "getexopt:k", .. options]));
        RespAssert.Error(NotInteger, c.Call("GETEX", "getexopt:k", "EX", "abc"));
        foreach (var (unit, time) in new[] { ("EX", "0"), ("EX", "-1"), ("PX", "0"), ("EXAT", "9223372036854775807"), ("PX", "9223372036854775807") })
            RespAssert.Error("ERR invalid expire time in 'getex' command", c.Call("GETEX", "getexopt:k", unit, time));
        // A missing key answers null before the time is looked at.
        RespAssert.Null(c.Call("GETEX", "getexopt:missing", "EX", "abc"));
        RespAssert.Null(c.Call("GETEX", "getexopt:missing", "EX", "0"));
        RespAssert.Bulk("v", c.Call("GET", "getexopt:k"));
    }

    [Fact]
    public void GetExSetsAndClearsExpiry()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "getexttl:px", "v"));
        RespAssert.Bulk("v", c.Call("GETEX", "getexttl:px", "PX", "500"));
        RespAssert.Ok(c.Call("SET", "getexttl:pxat", "v"));
        RespAssert.Bulk("v", c.Call("GETEX", "getexttl:pxat", "PXAT", (DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() + 500).ToString()));
        RespAssert.Ok(c.Call("SET", "getexttl:persist", "v", "PX", "500"));
        RespAssert.Bulk("v", c.Call("GETEX", "getexttl:persist", "PERSIST"));
        RespAssert.Ok(c.Call("SET", "getexttl:plain", "v", "PX", "500"));
        RespAssert.Bulk("v", c.Call("GETEX", "getexttl:plain"));
        // An absolute time already past returns the value and deletes the key.
        RespAssert.Ok(c.Call("SET", "getexttl:past", "v"));
        RespAssert.Bulk("v", c.Call("GETEX", "getexttl:past", "EXAT", "1"));
        RespAssert.Null(c.Call("GET", "getexttl:past"));
        RespAssert.Integer(0, c.Call("DEL", "getexttl:past"));

        Thread.Sleep(1200);

        RespAssert.Null(c.Call("GET", "getexttl:px"));
        RespAssert.Null(c.Call("GET", "getexttl:pxat"));
        RespAssert.Null(c.Call("GET", "getexttl:plain"));
        RespAssert.Bulk("v", c.Call("GET", "getexttl:persist"));
    }

    // ---- MGET / MSET / MSETNX ----------------------------------------------------------------

    [Fact]
    public void MGetReturnsValuesAndNulls()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("MSET", "mget:a", "1", "mget:b", "2"));
        RespAssert.BulkArray(c.Call("MGET", "mget:a", "mget:missing", "mget:b", "mget:a"), "1", null, "2", "1");
        RespAssert.Error("ERR wrong number of arguments for 'mget' command", c.Call("MGET"));
    }

    [Fact]
    public void MSetAndMGetSpanManyKeysAcrossShards()
    {
        using var c = shared.Connect();
        var args = new List<string> { "MSET" };
        var keys = new List<string> { "MGET" };
        var expected = new List<string?>();
        for (int i = 0; i < 64; i++)
        {
            args.Add($"mshard:{i}");
            args.Add($"value-{i}\r\n\0");
            keys.Add($"mshard:{i}");
            expected.Add($"value-{i}\r\n\0");
        }
        keys.Add("mshard:missing");
        expected.Add(null);
        RespAssert.Ok(c.Call(args.ToArray()));
        RespAssert.BulkArray(c.Call(keys.ToArray()), expected.ToArray());
    }

    [Fact]
    public void MSetRequiresPairsAndLastValueOfARepeatedKeyWins()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR wrong number of arguments for 'mset' command", c.Call("MSET", "mset:a"));
        RespAssert.Error("ERR wrong number of arguments for 'mset' command", c.Call("MSET", "mset:a", "1", "mset:b"));
        RespAssert.Null(c.Call("GET", "mset:a"));
        RespAssert.Ok(c.Call("MSET", "mset:x", "1", "mset:y", "2", "mset:x", "3"));
        RespAssert.BulkArray(c.Call("MGET", "mset:x", "mset:y"), "3", "2");
    }

    [Fact]
    public void MSetNxIsAllOrNothing()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "msetnx:existing", "old"));
        RespAssert.Integer(0, c.Call("MSETNX", "msetnx:a", "1", "msetnx:existing", "2", "msetnx:b", "3"));
        RespAssert.BulkArray(c.Call("MGET", "msetnx:a", "msetnx:existing", "msetnx:b"), null, "old", null);
        var args = new List<string> { "MSETNX" };
        for (int i = 0; i < 32; i++)
        {
            args.Add($"msetnx:n{i}");
            args.Add($"v{i}");
        }
        args.Add("msetnx:n0");
        args.Add("last");
        RespAssert.Integer(1, c.Call(args.ToArray()));
        RespAssert.BulkArray(c.Call("MGET", "msetnx:n0", "msetnx:n1", "msetnx:n31"), "last", "v1", "v31");
        RespAssert.Integer(0, c.Call("MSETNX", "msetnx:n5", "x"));
        RespAssert.Error("ERR wrong number of arguments for 'msetnx' command", c.Call("MSETNX", "msetnx:q", "1", "msetnx:r"));
    }

    // ---- APPEND / STRLEN ---------------------------------------------------------------------

    [Fact]
    public void AppendCreatesAndExtends()
    {
        using var c = shared.Connect();
        RespAssert.Integer(3, c.Call("APPEND", "append:k", "abc"));
        RespAssert.Integer(6, c.Call("APPEND", "append:k", "def"));
        RespAssert.Integer(6, c.Call("APPEND", "append:k", ""));
        RespAssert.Integer(9, c.Call(B("APPEND"), B("append:k"), B("\0\r\n")));
        RespAssert.Bulk("abcdef\0\r\n", c.Call("GET", "append:k"));
        // Appending nothing to a missing key still creates it, empty.
        RespAssert.Integer(0, c.Call("APPEND", "append:empty", ""));
        RespAssert.Bulk("", c.Call("GET", "append:empty"));
        RespAssert.Integer(1, c.Call("DEL", "append:empty"));
    }

    [Fact]
    public void ManyAppendsBuildTheWholeValue()
    {
        using var c = shared.Connect();
        var expected = new StringBuilder();
        for (int i = 0; i < 3000; i++)
        {
            string piece = $"{i},";
            expected.Append(piece);
            RespAssert.Integer(expected.Length, c.Call("APPEND", "append:many", piece));
        }
        RespAssert.Bulk(expected.ToString(), c.Call("GET", "append:many"));
        // A later shorter SET replaces the grown value.
        RespAssert.Ok(c.Call("SET", "append:many", "x"));
        RespAssert.Bulk("x", c.Call("GET", "append:many"));
        RespAssert.Integer(2, c.Call("APPEND", "append:many", "y"));
    }

    [Fact]
    public void StrLenCountsBytes()
    {
        using var c = shared.Connect();
        RespAssert.Integer(0, c.Call("STRLEN", "strlen:missing"));
        RespAssert.Ok(c.Call("SET", "strlen:k", "héllo"));
        RespAssert.Integer(6, c.Call("STRLEN", "strlen:k"));
        RespAssert.Ok(c.Call("SET", "strlen:n", "12345"));
        RespAssert.Integer(5, c.Call("STRLEN", "strlen:n"));
    }

    // ---- GETRANGE / SUBSTR / SETRANGE --------------------------------------------------------

    [Theory]
    [InlineData("0", "4", "Hello")]
    [InlineData("-1", "-5", "")]
    [InlineData("-5", "-1", "World")]
    [InlineData("5", "3", "")]
    [InlineData("-100", "100", "Hello World")]
    [InlineData("0", "-100", "H")]
    [InlineData("-100", "-100", "H")]
    [InlineData("10", "10", "d")]
    [InlineData("11", "11", "")]
    [InlineData("100", "200", "")]
    [InlineData("3", "-3", "lo Wor")]
    [InlineData("0", "-1", "Hello World")]
    [InlineData("0", "9223372036854775807", "Hello World")]
    [InlineData("-9223372036854775808", "-1", "Hello World")]
    public void GetRangeFollowsRedisIndexRules(string start, string end, string expected)
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "getrange:k", "Hello World"));
        RespAssert.Bulk(expected, c.Call("GETRANGE", "getrange:k", start, end));
        RespAssert.Bulk(expected, c.Call("SUBSTR", "getrange:k", start, end));
    }

    [Fact]
    public void GetRangeEdgeCases()
    {
        using var c = shared.Connect();
        RespAssert.Bulk("", c.Call("GETRANGE", "getrange:missing", "0", "1"));
        RespAssert.Ok(c.Call("SET", "getrange:empty", ""));
        RespAssert.Bulk("", c.Call("GETRANGE", "getrange:empty", "0", "-1"));
        RespAssert.Bulk("", c.Call("GETRANGE", "getrange:empty", "-1", "0"));
        RespAssert.Ok(c.Call("SET", "getrange:num", "12345"));
        RespAssert.Bulk("23", c.Call("GETRANGE", "getrange:num", "1", "2"));
        RespAssert.Ok(c.Call(B("SET"), B("getrange:bin"), B("a\0\r\nb")));
        RespAssert.Bulk("\0\r\n", c.Call("GETRANGE", "getrange:bin", "1", "-2"));
        RespAssert.Error(NotInteger, c.Call("GETRANGE", "getrange:num", "a", "1"));
        RespAssert.Error(NotInteger, c.Call("GETRANGE", "getrange:num", "0", "b"));
        // The range is checked before the key is looked up.
        RespAssert.Error(NotInteger, c.Call("GETRANGE", "getrange:missing", "a", "1"));
        RespAssert.Error("ERR wrong number of arguments for 'substr' command", c.Call("SUBSTR", "getrange:num", "1"));
    }

    [Fact]
    public void SetRangePadsWithZeroBytesAndOverwrites()
    {
        using var c = shared.Connect();
        RespAssert.Integer(5, c.Call("SETRANGE", "setrange:k", "3", "ab"));
        RespAssert.Bulk("\0\0\0ab", c.Call("GET", "setrange:k"));
        RespAssert.Integer(5, c.Call("SETRANGE", "setrange:k", "0", "XYZ"));
        RespAssert.Bulk("XYZab", c.Call("GET", "setrange:k"));
        RespAssert.Integer(9, c.Call("SETRANGE", "setrange:k", "8", "Q"));
        RespAssert.Bulk("XYZab\0\0\0Q", c.Call("GET", "setrange:k"));
        RespAssert.Integer(9, c.Call(B("SETRANGE"), B("setrange:k"), B("1"), B("\0\r\n")));
        RespAssert.Bulk("X\0\r\nb\0\0\0Q", c.Call("GET", "setrange:k"));
        RespAssert.Ok(c.Call("SET", "setrange:n", "12345"));
        RespAssert.Integer(5, c.Call("SETRANGE", "setrange:n", "0", "9"));
        RespAssert.Bulk("92345", c.Call("GET", "setrange:n"));
        RespAssert.Integer(92346, c.Call("INCR", "setrange:n"));
        RespAssert.Integer(5, c.Call("STRLEN", "setrange:n"));
    }

    [Fact]
    public void SetRangeWithNothingToWrite()
    {
        using var c = shared.Connect();
        RespAssert.Integer(0, c.Call("SETRANGE", "setrange:none", "0", ""));
        RespAssert.Integer(0, c.Call("SETRANGE", "setrange:none", "3", ""));
        RespAssert.Null(c.Call("GET", "setrange:none"));
        RespAssert.Ok(c.Call("SET", "setrange:some", "hello"));
        RespAssert.Integer(5, c.Call("SETRANGE", "setrange:some", "100", ""));
        RespAssert.Bulk("hello", c.Call("GET", "setrange:some"));
        // Past the size limit, writing nothing is still fine: nothing would grow.
        RespAssert.Integer(0, c.Call("SETRANGE", "setrange:none", "536870912", ""));
    }

    [Fact]
    public void SetRangeErrors()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "setrange:err", "v"));
        RespAssert.Error("ERR offset is out of range", c.Call("SETRANGE", "setrange:err", "-1", "a"));
        RespAssert.Error("ERR offset is out of range", c.Call("SETRANGE", "setrange:err", "-1", ""));
        RespAssert.Error(NotInteger, c.Call("SETRANGE", "setrange:err", "abc", "a"));
        RespAssert.Error(NotInteger, c.Call("SETRANGE", "setrange:err", "9223372036854775808", "a"));
        const string tooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
        RespAssert.Error(tooLong, c.Call("SETRANGE", "setrange:err", "536870912", "a"));
        RespAssert.Error(tooLong, c.Call("SETRANGE", "setrange:err", "536870911", "ab"));
        RespAssert.Error(tooLong, c.Call("SETRANGE", "setrange:err", "9223372036854775807", "a"));
        RespAssert.Error(tooLong, c.Call("SETRANGE", "setrange:errmissing", "536870912", "a"));
        RespAssert.Null(c.Call("GET", "setrange:errmissing"));
        RespAssert.Bulk("v", c.Call("GET", "setrange:err"));
    }

    [Fact]
    public void SizeLimitsFollowProtoMaxBulkLen()
    {
        using var server = ServerProcess.Start("--proto-max-bulk-len", "1mb");
        using var c = server.Connect();
        const string tooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
        const int limit = 1024 * 1024;
        RespAssert.Integer(limit, c.Call("SETRANGE", "limit:k", (limit - 1).ToString(), "z"));
        RespAssert.Error(tooLong, c.Call("SETRANGE", "limit:k", limit.ToString(), "z"));
        RespAssert.Error(tooLong, c.Call("APPEND", "limit:k", "z"));
        RespAssert.Integer(limit, c.Call("STRLEN", "limit:k"));
        RespAssert.Bulk("\0z", c.Call("GETRANGE", "limit:k", "-2", "-1"));

        // LCS refuses a table ((601 × 601) × 4 bytes) larger than the limit.
        RespAssert.Ok(c.Call("MSET", "limit:a", new string('a', 600), "limit:b", new string('a', 600)));
        RespAssert.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len", c.Call("LCS", "limit:a", "limit:b", "LEN"));
        RespAssert.Ok(c.Call("MSET", "limit:a", new string('a', 400), "limit:b", new string('a', 400)));
        RespAssert.Integer(400, c.Call("LCS", "limit:a", "limit:b", "LEN"));
    }

    // ---- INCR family -------------------------------------------------------------------------

    [Fact]
    public void IncrDecrFamilyOnMissingAndExistingKeys()
    {
        using var c = shared.Connect();
        RespAssert.Integer(1, c.Call("INCR", "incr:a"));
        RespAssert.Integer(2, c.Call("INCR", "incr:a"));
        RespAssert.Bulk("2", c.Call("GET", "incr:a"));
        RespAssert.Integer(-1, c.Call("DECR", "incr:b"));
        RespAssert.Integer(5, c.Call("INCRBY", "incr:c", "5"));
        RespAssert.Integer(-7, c.Call("DECRBY", "incr:d", "7"));
        RespAssert.Integer(-27, c.Call("DECRBY", "incr:d", "20"));
        RespAssert.Bulk("-27", c.Call("GET", "incr:d"));
        RespAssert.Integer(-27, c.Call("INCRBY", "incr:d", "0"));
        RespAssert.Ok(c.Call("SET", "incr:e", "-10"));
        RespAssert.Integer(0, c.Call("INCRBY", "incr:e", "10"));
        RespAssert.Bulk("0", c.Call("GET", "incr:e"));
        RespAssert.Integer(-5, c.Call("INCRBY", "incr:e", "-5"));
    }

    [Fact]
    public void IncrDetectsOverflow()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SET", "incrof:k", "9223372036854775806"));
        RespAssert.Integer(long.MaxValue, c.Call("INCR", "incrof:k"));
        RespAssert.Error(Overflow, c.Call("INCR", "incrof:k"));
        RespAssert.Error(Overflow, c.Call("INCRBY", "incrof:k", "1"));
        RespAssert.Bulk("9223372036854775807", c.Call("GET", "incrof:k"));
        RespAssert.Ok(c.Call("SET", "incrof:n", "-9223372036854775807"));
        RespAssert.Integer(long.MinValue, c.Call("DECR", "incrof:n"));
        RespAssert.Error(Overflow, c.Call("DECR", "incrof:n"));
        RespAssert.Error(Overflow, c.Call("INCRBY", "incrof:n", "-1"));
        RespAssert.Error(Overflow, c.Call("DECRBY", "incrof:n", "9223372036854775807"));
        RespAssert.Error("ERR decrement would overflow", c.Call("DECRBY", "incrof:n", "-9223372036854775808"));
        RespAssert.Error("ERR decrement would overflow", c.Call("DECRBY", "incrof:missing", "-9223372036854775808"));
        RespAssert.Integer(long.MinValue, c.Call("INCRBY", "incrof:min", "-9223372036854775808"));
        RespAssert.Error(NotInteger, c.Call("INCRBY", "incrof:k", "9223372036854775808"));
    }

    [Theory]
    [InlineData(" 1")]
    [InlineData("1 ")]
    [InlineData("01")]
    [InlineData("1.0")]
    [InlineData("+1")]
    [InlineData("-0")]
    [InlineData("")]
    [InlineData("abc")]
    [InlineData("12345678901234567890")]
    public void IncrRejectsValuesThatAreNotCanonicalIntegers(string stored)
    {
        using var c = shared.Connect();
        string key = "incrbad:" + Convert.ToHexString(B(stored));
        RespAssert.Ok(c.Call(B("SET"), B(key), B(stored)));
        RespAssert.Error(NotInteger, c.Call("INCR", key));
        RespAssert.Error(NotInteger, c.Call("DECRBY", key, "1"));
        RespAssert.Bulk(stored, c.Call("GET", key));
        RespAssert.Error(NotInteger, c.Call(B("INCRBY"), B("incrbad:arg"), B(stored)));
    }

    [Fact]
    public void IncrRejectsAnEmbeddedNul()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call(B("SET"), B("incrnul:k"), B("1\0")));
        RespAssert.Error(NotInteger, c.Call("INCR", "incrnul:k"));
        RespAssert.Error(NotInteger, c.Call(B("INCRBY"), B("incrnul:k"), B("1\0")));
    }

    // ---- INCRBYFLOAT -------------------------------------------------------------------------

    [Theory]
    // Results recorded from redis-server 7.0 (x86-64, 80-bit long double arithmetic).
    [InlineData("10.50", "0.1", "10.6")]
    [InlineData("0.1", "0.2", "0.3")]
    [InlineData("1000", "0.1", "1000.09999999999999998")]
    [InlineData("0", "1.1", "1.1")]
    [InlineData("5.0e3", "2.0e2", "5200")]
    [InlineData("0", "1e20", "100000000000000000000")]
    [InlineData("0", "123456789.123456789", "123456789.12345678899873747")]
    [InlineData("0", "3.0000000000000004", "3.0000000000000004")]
    [InlineData("0", "-0.0", "0")]
    [InlineData("1", "-1", "0")]
    [InlineData("0", "0x10", "16")]
    [InlineData("0", "0x1.8p1", "3")]
    [InlineData("0", "1e-20", "0")]
    [InlineData("0", "1.5e-17", "0.00000000000000002")]
    [InlineData("0", "-1e-18", "0")]
    [InlineData("0", "0.000003814697265625", "0.00000381469726562")]
    [InlineData("0", "0.000011444091796875", "0.00001144409179688")]
    [InlineData("0", ".5", "0.5")]
    [InlineData("0", "5.", "5")]
    [InlineData("0", "+5", "5")]
    [InlineData("0", "-.5e1", "-5")]
    [InlineData("0", "00012", "12")]
    [InlineData("0", "1e0000000000000000000000000002", "100")]
    [InlineData("0", "99999999999999999.5", "99999999999999999.5")]
    [InlineData("0", "1e30", "1000000000000000000024696061952")]
    [InlineData("0", "1e-4940", "0")]
    [InlineData("0", "0x1p-16445", "0")]
    [InlineData("0", "12345678901234567890123", "12345678901234567889920")]
    [InlineData("1.7976931348623157e308", "1.7976931348623157e308", "359538626972463139991842093548208868096772893888658356970628841530353257046248792709403737216774171128857586838851041378617416726902272110715794556052955234146997955372576789671236326588091188869859074894581254961338834769297758245552436667197907705664206565009503223382416235440319971852753604933726679072768")]
    public void IncrByFloatComputesLikeRedis(string initial, string increment, string expected)
    {
        using var c = shared.Connect();
        string key = $"incrbyfloat:{initial}:{increment}";
        RespAssert.Ok(c.Call("SET", key, initial));
        RespAssert.Bulk(expected, c.Call("INCRBYFLOAT", key, increment));
        RespAssert.Bulk(expected, c.Call("GET", key));
    }

    [Fact]
    public void IncrByFloatAccumulatesOnItsOwnText()
    {
        using var c = shared.Connect();
        RespAssert.Bulk("1", c.Call("INCRBYFLOAT", "ibf:acc", "1"));
        RespAssert.Bulk("1.25", c.Call("INCRBYFLOAT", "ibf:acc", "0.25"));
        RespAssert.Bulk("-3.75", c.Call("INCRBYFLOAT", "ibf:acc", "-5"));
        RespAssert.Ok(c.Call("SET", "ibf:thousand", "1000"));
        RespAssert.Bulk("1000.09999999999999998", c.Call("INCRBYFLOAT", "ibf:thousand", "0.1"));
        RespAssert.Bulk("1000.19999999999999996", c.Call("INCRBYFLOAT", "ibf:thousand", "0.1"));
        RespAssert.Bulk("1000.29999999999999993", c.Call("INCRBYFLOAT", "ibf:thousand", "0.1"));
        // The stored float text is not an integer any more.
        RespAssert.Error(NotInteger, c.Call("INCR", "ibf:acc"));
        RespAssert.Ok(c.Call("SET", "ibf:int", "41"));
        RespAssert.Bulk("42", c.Call("INCRBYFLOAT", "ibf:int", "1"));
        RespAssert.Integer(43, c.Call("INCR", "ibf:int"));
    }

    [Fact]
    public void IncrByFloatErrors()
    {
        using var c = shared.Connect();
        const string notFinite = "ERR increment would produce NaN or Infinity";
        RespAssert.Ok(c.Call("SET", "ibferr:k", "1"));
        foreach (var bad in new[] { "abc", "nan", "NaN", " 1", "1 ", "", "1e", "e1", "-", ".", "0x", "0xp3", "1,5", "1e5000", "1e-5000", "infx", "0x1p-16446", "0x1p16384", "nan(1)" })
            RespAssert.Error(NotFloat, c.Call("INCRBYFLOAT", "ibferr:k", bad));
        RespAssert.Error(NotFloat, c.Call(B("INCRBYFLOAT"), B("ibferr:k"), B("1\0")));
        foreach (var infinite in new[] { "inf", "INF", "-Infinity", "+inf" })
            RespAssert.Error(notFinite, c.Call("INCRBYFLOAT", "ibferr:k", infinite));
        RespAssert.Bulk("1", c.Call("GET", "ibferr:k"));
        RespAssert.Ok(c.Call("SET", "ibferr:text", "abc"));
        RespAssert.Error(NotFloat, c.Call("INCRBYFLOAT", "ibferr:text", "1"));
        RespAssert.Ok(c.Call("SET", "ibferr:empty", ""));
        RespAssert.Error(NotFloat, c.Call("INCRBYFLOAT", "ibferr:empty", "1"));
        // Beyond double's range but within long double's is fine, as in Redis; past it, not.
        RespAssert.Ok(c.Call("SET", "ibferr:wide", "1e400"));
        RespAssert.Bulk("10000000000000000000281880683947586514586453433629052038625910693539685534008629862039363994848324160522094053927317616200295822777259255734023828976593340661017797447434546173917862448116674971723778943824391593338047470675026246684401359237513603830343735485505244955964979021825038280091068414947402456898653040951017512658092615827588920183472511643316591362664138176309734806343732497430221946880",
            c.Call("INCRBYFLOAT", "ibferr:wide", "0"));
        RespAssert.Error(NotFloat, c.Call("INCRBYFLOAT", "ibferr:wide", "1.2e4932"));
        RespAssert.Ok(c.Call("SET", "ibferr:top", "1.1e4932"));
        RespAssert.Error(notFinite, c.Call("INCRBYFLOAT", "ibferr:top", "1.1e4932"));
        RespAssert.Ok(c.Call("SET", "ibferr:inf", "inf"));
        RespAssert.Error(notFinite, c.Call("INCRBYFLOAT", "ibferr:inf", "1"));
        RespAssert.Ok(c.Call("SET", "ibferr:inf", "-inf"));
        RespAssert.Error(notFinite, c.Call("INCRBYFLOAT", "ibferr:inf", "inf"));
    }

    // ---- LCS ---------------------------------------------------------------------------------

    [Fact]
    public void LcsStringAndLength()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("MSET", "lcs:key1", "ohmytext", "lcs:key2", "mynewtext"));
        RespAssert.Bulk("mytext", c.Call("LCS", "lcs:key1", "lcs:key2"));
        RespAssert.Integer(6, c.Call("LCS", "lcs:key1", "lcs:key2", "LEN"));
        RespAssert.Integer(6, c.Call("LCS", "lcs:key1", "lcs:key2", "minmatchlen", "3", "len"));
        RespAssert.Bulk("mytext", c.Call("LCS", "lcs:key1", "lcs:key2", "WITHMATCHLEN"));
        RespAssert.Bulk("", c.Call("LCS", "lcs:missing1", "lcs:missing2"));
        RespAssert.Integer(0, c.Call("LCS", "lcs:key1", "lcs:missing2", "LEN"));
        RespAssert.Bulk("ohmytext", c.Call("LCS", "lcs:key1", "lcs:key1"));
    }

    [Fact]
    public void LcsIdxLayoutInResp2()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("MSET", "lcsidx:key1", "ohmytext", "lcsidx:key2", "mynewtext"));
        Assert.Equal("*[$matches, *[*[*[:4, :7], *[:5, :8]], *[*[:2, :3], *[:0, :1]]], $len, :6]",
            c.Call("LCS", "lcsidx:key1", "lcsidx:key2", "IDX").ToString());
        Assert.Equal("*[$matches, *[*[*[:4, :7], *[:5, :8], :4]], $len, :6]",
            c.Call("LCS", "lcsidx:key1", "lcsidx:key2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN").ToString());
        Assert.Equal("*[$matches, *[*[*[:4, :7], *[:5, :8], :4], *[*[:2, :3], *[:0, :1], :2]], $len, :6]",
            c.Call("LCS", "lcsidx:key1", "lcsidx:key2", "idx", "withmatchlen").ToString());
        Assert.Equal("*[$matches, *[*[*[:4, :7], *[:5, :8]], *[*[:2, :3], *[:0, :1]]], $len, :6]",
            c.Call("LCS", "lcsidx:key1", "lcsidx:key2", "MINMATCHLEN", "-5", "IDX").ToString());
        Assert.Equal("*[$matches, *[], $len, :0]", c.Call("LCS", "lcsidx:none1", "lcsidx:none2", "IDX").ToString());

        RespAssert.Ok(c.Call("MSET", "lcsidx:a", "abcdefgh123xyz", "lcsidx:b", "xyzabcd12efgh"));
        RespAssert.Bulk("abcdefgh", c.Call("LCS", "lcsidx:a", "lcsidx:b"));
        Assert.Equal("*[$matches, *[*[*[:4, :7], *[:9, :12], :4], *[*[:0, :3], *[:3, :6], :4]], $len, :8]",
            c.Call("LCS", "lcsidx:a", "lcsidx:b", "IDX", "WITHMATCHLEN", "MINMATCHLEN", "3").ToString());
    }

    [Fact]
    public void LcsIdxIsAMapInResp3()
    {
        using var c = shared.Connect();
        Assert.Equal('%', c.Call("HELLO", "3").Kind);
        RespAssert.Ok(c.Call("MSET", "lcs3:key1", "ohmytext", "lcs3:key2", "mynewtext"));
        var reply = c.Call("LCS", "lcs3:key1", "lcs3:key2", "IDX", "WITHMATCHLEN");
        Assert.Equal('%', reply.Kind);
        Assert.Equal("%[$matches, *[*[*[:4, :7], *[:5, :8], :4], *[*[:2, :3], *[:0, :1], :2]], $len, :6]", reply.ToString());
        Assert.Equal("%[$matches, *[], $len, :0]", c.Call("LCS", "lcs3:none1", "lcs3:none2", "IDX").ToString());
        RespAssert.Integer(6, c.Call("LCS", "lcs3:key1", "lcs3:key2", "LEN"));
        RespAssert.Bulk("mytext", c.Call("LCS", "lcs3:key1", "lcs3:key2"));
    }

    [Fact]
    public void LcsErrors()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("MSET", "lcserr:a", "abc", "lcserr:b", "abd"));
        const string both = "ERR If you want both the length and indexes, please just use IDX.";
        RespAssert.Error(both, c.Call("LCS", "lcserr:a", "lcserr:b", "IDX", "LEN"));
        RespAssert.Error(both, c.Call("LCS", "lcserr:a", "lcserr:b", "len", "idx"));
        RespAssert.Error(Syntax, c.Call("LCS", "lcserr:a", "lcserr:b", "MINMATCHLEN"));
        RespAssert.Error(Syntax, c.Call("LCS", "lcserr:a", "lcserr:b", "FOO"));
        RespAssert.Error(NotInteger, c.Call("LCS", "lcserr:a", "lcserr:b", "MINMATCHLEN", "abc"));
        RespAssert.Error("ERR wrong number of arguments for 'lcs' command", c.Call("LCS", "lcserr:a"));
    }

    [Fact]
    public void LcsOfLongerBinaryStrings()
    {
        using var c = shared.Connect();
        var random = new Random(7);
        var a = new byte[700];
        var b = new byte[500];
        for (int i = 0; i < a.Length; i++) a[i] = (byte)"ac\0\n"[random.Next(4)];
        for (int i = 0; i < b.Length; i++) b[i] = (byte)"ac\0\n"[random.Next(4)];
        RespAssert.Ok(c.Call(B("MSET"), B("lcsbin:a"), a, B("lcsbin:b"), b));
        string expected = ReferenceLcs(a, b);
        RespAssert.Bulk(expected, c.Call("LCS", "lcsbin:a", "lcsbin:b"));
        RespAssert.Integer(expected.Length, c.Call("LCS", "lcsbin:a", "lcsbin:b", "LEN"));
        var matches = c.Call("LCS", "lcsbin:a", "lcsbin:b", "IDX", "WITHMATCHLEN").ToMap()["matches"].Array;
        long covered = 0;
        foreach (var match in matches)
        {
            var ra = match.Array[0].Array;
            var rb = match.Array[1].Array;
            long length = match.Array[2].Integer;
            Assert.Equal(length, ra[1].Integer - ra[0].Integer + 1);
            Assert.Equal(length, rb[1].Integer - rb[0].Integer + 1);
            Assert.Equal(a.AsSpan((int)ra[0].Integer, (int)length).ToArray(), b.AsSpan((int)rb[0].Integer, (int)length).ToArray());
            covered += length;
        }
        Assert.Equal(expected.Length, covered);
    }

    /// <summary>Textbook LCS with the same tie-breaking as Redis's walk back (prefer moving in b).</summary>
    private static string ReferenceLcs(byte[] a, byte[] b)
    {
        var table = new int[a.Length + 1, b.Length + 1];
        for (int i = 1; i <= a.Length; i++)
            for (int j = 1; j <= b.Length; j++)
                table[i, j] = a[i - 1] == b[j - 1] ? table[i - 1, j - 1] + 1 : Math.Max(table[i - 1, j], table[i, j - 1]);
        var result = new List<byte>();
        for (int i = a.Length, j = b.Length; i > 0 && j > 0;)
        {
            if (a[i - 1] == b[j - 1])
            {
                result.Add(a[i - 1]);
                i--;
                j--;
            }
            else if (table[i - 1, j] > table[i, j - 1])
            {
                i--;
            }
            else
            {
                j--;
            }
        }
        result.Reverse();
        return Encoding.UTF8.GetString(result.ToArray());
    }

    // ---- RESP3 -------------------------------------------------------------------------------

    [Fact]
    public void NullsAreResp3NullsAfterHello3()
    {
        using var c = shared.Connect();
        Assert.Equal('%', c.Call("HELLO", "3").Kind);
        Assert.Equal('_', c.Call("GET", "resp3:missing").Kind);
        RespAssert.Ok(c.Call("SET", "resp3:k", "v"));
        var mget = c.Call("MGET", "resp3:k", "resp3:missing");
        Assert.Equal("*[$v, (null)]", mget.ToString());
        Assert.Equal('_', c.Call("SET", "resp3:k", "w", "NX").Kind);
        Assert.Equal('_', c.Call("GETDEL", "resp3:missing").Kind);
        Assert.Equal('_', c.Call("GETEX", "resp3:missing").Kind);
        Assert.Equal('_', c.Call("GETSET", "resp3:new", "v").Kind);
        // INCRBYFLOAT replies a bulk string in both protocols.
        Assert.Equal('$', c.Call("INCRBYFLOAT", "resp3:f", "1.5").Kind);
    }

    [Fact]
    public void NullsAreResp2NullBulksByDefault()
    {
        using var c = shared.Connect();
        c.SendRaw("*2\r\n$3\r\nGET\r\n$12\r\nresp2:absent\r\n");
        var reply = c.Read();
        Assert.Equal('$', reply.Kind);
        Assert.True(reply.IsNull);
        RespAssert.Ok(c.Call("SET", "resp2:k", "v"));
        Assert.Equal("*[$v, $(nil)]", c.Call("MGET", "resp2:k", "resp2:absent").ToString());
    }
}
