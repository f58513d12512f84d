using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Scripting;

/// <summary>
/// EVAL, EVALSHA, EVAL_RO and SCRIPT sent to this server and to Debian's real redis-server (7.0)
/// side by side, in RESP2 and RESP3, every reply compared, error texts included: what redis.call
/// gives a script back (RESP2 and, after redis.setresp(3), RESP3 types) and what a script's
/// return value becomes, how errors are shaped (the script's sha and line, tail calls too), the
/// sandbox, Lua 5.1's names, numbers passed to commands, shebang flags and read-only scripts.
/// Where Lua 5.4 answers differently from Redis's 5.1 (listed in README), no case is here.
/// </summary>
public sealed class ScriptingConformanceTests
{
    public static IEnumerable<object[]> Groups => Cases.Keys.Select(name => new object[] { name });

    [Theory]
    [MemberData(nameof(Groups))]
    public void RepliesMatchRedis(string group) => SideBySideReplies.AssertSame(Cases[group], c =>
    {
        RespAssert.Ok(c.Call("FLUSHALL"));
        RespAssert.Ok(c.Call("SCRIPT", "FLUSH"));
    });

    private static string[] Eval(string script, params string[] keysThenArgs) => ["EVAL", script, .. keysThenArgs];

    private static readonly Dictionary<string, string[][]> Cases = new()
    {
        ["replies"] =
        [
            Eval("return 1", "0"), Eval("return 'x'", "0"), Eval("return 3.99", "0"), Eval("return -3.99", "0"),
            Eval("return true", "0"), Eval("return false", "0"), Eval("return nil", "0"), Eval("return {}", "0"),
            Eval("return {1,2,3.7,'x',true,false,nil,5}", "0"), Eval("return {1,{2,{3,'four'}},{}}", "0"),
            Eval("return {err='My Error'}", "0"), Eval("return {err='-WRONG kind'}", "0"), Eval("return {ok='FINE'}", "0"),
            Eval("return {ok='two\\nlines'}", "0"), Eval("return redis.error_reply('My Error')", "0"),
            Eval("return redis.error_reply('-CODE text')", "0"), Eval("return redis.status_reply('FINE')", "0"),
            Eval("return redis.error_reply()", "0"), Eval("return redis.status_reply(1)", "0"),
            Eval("return {1, {err='inner'}, {ok='ok'}}", "0"), Eval("return {double=1.5}", "0"),
            Eval("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", "2", "k1", "k2", "a1", "a2", "a3"),
            Eval("return redis.sha1hex('')", "0"), Eval("return redis.sha1hex('abc')", "0"),
            Eval("return redis.REDIS_VERSION ~= nil", "0"), Eval("return type(redis.REDIS_VERSION_NUM)", "0"),
        ],
        // A set sorted without a sort inside a script is sorted ALPHA, so the script's result (and
        // its effects) never depend on the order a set is walked in; streams and bitmaps from Lua.
        ["data-model"] =
        [
            ["SADD", "s", "c", "a", "b", "10", "9"], ["RPUSH", "l", "3", "1", "2"],
            Eval("return redis.call('sort', KEYS[1], 'by', 'nosort')", "1", "s"),
            Eval("return redis.call('sort', KEYS[1], 'by', 'nosort')", "1", "l"),
            Eval("return redis.call('sort_ro', KEYS[1], 'by', 'nosort', 'desc')", "1", "s"),
            Eval("return redis.call('xadd', KEYS[1], '1-1', 'f', 'v')", "1", "x"),
            Eval("return redis.call('xrange', KEYS[1], '-', '+')", "1", "x"),
            Eval("return redis.pcall('xread', 'block', '0', 'streams', KEYS[1], '$')", "1", "x"),
            Eval("return {redis.call('setbit', KEYS[1], 7, 1), redis.call('bitcount', KEYS[1])}", "1", "b"),
        ],
        ["resp3"] =
        [
            ["HSET", "h", "f", "v"], ["SADD", "s", "m"], ["ZADD", "z", "1.5", "a"], ["SET", "str", "v"],
            Eval("redis.setresp(3) return redis.call('hgetall', 'h')", "0"),
            Eval("redis.setresp(3) return redis.call('smembers', 's')", "0"),
            Eval("redis.setresp(3) return redis.call('zscore', 'z', 'a')", "0"),
            Eval("redis.setresp(3) return redis.call('get', 'nosuch')", "0"),
            Eval("redis.setresp(3) return redis.call('exists', 'str') == 1", "0"),
            Eval("redis.setresp(3) local r = redis.call('hgetall', 'h') return r.map.f", "0"),
            Eval("redis.setresp(3) local r = redis.call('smembers', 's') return tostring(r.set.m)", "0"),
            Eval("redis.setresp(3) local r = redis.call('zscore', 'z', 'a') return tostring(r.double)", "0"),
            Eval("redis.setresp(3) return true", "0"), Eval("redis.setresp(3) return false", "0"),
            Eval("redis.setresp(2) return redis.call('get', 'nosuch')", "0"),
            Eval("return redis.call('hgetall', 'h')", "0"),
            Eval("return {map={a=1}}", "0"), Eval("return {set={a=true}}", "0"),
            Eval("return {big_number='123456789012345678901234567890'}", "0"),
            Eval("return {verbatim_string={format='txt', string='hello'}}", "0"),
            Eval("redis.setresp(4)", "0"), Eval("redis.setresp()", "0"),
        ],
        ["calls"] =
        [
            ["SET", "s", "a"],
            Eval("return redis.call('get', 's')", "0"), Eval("return redis.call('get', 'nosuch')", "0"),
            Eval("return redis.call('incr', 's')", "0"), Eval("local x = redis.call('incr', 's') return x", "0"),
            Eval("return redis.pcall('incr', 's')", "0"), Eval("local ok, e = pcall(redis.call, 'incr', 's') return e", "0"),
            Eval("redis.pcall('incr', 's') return redis.call('incr', 's')", "0"),
            Eval("redis.call('nosuch')", "0"), Eval("return redis.call()", "0"), Eval("return redis.call(1)", "0"),
            Eval("return redis.call('get', {})", "0"), Eval("return redis.pcall('get', {})", "0"),
            Eval("return redis.call('get')", "0"), Eval("return redis.call('eval', 'return 1', 0)", "0"),
            Eval("return redis.call('multi')", "0"),
            Eval("return redis.call('lpush', 's', 'x')", "0"), Eval("return redis.call('client', 'nosuch')", "0"),
            Eval("return redis.call('set', 'n', 0.1) .. redis.call('get', 'n')", "0"),
            Eval("redis.call('set', 'n', 1e20) return redis.call('get', 'n')", "0"),
            Eval("redis.call('set', 'n', 3.0) return redis.call('get', 'n')", "0"),
            Eval("redis.call('set', 'n', -2.5) return redis.call('get', 'n')", "0"),
            Eval("redis.call('set', 'n', 42) return redis.call('get', 'n')", "0"),
            Eval("redis.call('select', 5) redis.call('set', 'in5', 'x') return redis.call('get', 'in5')", "0"),
            ["GET", "in5"], ["SELECT", "5"], ["GET", "in5"], ["SELECT", "0"],
            Eval("redis.call('rpush', 'l', 'a') return redis.call('blpop', 'l', 0)", "0"),
            Eval("return redis.call('blpop', 'empty', 0)", "0"),
            Eval("return redis.sha1hex()", "0"), Eval("redis.log(redis.LOG_WARNING)", "0"),
            Eval("redis.log(99, 'x')", "0"), Eval("redis.log(redis.LOG_NOTICE, 'from a test')", "0"),
            Eval("error('x')", "0"), Eval("error({err='custom'})", "0"), Eval("error()", "0"),
            Eval("local t = {} t[1] = t return 1", "0"),
        ],
        ["sandbox"] =
        [
            Eval("return x", "0"), Eval("x = 1", "0"), Eval("return os.time()", "0"), Eval("return io", "0"),
            Eval("return debug", "0"), Eval("return loadfile", "0"), Eval("return dofile", "0"), Eval("return require", "0"),
            Eval("return print", "0"), Eval("string.x = 1", "0"), Eval("rawset(_G, 'x', 1)", "0"),
            Eval("setmetatable(_G, nil)", "0"), Eval("redis.call = nil", "0"), Eval("table.insert = nil", "0"),
            Eval("local mt = getmetatable('') mt.__index = {}", "0"), Eval("math.pi = 3", "0"),
            Eval("return type(_G)", "0"), Eval("return rawget(_G, 'redis') ~= nil", "0"),
            Eval("local n = 0 for k in pairs(redis) do n = n + 1 end return n > 10", "0"),
            Eval("return type(KEYS)", "0"), Eval("return #ARGV", "0", "a", "b"),
        ],
        ["lua51"] =
        [
            Eval("return unpack({1,2,3})", "0"), Eval("return {unpack({1,2,3})}", "0"), Eval("return table.getn({1,2,3})", "0"),
            Eval("return table.maxn({1,2,nil,4})", "0"), Eval("return math.pow(2, 10)", "0"), Eval("return math.mod(7, 3)", "0"),
            Eval("return math.atan2(1, 1) * 1000", "0"), Eval("return math.log10(1000)", "0"), Eval("return math.ldexp(1, 4)", "0"),
            Eval("return {math.frexp(8)}", "0"), Eval("return math.floor(math.cosh(1) * 1e6)", "0"),
            Eval("return math.floor(math.tanh(0.5) * 1e6)", "0"), Eval("return loadstring('return 7')()", "0"),
            Eval("return type(gcinfo())", "0"), Eval("return tostring(3.0)", "0"), Eval("return tostring(2.5)", "0"),
            Eval("return tostring(10/2)", "0"), Eval("return string.format('%d', 3)", "0"),
            Eval("local s = '' for w in string.gfind('a b c', '%a') do s = s .. w end return s", "0"),
            Eval("return table.foreachi({5, 6}, function(i, v) if v == 6 then return i end end)", "0"),
            Eval("return select('#', 1, 2, 3)", "0"), Eval("return type(coroutine.create(function() end))", "0"),
        ],
        ["flags"] =
        [
            ["EVAL_RO", "return redis.call('get', 'a')", "0"], ["EVAL_RO", "return redis.call('set', 'a', 'b')", "0"],
            Eval("#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')", "0"),
            Eval("#!lua flags=no-writes\nreturn redis.call('get', 'a')", "0"),
            Eval("#!lua\nreturn redis.call('set', 'a', 'b')", "0"), Eval("#!lua flags=bad\nreturn 1", "0"),
            Eval("#!notlua\nreturn 1", "0"), Eval("#!lua name=x\nreturn 1", "0"), Eval("#!lua", "0"),
            ["EVAL_RO", "#!lua\nreturn 1", "0"], ["EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"],
            Eval("#!lua flags=allow-oom,no-cluster,allow-stale\nreturn 2", "0"),
            Eval("#!lua\nerror('on line two')", "0"),
        ],
        ["arguments"] =
        [
            Eval("return 1", "-1"), Eval("return 1", "3", "a"), Eval("return 1", "x"), ["EVAL", "return 1"],
            ["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"], ["EVALSHA", "fff", "0"],
            ["SCRIPT", "LOAD", "return 'loaded'"], ["EVALSHA", "a4f5e8f2f5d54e1f8e0d3e8d3e1e3b8e6d9fa4a8", "0"],
            ["EVALSHA", "1b3a68c4c0f39ac2b8b0c9c6b9a1e7e4e8a6f3c0", "0"],
            ["SCRIPT", "EXISTS", "ffffffffffffffffffffffffffffffffffffffff"], ["SCRIPT", "EXISTS"], ["SCRIPT", "LOAD"],
            ["SCRIPT", "FLUSH", "BAD"], ["SCRIPT", "FLUSH", "ASYNC"], ["SCRIPT", "FLUSH", "SYNC"], ["SCRIPT", "KILL"],
            ["SCRIPT", "NOSUCH"], ["SCRIPT", "HELP"], ["SCRIPT", "DEBUG", "NO"],
            ["EVALSHA_RO", "ffffffffffffffffffffffffffffffffffffffff", "0"],
        ],
    };

    /// <summary>SCRIPT LOAD's digest runs by EVALSHA in either case, and SCRIPT FLUSH forgets it, on both servers alike.</summary>
    [Fact]
    public void LoadedScriptsRunBySha()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        foreach (var connect in new Func<RespClient>[] { ours.Connect, redis.Connect })
        {
            using var c = connect();
            string sha = c.Call("SCRIPT", "LOAD", "return ARGV[1] .. KEYS[1]").Text!;
            Assert.Equal("e0e1f9fabfc9d4800c877a703b823ac0578ff8db", c.Call("SCRIPT", "LOAD", "return 1").Text);
            RespAssert.Bulk("ak", c.Call("EVALSHA", sha, "1", "k", "a"));
            RespAssert.Bulk("ak", c.Call("EVALSHA", sha.ToUpperInvariant(), "1", "k", "a"));
            RespAssert.Bulk("ak", c.Call("EVALSHA_RO", sha, "1", "k", "a"));
            Assert.Equal("*2 :1 :0", Flat(c.Call("SCRIPT", "EXISTS", sha, "ffffffffffffffffffffffffffffffffffffffff")));
            RespAssert.Ok(c.Call("SCRIPT", "FLUSH"));
            Assert.Equal("NOSCRIPT No matching script. Please use EVAL.", c.Call("EVALSHA", sha, "0").Text);
        }
    }

    private static string Flat(RespValue value) => value.Items is null ? value.ToString() : $"*{value.Items.Count} " + string.Join(' ', value.Items.Select(i => ":" + i.Integer));
}
