using System.Text;
using Diagnostics.Server.Scripting.Libraries;
using Diagnostics.Server.Tests.Infrastructure;
using KeraLua;

namespace Diagnostics.Server.UnitTests.Scripting;

/// <summary>
/// The scripts' libraries (cjson, cmsgpack, bit, struct) side by side with the real redis-server:
/// every snippet runs in a bare Lua 5.4 state with the libraries opened, and as EVAL on
/// redis-server 7, and both replies must be the same once converted as Redis converts a script's
/// result (strings, integers by truncation, tables as arrays up to the first nil, false as nil).
/// A case lists its snippet only; what it must return is whatever Redis returns.
/// </summary>
public sealed class LuaLibraryTests : IClassFixture<LuaLibraryTests.Redis>
{
    /// <summary>One redis-server for the whole class; EVAL calls are serialised on its one connection.</summary>
    public sealed class Redis : IDisposable
    {
        private readonly RealRedisServer _server = RealRedisServer.Start();
        private readonly RespClient _client;

        public Redis() => _client = _server.Connect();

        public RespValue Eval(string script, params byte[][] args)
        {
            var command = new List<byte[]> { "EVAL"u8.ToArray(), Encoding.UTF8.GetBytes(script), "0"u8.ToArray() };
            command.AddRange(args);
            lock (_client)
                return _client.Call([.. command]);
        }

        public RespValue Call(params string[] args)
        {
            lock (_client)
                return _client.Call(args);
        }

        public void Dispose()
        {
            _client.Dispose();
            _server.Dispose();
        }
    }

    private readonly Redis _redis;

    public LuaLibraryTests(Redis redis) => _redis = redis;

    /// <summary>A Lua state with base, string, table and math only (the rest removed), then the four libraries.</summary>
    internal static Lua NewState()
    {
        var lua = new Lua(openLibs: true);
        foreach (var name in new[] { "io", "os", "debug", "package", "coroutine", "utf8", "require", "dofile", "loadfile" })
        {
            lua.PushNil();
            lua.SetGlobal(name);
        }
        CjsonLibrary.Open(lua);
        CmsgpackLibrary.Open(lua);
        BitLibrary.Open(lua);
        StructLibrary.Open(lua);
        return lua;
    }

    /// <summary>Runs <paramref name="script"/> as Redis runs an EVAL body (chunk "@user_script", ARGV set) and renders the reply.</summary>
    internal static string RunHere(Lua lua, string script, params byte[][] args)
    {
        lua.NewTable();
        for (int i = 0; i < args.Length; i++)
        {
            lua.PushBuffer(args[i]);
            lua.RawSetInteger(-2, i + 1);
        }
        lua.SetGlobal("ARGV");
        int top = lua.GetTop();
        if (lua.LoadString(script, "@user_script") != LuaStatus.OK || lua.PCall(0, 1, 0) != LuaStatus.OK)
        {
            string error = lua.ToString(-1);
            lua.SetTop(top);
            return "-ERR " + error;
        }
        string reply = Render(lua, -1);
        lua.SetTop(top);
        return reply;
    }

    /// <summary>Redis's luaReplyToRedisReply, rendered as text.</summary>
    private static string Render(Lua lua, int index)
    {
        switch (lua.Type(index))
        {
            case LuaType.String:
                return "$" + Encoding.UTF8.GetString(lua.ToBuffer(index, false));
            case LuaType.Number:
                return ":" + (lua.IsInteger(index) ? lua.ToInteger(index) : (long)lua.ToNumber(index));
            case LuaType.Boolean:
                return lua.ToBoolean(index) ? ":1" : "(nil)";
            case LuaType.Table:
                int table = lua.AbsIndex(index);
                if (lua.GetField(table, "err") == LuaType.String)
                {
                    string error = "-" + lua.ToString(-1);
                    lua.Pop(1);
                    return error;
                }
                lua.Pop(1);
                if (lua.GetField(table, "ok") == LuaType.String)
                {
                    string status = "+" + lua.ToString(-1);
                    lua.Pop(1);
                    return status;
                }
                lua.Pop(1);
                var items = new List<string>();
                for (int i = 1; lua.RawGetInteger(table, i) != LuaType.Nil; i++)
                {
                    items.Add(Render(lua, -1));
                    lua.Pop(1);
                }
                lua.Pop(1);
                return "[" + string.Join(", ", items) + "]";
            default:
                return "(nil)";
        }
    }

    internal static string Render(RespValue value) => value.Kind switch
    {
        '$' when value.Text is null => "(nil)",
        '*' when value.Items is null => "(nil)",
        '$' => "$" + value.Text,
        ':' => ":" + value.Integer,
        '*' => "[" + string.Join(", ", value.Items!.Select(Render)) + "]",
        '-' => "-" + value.Text,
        '+' => "+" + value.Text,
        _ => value.ToString(),
    };

    /// <summary>Runs every snippet both ways and fails listing every difference.</summary>
    private void AssertSameAsRedis(params string[] scripts)
    {
        using var lua = NewState();
        var differences = new StringBuilder();
        foreach (var script in scripts)
        {
            string expected = Render(_redis.Eval(script));
            string actual = RunHere(lua, script);
            if (expected != actual)
                differences.Append($"\n{script}\n  redis: {expected}\n  here:  {actual}\n");
        }
        Assert.True(differences.Length == 0, "different from redis-server:" + differences);
    }

    private const string Hex = "local function hex(s) return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end)) end ";

    // ---- the tables themselves --------------------------------------------------------------

    [Fact]
    public void EachLibraryHasRedisFieldsAndFunctions() => AssertSameAsRedis(
        "local t={} for k,v in pairs(cjson) do t[#t+1]=k..':'..type(v) end table.sort(t) return t",
        "local t={} for k,v in pairs(cmsgpack) do t[#t+1]=k..':'..type(v) end table.sort(t) return t",
        "local t={} for k,v in pairs(bit) do t[#t+1]=k..':'..type(v) end table.sort(t) return t",
        "local t={} for k,v in pairs(struct) do t[#t+1]=k..':'..type(v) end table.sort(t) return t",
        "return {cjson._NAME, cjson._VERSION, tostring(cjson.null), cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}",
        "local c = cjson.new() return {c.encode({1}), tostring(c.null == cjson.null), tostring(c ~= cjson)}");

    // ---- cjson ------------------------------------------------------------------------------

    [Fact]
    public void CjsonEncodesAsRedis() => AssertSameAsRedis(
        "return cjson.encode({1,2,{a=1}})",
        "return cjson.encode({})",
        "return cjson.encode({{}, {{}}})",
        "return cjson.encode('a/b\"\\\\\\1\\31\\127\\128\\255 \\b\\f\\n\\r\\t')",
        "return cjson.encode('caf\\195\\169 \\226\\130\\172')",
        "return {cjson.encode(0.1), cjson.encode(1/3), cjson.encode(1e20), cjson.encode(-0.0), cjson.encode(1e-5), cjson.encode(0.0001), cjson.encode(123456789012345678)}",
        "return {cjson.encode(123456789012345), cjson.encode(12345678901234.5), cjson.encode(2^53), cjson.encode(-2^63), cjson.encode(1e300), cjson.encode(5e-324), cjson.encode(100), cjson.encode(-7)}",
        "return {cjson.encode(3), cjson.encode(3.0), cjson.encode(true), cjson.encode(false), cjson.encode(nil), cjson.encode(cjson.null), cjson.encode({cjson.null, false})}",
        "return cjson.encode({[1]=1,[3]=3})",
        "return cjson.encode({[1]=1,[2]=2,[5]=5,[6]=6})",
        "local ok, e = pcall(cjson.encode, {[1]=1,[11]=11}) return e",
        "return cjson.encode({[10]='x'})",
        "return cjson.encode({[1.5]='x'})",
        "return cjson.encode({[0]='x'})",
        "return cjson.encode({[-1]='x'})",
        "return cjson.encode({['a\\0b']='x'})",
        "return cjson.encode({[2^40]='x'})",
        "return cjson.encode({a={b={c={1,2,3}}}})",
        "return cjson.encode({['1']=1})",
        "return cjson.encode(string.rep('x', 10000))",
        "local t={} for i=1,300 do t[i]=i*1.5 end return cjson.encode(t)");

    [Fact]
    public void CjsonSettingsAsRedis() => AssertSameAsRedis(
        "local c = cjson.new() return {c.encode_number_precision(), c.encode_number_precision(3), c.encode(math.pi), c.encode(123456), c.encode(0.5), c.encode(2.5), c.encode(1.25)}",
        "local c = cjson.new() c.encode_number_precision(1) return {c.encode(0.5), c.encode(1.5), c.encode(2.5), c.encode(25), c.encode(35), c.encode(0.15)}",
        "local c = cjson.new() return {tostring(c.encode_sparse_array()), tostring(c.encode_sparse_array(true)), c.encode({[1]=1,[100]=2})}",
        "local c = cjson.new() local a,b,d = c.encode_sparse_array(nil, 0) return {tostring(a), b, d, c.encode({[1]=1,[100]=2})}",
        "local c = cjson.new() local a,b,d = c.encode_sparse_array('on', 3, 1) return {tostring(a), b, d, c.encode({[1]=1,[4]=4})}",
        "local c = cjson.new() return {tostring(c.encode_invalid_numbers()), tostring(c.encode_invalid_numbers(true)), c.encode({1/0, -1/0})}",
        "local c = cjson.new() return {c.encode_invalid_numbers('null'), c.encode({1/0, 0/0})}",
        "local c = cjson.new() c.encode_invalid_numbers(true) return c.encode(0/0)",
        "local c = cjson.new() return {tostring(c.decode_invalid_numbers()), tostring(c.decode_invalid_numbers(false)), select(2, pcall(c.decode, '0x10')), select(2, pcall(c.decode, '+1')), select(2, pcall(c.decode, '01')), select(2, pcall(c.decode, 'inf'))}",
        "local c = cjson.new() return {tostring(c.encode_keep_buffer()), tostring(c.encode_keep_buffer(false)), tostring(c.encode_keep_buffer('on'))}",
        "local c = cjson.new() return {c.encode_max_depth(), c.encode_max_depth(2), c.encode({{1}}), select(2, pcall(c.encode, {{{1}}}))}",
        "local c = cjson.new() return {c.decode_max_depth(), c.decode_max_depth(2), #c.decode('[[1]]'), select(2, pcall(c.decode, '[[[1]]]'))}",
        "local c = cjson.new() return c.encode_max_depth('12')",
        "local c = cjson.new() return c.encode_max_depth(7.9)",
        "local c1, c2 = cjson.new(), cjson.new() c1.encode_number_precision(2) return {c1.encode(1/3), c2.encode(1/3), cjson.encode(1/3)}",
        "return {pcall(cjson.new().encode_number_precision, 0)}",
        "local ok, e = pcall(function() local c = cjson.new() local v = c.encode_number_precision(15) return v end) return e",
        "local ok, e = pcall(function() local c = cjson.new() local v = c.encode_number_precision('x') return v end) return e",
        "local ok, e = pcall(function() local c = cjson.new() local v = c.encode_max_depth(1, 2) return v end) return e",
        "local ok, e = pcall(function() local c = cjson.new() local v = c.encode_sparse_array(1, 2, 3, 4) return v end) return e",
        "local ok, e = pcall(function() local c = cjson.new() local v = c.encode_sparse_array(true, -1) return v end) return e",
        "local ok, e = pcall(function() local c = cjson.new() local v = c.encode_sparse_array({}) return v end) return e",
        "local ok, e = pcall(function() local c = cjson.new() local v = c.encode_invalid_numbers('x') return v end) return e",
        "local ok, e = pcall(function() local c = cjson.new() local v = c.encode_invalid_numbers(5) return v end) return e",
        "local ok, e = pcall(function() local c = cjson.new() local v = c.decode_max_depth(0) return v end) return e");

    [Fact]
    public void CjsonDecodesAsRedis() => AssertSameAsRedis(
        "local t = cjson.decode('[1,1.5,\"x\",true,null,{\"a\":[]},-0,1e2,0x10,123456789012345678,false]') return {tostring(t[1]),tostring(t[2]),t[3],tostring(t[4]),tostring(t[5]),type(t[6].a),cjson.encode(t[7]),tostring(t[8]),tostring(t[9]),tostring(t[10]),tostring(t[11])}",
        "return {tostring(cjson.decode('inf')), tostring(cjson.decode('-Infinity')), tostring(cjson.decode('nan')), tostring(cjson.decode('-nan')), tostring(cjson.decode('nan(123)'))}",
        "return {cjson.decode('+5'), cjson.decode('0x1p4'), cjson.decode('1.'), cjson.decode(' \\t\\r\\n 7 '), cjson.decode('007'), cjson.decode('1E3'), cjson.decode('-0x1F'), tostring(cjson.decode('1e400')), tostring(cjson.decode('4e-400'))}",
        "return {tostring(cjson.decode('12345678901234')), tostring(cjson.decode('123456789012345')), tostring(cjson.decode('0.1')), tostring(cjson.decode('-2.5e-3'))}",
        "local s = cjson.decode('\"\\\\u00e9\\\\ud83d\\\\ude00\\\\u0041\\\\n\\\\t\\\\/\\\\\\\\\\\\\\\"\\\\b\\\\f\\\\r\"') return {s, #s}",
        "local s = cjson.decode('\"\\\\u0000x\"') return #s",
        "local s = cjson.decode('\"\\1\\255\\128\"') return {#s, s:byte(1), s:byte(2), s:byte(3)}",
        "return cjson.decode('{\"a\":1,\"a\":2}').a",
        "return cjson.decode(123)",
        "return cjson.decode('{\"k\":{\"k\":{\"k\":[1,[2,[3]]]}}}').k.k.k[2][2][1]",
        "return cjson.encode(cjson.decode('[1,2,3,{\"x\":[true,false,null]}]'))",
        "return cjson.encode(cjson.decode('{\"a\":{}}'))",
        "local t = cjson.decode('[]') return {type(t), #t, cjson.encode(t)}",
        "return tostring(cjson.decode('null') == cjson.null)");

    [Fact]
    public void CjsonErrorsAsRedis() => AssertSameAsRedis(
        "local ok, e = pcall(cjson.decode, '{') return e",
        "local ok, e = pcall(function() local v = cjson.decode('[1,2') return v end) return e",
        "local ok, e = pcall(function() local v = cjson.decode('[1,2') return v end) return e",
        "local ok, e = pcall(cjson.decode) return e",
        "local ok, e = pcall(function() local v = cjson.decode() return v end) return e",
        "local ok, e = pcall(function() local v = cjson.decode(1, 2) return v end) return e",
        "local ok, e = pcall(function() local v = cjson.decode({}) return v end) return e",
        "local ok, e = pcall(function() local v = cjson.encode() return v end) return e",
        "local ok, e = pcall(cjson.encode, function() end) return e",
        "local ok, e = pcall(function() local v = cjson.encode(function() end) return v end) return e",
        "local ok, e = pcall(function() local v = cjson.encode({[true]=1}) return v end) return e",
        "local ok, e = pcall(function() local v = cjson.encode({[1]=1,[100]=2}) return v end) return e",
        "local ok, e = pcall(function() local v = cjson.encode(1/0) return v end) return e",
        "local ok, e = pcall(function() local v = cjson.encode({a={0/0}}) return v end) return e",
        "local ok, e = pcall(function() local v = cjson.encode({[1/0]=1}) return v end) return e",
        "local ok, e = pcall(function() local v = cjson.encode({function() end}) return v end) return e",
        "local ok, e = pcall(function() local v = cjson.encode({x=string}) return v end) return e",
        "local t = {} t[1] = t local ok, e = pcall(cjson.encode, t) return e",
        "local t={} local c=t for i=1,1001 do c[1]={} c=c[1] end local ok, e = pcall(cjson.encode, t) return e",
        "local t={} local c=t for i=1,1000 do c[1]={} c=c[1] end local ok, e = pcall(cjson.encode, t) return {tostring(ok), #e}",
        "local ok, e = pcall(cjson.decode, string.rep('[', 1001) .. string.rep(']', 1001)) return e",
        "local ok, e = pcall(cjson.decode, string.rep('[', 1000) .. string.rep(']', 1000)) return tostring(ok)",
        "local ok, e = pcall(cjson.decode, string.rep('{\"a\":', 1001)) return e",
        "local ok, e = pcall(cjson.decode, string.rep('[', 100000)) return e",
        "local c = cjson.new() c.decode_max_depth(100000) local ok, e = pcall(c.decode, string.rep('[', 100000)) return e",
        "local c = cjson.new() c.decode_max_depth(100000) local ok, e = pcall(c.decode, string.rep('{\"a\":', 100000)) return e",
        "local c = cjson.new() c.decode_max_depth(100000) local ok, e = pcall(c.decode, string.rep('[{\"a\":', 100000)) return e",
        "local c = cjson.new() c.encode_max_depth(100000) local t={} local x=t for i=1,9000 do x[1]={} x=x[1] end local ok, e = pcall(c.encode, t) return e",
        "local c = cjson.new() c.encode_max_depth(100000) local t={} local x=t for i=1,9000 do x.k={} x=x.k end local ok, e = pcall(c.encode, t) return e",
        "local results = {} for _, s in ipairs({'[1,2]x', '\"\\\\u12\"', '\"\\\\q\"', '\"abc', 'tru', '-', '[1e]', ' ', '', '[1,]', '{\"a\" 1}', '{1:2}', '\"\\\\ud800\"', '\"\\\\udc00\"', '\"\\\\ud800\\\\u0041\"', '-0x', '[', '{\"a\":1,}', 'nul', '\"a\\0b\"', '1 2', '{\"a\":1 \"b\"}', ']', '}', ':', ',', '.5', '-.5', '- 1', '\\1', '[1,2,]', '[-]', 'Infinity', '-i', 'n', 'N', 'I', '\"\\\\u00e\"', '0x', '1e+', '[1.e5]'}) do local ok, e = pcall(cjson.decode, s) results[#results+1] = tostring(ok) .. ' ' .. (type(e) == 'table' and 'table' or tostring(e)) end return results",
        "local ok, e = pcall(cjson.decode, 'a\\0') return e",
        "local ok, e = pcall(cjson.decode, '\\0a') return e");

    // ---- cmsgpack ---------------------------------------------------------------------------

    [Fact]
    public void CmsgpackPacksAsRedis() => AssertSameAsRedis(
        Hex + "return hex(cmsgpack.pack(1,-1,-32,-33,127,128,255,256,65535,65536,2^32-1,2^32,-128,-129,-32768,-32769,-2^31,-2^31-1))",
        Hex + "return hex(cmsgpack.pack(1.5,0.1,2^63,-2^63,2^64,1/0,-1/0,0/0,-0.0,3.0,1e300,2^53+1))",
        Hex + "return hex(cmsgpack.pack(true,false,nil,'abc','',{},{1,2},{a=1},{[1]=1,[3]=3},{1,nil,3},string.rep('x',31),string.rep('x',32),string.rep('x',255),string.rep('x',256)))",
        Hex + "return hex(cmsgpack.pack(string.rep('y',65535))):sub(1,20)",
        Hex + "return hex(cmsgpack.pack(string.rep('y',65536))):sub(1,20)",
        Hex + "local t = {} for i=1,16 do t[i]=i end local u = {} for i=1,65536 do u[i]=0 end return {hex(cmsgpack.pack(t)):sub(1,10), hex(cmsgpack.pack(u)):sub(1,10)}",
        Hex + "local t = {} for i=1,16 do t['k'..i]=1 end return hex(cmsgpack.pack(t)):sub(1,6)",
        Hex + "local t={} local c=t for i=1,20 do c[1]={} c=c[1] end return hex(cmsgpack.pack(t))",
        Hex + "local t={} local c=t for i=1,20 do c.x={} c=c.x end return hex(cmsgpack.pack(t))",
        Hex + "local t = {} t[1] = t return hex(cmsgpack.pack(t))",
        Hex + "return hex(cmsgpack.pack({[1.5]=1}))",
        Hex + "return hex(cmsgpack.pack({[2^31]=1}))",
        Hex + "return hex(cmsgpack.pack({[-1]=1}))",
        Hex + "return hex(cmsgpack.pack({[true]='x'}))",
        Hex + "return hex(cmsgpack.pack(function() end))",
        Hex + "return hex(cmsgpack.pack('\\0\\1\\255'))");

    [Fact]
    public void CmsgpackUnpacksAsRedis() => AssertSameAsRedis(
        "local t = {cmsgpack.unpack(cmsgpack.pack(1.5, 2^53, 'x', {1,{2}}, {a={b=1}}))} return {tostring(t[1]), tostring(t[2]), t[3], t[4][2][1], t[5].a.b}",
        "return {tostring(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255')), tostring(cmsgpack.unpack('\\211\\127\\255\\255\\255\\255\\255\\255\\255')), tostring(cmsgpack.unpack('\\202\\63\\192\\0\\0')), tostring(cmsgpack.unpack('\\203\\63\\241\\0\\0\\0\\0\\0\\0'))}",
        "local a,b,c = cmsgpack.unpack_one(cmsgpack.pack(1,2)) local d,e = cmsgpack.unpack_one(cmsgpack.pack(1,2), a) local f = {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2)} return {a,b,tostring(c),d,e,f[1],f[2],f[3],tostring(f[4])}",
        "local t = {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0)} return t",
        "local t = {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0, 1)} return t",
        "local t = {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 5, 2)} return t",
        "return {select('#', cmsgpack.unpack('')), select('#', cmsgpack.unpack_one('')), cmsgpack.unpack_one('')}",
        "return {cmsgpack.unpack(5)}",
        "local t = cmsgpack.unpack('\\147\\1\\192\\3') return {#t, t[1], tostring(t[2]), t[3]}",
        "local t = cmsgpack.unpack('\\130\\161a\\1\\161b\\192') return {t.a, tostring(t.b)}",
        "local t = cmsgpack.unpack('\\129\\202\\63\\128\\0\\0\\161x') return t[1]",
        "local t = cmsgpack.unpack('\\217\\3abc') return t",
        "local t = cmsgpack.unpack('\\218\\0\\3abc') return t",
        "local t = cmsgpack.unpack('\\219\\0\\0\\0\\3abc') return t",
        "local t = cmsgpack.unpack('\\220\\0\\2\\1\\2') return t",
        "local t = cmsgpack.unpack('\\221\\0\\0\\0\\2\\1\\2') return t",
        "local t = cmsgpack.unpack('\\222\\0\\1\\1\\2') return t[1]",
        "local t = cmsgpack.unpack('\\223\\0\\0\\0\\1\\1\\2') return t[1]",
        "return {cmsgpack.unpack('\\204\\200\\205\\1\\0\\206\\0\\1\\0\\0\\208\\128\\209\\128\\0\\210\\128\\0\\0\\0\\224\\255')}",
        "local s = cmsgpack.pack({1,2,3}, 'x', {k='v'}) local t = {cmsgpack.unpack(s)} return {#t, t[1][3], t[2], t[3].k}",
        "return {select('#', cmsgpack.unpack(string.rep('\\1', 7990)))}",
        "local ok, n = pcall(function() return select('#', cmsgpack.unpack(string.rep('\\145', 3990)..'\\1')) end) return {tostring(ok), n}",
        "local t = cmsgpack.unpack(cmsgpack.pack({'\\0\\1\\2', {'\\255'}})) return {#t[1], t[1]:byte(3), t[2][1]:byte(1)}");

    [Fact]
    public void CmsgpackErrorsAsRedis() => AssertSameAsRedis(
        "local ok, e = pcall(function() local v = cmsgpack.pack() return v end) return e",
        "local ok, e = pcall(cmsgpack.pack) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack() return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack({}) return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack('\\205') return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack('\\193') return v end) return e",
        "local ok, e = pcall(cmsgpack.unpack, '\\196\\1a') return e",
        "local ok, e = pcall(cmsgpack.unpack, '\\212\\1\\1') return e",
        "local ok, e = pcall(cmsgpack.unpack, '\\147\\1\\193') return e",
        "local ok, e = pcall(cmsgpack.unpack, '\\221\\255\\255\\255\\255\\1') return e",
        "local ok, e = pcall(cmsgpack.unpack, '\\219\\255\\255\\255\\255abc') return e",
        "local ok, e = pcall(cmsgpack.unpack, '\\129\\192\\1') return e",
        "local ok, e = pcall(cmsgpack.unpack, '\\129\\203\\127\\248\\0\\0\\0\\0\\0\\0\\1') return e",
        "local ok, e = pcall(cmsgpack.unpack, '\\129\\1') return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack_one('abc', -1) return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack_one('abc', 10) return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack_one('abc', 'x') return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack_limit('abc') return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack_limit('abc', -2) return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack_limit(nil, 1) return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack(string.rep('\\145', 9000)..'\\1') return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack(string.rep('\\1', 9000)) return v end) return e",
        "local ok, e = pcall(function() local v = cmsgpack.unpack(string.rep('\\129\\1', 4010)..'\\1') return v end) return e",
        "local results = {} for n = 3990, 4010 do local ok, e = pcall(cmsgpack.unpack, string.rep('\\145', n)..'\\1') results[#results+1] = n .. ' ' .. tostring(ok) .. ' ' .. (ok and type(e) or e) end return results",
        "local results = {} for n = 3990, 4010 do local ok, e = pcall(cmsgpack.unpack, string.rep('\\129\\1', n)..'\\1') results[#results+1] = n .. ' ' .. tostring(ok) .. ' ' .. (ok and type(e) or e) end return results",
        "local results = {} for n = 7995, 8002 do local ok, e = pcall(function() return select('#', cmsgpack.unpack(string.rep('\\1', n))) end) results[#results+1] = n .. ' ' .. tostring(ok) .. ' ' .. (ok and type(e) or e) end return results",
        "local results = {} for n = 7995, 8002 do local ok, e = pcall(function() return select('#', cmsgpack.unpack_limit(string.rep('\\1', n), 9000)) end) results[#results+1] = n .. ' ' .. tostring(ok) .. ' ' .. (ok and type(e) or e) end return results");

    // ---- bit --------------------------------------------------------------------------------

    [Fact]
    public void BitAsRedis() => AssertSameAsRedis(
        "local r={} for _,v in ipairs({bit.tobit(2^32+5), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-1.5), bit.tobit(-2.5), bit.tobit('12'), bit.tobit('0x10'), bit.tobit(2^53+3), bit.tobit(1e300), bit.tobit(0/0), bit.tobit(1/0), bit.tobit(-2^31-1), bit.tobit(2^63), bit.tobit(-2^63), bit.tobit(2^31), bit.tobit(0xffffffff)}) do r[#r+1]=tostring(v) end return r",
        "return {bit.tohex(-1), bit.tohex(255, -4), bit.tohex(255, 12), bit.tohex(1, -2147483648), bit.tohex(1, 0), bit.tohex(0xabcdef, 3), bit.tohex(0xabcdef, -3), bit.tohex(2^32+10), bit.tohex(7, 2^32+2)}",
        "local r={} for _,v in ipairs({bit.bnot(0), bit.bnot(-1), bit.bnot(2^40), bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4, 2^33), bit.bxor(0xff, 0x0f), bit.band(-1), bit.bor(5)}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({bit.lshift(1,31), bit.lshift(1,32), bit.lshift(1,-1), bit.lshift(-1, 4), bit.rshift(-1, 28), bit.rshift(-1, 0), bit.rshift(256, 33), bit.arshift(-256, 4), bit.arshift(-1, 31), bit.arshift(2^31, 1), bit.arshift(5, 0)}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({bit.rol(0x12345678, 36), bit.rol(0x12345678, 0), bit.rol(-1, 7), bit.ror(0x12345678, 4), bit.ror(0x12345678, 32), bit.ror(1, 1), bit.bswap(0x12345678), bit.bswap(-1), bit.bswap(0x80)}) do r[#r+1]=tostring(v) end return r",
        "local ok, e = pcall(function() local v = bit.tobit(nil) return v end) return e",
        "local ok, e = pcall(function() local v = bit.tobit(nil) return v end) return e",
        "local ok, e = pcall(function() local v = bit.tobit('abc') return v end) return e",
        "local ok, e = pcall(function() local v = bit.tobit() return v end) return e",
        "local ok, e = pcall(function() local v = bit.band(1, {}) return v end) return e",
        "local ok, e = pcall(function() local v = bit.band(1, {}, nil) return v end) return e",
        "local ok, e = pcall(function() local v = bit.band() return v end) return e",
        "local ok, e = pcall(function() local v = bit.lshift(1) return v end) return e",
        "local ok, e = pcall(function() local v = bit.tohex(1, nil) return v end) return e",
        "local ok, e = pcall(bit.bswap, true) return e");

    // ---- struct -----------------------------------------------------------------------------

    [Fact]
    public void StructPacksAsRedis() => AssertSameAsRedis(
        Hex + "return {hex(struct.pack('>i', 1)), hex(struct.pack('<i2', -2)), hex(struct.pack('bBhHlLT', -1, 255, -2, 65535, -3, 4, 5)), hex(struct.pack('>I3', 0x123456)), hex(struct.pack('fd', 1.5, 0.1))}",
        Hex + "return {hex(struct.pack('s', 'ab')), hex(struct.pack('c0', 'xyz')), hex(struct.pack('c2', 'xyz')), hex(struct.pack('c', 'xyz')), hex(struct.pack('!4 b i', 1, 2)), hex(struct.pack('!b d', 1, 2)), hex(struct.pack('x b', 7))}",
        Hex + "return {hex(struct.pack('>i16', -1)), hex(struct.pack('<i16', -1)), hex(struct.pack('i', 2^40)), hex(struct.pack('I', -1)), hex(struct.pack('b', 300)), hex(struct.pack('i', 1.9)), hex(struct.pack('i', -1.9)), hex(struct.pack('<l', 2^63)), hex(struct.pack('<L', 2^64 - 2^11)), hex(struct.pack('>l', -2^63))}",
        Hex + "return {hex(struct.pack('i', '12')), hex(struct.pack('s', 12)), hex(struct.pack('>f<d', 1/0, -1/math.huge)), hex(struct.pack('!2 b i3', 1, 2)), hex(struct.pack('!8 b h i l', 1, 2, 3, 4)), hex(struct.pack('!', 1)), hex(struct.pack('i0', 5)), hex(struct.pack(' < > '))}",
        Hex + "return {hex(struct.pack('>I', 2^53 + 1)), hex(struct.pack('>l', 9007199254740993))}",
        Hex + "return {hex(struct.pack('b', 0/0)), hex(struct.pack('>L', 2^64)), hex(struct.pack('>L', 1e30)), hex(struct.pack('>l', -1e30)), hex(struct.pack('>l', -2^63)), hex(struct.pack('>L', 2^63+2^11)), hex(struct.pack('>l', 1/0)), hex(struct.pack('>l', -1/0))}",
        "return {struct.size('i'), struct.size('!8 b d'), struct.size('bhlT'), struct.size('c10'), struct.size('!16 b d'), struct.size('!2 b i3'), struct.size('y'), struct.size(''), struct.size('c2147483647c2')}");

    [Fact]
    public void StructUnpacksAsRedis() => AssertSameAsRedis(
        "local r={} for _,v in ipairs({struct.unpack('>i', '\\0\\0\\0\\1')}) do r[#r+1]=tostring(v) end for _,v in ipairs({struct.unpack('b B h H', '\\255\\255\\254\\255\\255\\255')}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({struct.unpack('B c0 s', '\\3abcxy\\0')}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({struct.unpack('>L', '\\255\\255\\255\\255\\255\\255\\255\\255')}) do r[#r+1]=tostring(v) end for _,v in ipairs({struct.unpack('>l', '\\255\\255\\255\\255\\255\\255\\255\\254')}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({struct.unpack('i', '\\1\\0\\0\\0\\2\\0\\0\\0', 5)}) do r[#r+1]=tostring(v) end for _,v in ipairs({struct.unpack('!4 b i', struct.pack('!4 b i', 1, 2))}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({struct.unpack('<f>d', struct.pack('<f>d', 0.1, 0.1))}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({struct.unpack('>i16 <i16 I9', string.rep('\\255', 16) .. string.rep('\\255', 16) .. string.rep('\\1', 9))}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({struct.unpack('>I8', '\\0\\32\\0\\0\\0\\0\\0\\1')}) do r[#r+1]=tostring(v) end for _,v in ipairs({struct.unpack('>i6', '\\128\\0\\0\\0\\0\\0')}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({struct.unpack('c2 c0', '12abcdefghijklmnop')}) do r[#r+1]=tostring(v) end return r",
        "local r={} for _,v in ipairs({struct.unpack('x x b', '\\1\\2\\3')}) do r[#r+1]=tostring(v) end return r",
        "return {struct.unpack('', 'abc')}",
        "return {struct.unpack('', 'abc', -3)}",
        "return {struct.unpack('b', 12)}");

    [Fact]
    public void StructErrorsAsRedis() => AssertSameAsRedis(
        "local results = {} for _, f in ipairs({" +
        "function() local v = struct.size('s') return v end, function() local v = struct.size('c0') return v end, function() local v = struct.pack('y') return v end," +
        "function() local v = struct.pack('i33', 1) return v end, function() local v = struct.size('i33x') return v end, function() local v = struct.pack('!3 i', 1) return v end," +
        "function() local v = struct.unpack('i', 'ab') return v end, function() local v = struct.unpack('s', 'ab') return v end, function() local v = struct.unpack('c0', 'ab') return v end," +
        "function() local v = struct.pack('c3', 'ab') return v end, function() local v = struct.pack('i') return v end, function() local v = struct.pack('i', 'x') return v end," +
        "function() local v = struct.pack() return v end, function() local v = struct.unpack('i') return v end, function() local v = struct.pack('s', {}) return v end," +
        "function() local v = struct.unpack('b', 'a', 'x') return v end, function() local v = struct.unpack('i', 'abcd', 0) return v end, function() local v = struct.unpack('i', 'abcd', -3) return v end," +
        "function() local v = struct.unpack('!5b', 'a') return v end, function() local v = struct.unpack('c', '') return v end, function() local v = struct.size('c99999999999') return v end," +
        "function() local v = struct.pack(5) return v end, function() local v = struct.unpack('c0', '12abcdefghijklmn') return v end, function() local v = struct.pack({}) return v end," +
        "function() local v = struct.unpack('i', 'abc', 2) return v end, function() local v = struct.unpack('bc0', '\\5abc') return v end, function() local v = struct.size('!0') return v end," +
        "function() local v = struct.unpack('i40', '') return v end, function() local v = struct.pack('d', nil) return v end, function() local v = struct.pack('b', true) return v end" +
        "}) do local ok, e = pcall(f) results[#results+1] = tostring(ok) .. ' ' .. tostring(e) end return results",
        "local ok, e = pcall(struct.pack, 'y') return e",
        "local ok, e = pcall(struct.size) return e");

    [Fact]
    public void StructRoundTripsEveryFormat() => AssertSameAsRedis(
        "local r = {} for _, f in ipairs({'b','B','h','H','l','L','T','i','I','i1','I2','i3','I5','i7','I8','<i4','>I4','!4 b i','!8 b d'}) do " +
        "for _, v in ipairs({0, 1, -1, 127, -128, 255, 65535, -32768, 2147483647, -2147483648, 4294967295, 1099511627779, -1099511627779}) do " +
        "local ok, s = pcall(struct.pack, f, v, v) if ok then local a = {struct.unpack(f, s)} r[#r+1] = f .. ' ' .. tostring(v) .. ' ' .. tostring(a[1]) .. ' ' .. tostring(a[#a]) else r[#r+1] = s end end end return r");

    // ---- generated cases: the same deterministic generator runs in both Lua versions -------------

    /// <summary>
    /// Park-Miller: every product stays below 2^53, so 5.1's doubles and 5.4's integers produce the
    /// same sequence; values derived with / and ^ are the same IEEE operations in both.
    /// </summary>
    private const string Generator = "local x = 4242 local function nextint() x = (x * 16807) % 2147483647 return x end ";

    [Fact]
    public void CjsonFormatsGeneratedNumbersAsRedis() => AssertSameAsRedis(
        Generator + "local t = {} for i = 1, 600 do local v = nextint() / 2147483647 * 10 ^ ((i % 64) - 32) if i % 2 == 1 then v = -v end t[i] = v end return cjson.encode(t)",
        Generator + "local t = {} for i = 1, 600 do t[i] = (nextint() % 100000) * 10 ^ (i % 22) + (i % 4) * 0.25 end return cjson.encode(t)",
        Generator + "local t = {} for i = 1, 200 do t[i] = (nextint() % 2000000) + 0.5 end return cjson.encode(t)",
        Generator + "local r = {} for p = 1, 14 do local c = cjson.new() c.encode_number_precision(p) local t = {} for i = 1, 60 do t[i] = nextint() / 65536 * 10 ^ (i % 9 - 4) end t[61] = 0.5 t[62] = 2.5 t[63] = 0.125 t[64] = 1e15 + 0.5 r[p] = c.encode(t) end return r",
        Hex + "local s = '' for i = 0, 255 do s = s .. string.char(i) end return {hex(cjson.encode(s)), tostring(cjson.decode(cjson.encode(s)) == s)}",
        Generator + "local t = {} for i = 1, 300 do t[i] = cjson.decode(tostring(nextint() % 1000000 - 500000) .. 'e' .. tostring(i % 30 - 15)) end return cjson.encode(t)");

    [Fact]
    public void CmsgpackPacksGeneratedValuesAsRedis() => AssertSameAsRedis(
        Hex + Generator + "local function value(depth) local k = nextint() % 9 " +
        "if k == 0 then return nextint() % 200 - 100 elseif k == 1 then return (nextint() % 70000) * (nextint() % 70000) - 2^31 " +
        "elseif k == 2 then return nextint() / 1024 elseif k == 3 then return nextint() / 3 * 10 ^ (nextint() % 40 - 20) " +
        "elseif k == 4 then return string.rep('s', nextint() % 300) elseif k == 5 then return nextint() % 2 == 0 " +
        "elseif k == 6 and depth < 5 then local t = {} for i = 1, nextint() % 20 do t[i] = value(depth + 1) end return t " +
        "elseif k == 7 and depth < 5 then return {key = value(depth + 1)} else return (nextint() % 65536) * 65536 * 4096 end end " +
        "local r = {} for i = 1, 150 do local v = value(0) local packed = cmsgpack.pack(v) r[i] = hex(packed) .. ' ' .. tostring(cmsgpack.pack(cmsgpack.unpack(packed)) == packed) end return r");

    [Fact]
    public void BitComputesGeneratedValuesAsRedis() => AssertSameAsRedis(
        Generator + "local r = {} for i = 1, 300 do local a = nextint() * (i % 3 - 1) + (i % 5) * 0.25 local b = nextint() % 70 - 5 local c = (nextint() - 1073741823) * 4096 " +
        "r[i] = table.concat({bit.tobit(a), bit.tobit(c), bit.bnot(a), bit.band(a, c), bit.bor(a, b, c), bit.bxor(a, c), bit.lshift(a, b), bit.rshift(c, b), bit.arshift(c, b), bit.rol(a, b), bit.ror(c, b), bit.bswap(a), bit.tohex(a), bit.tohex(c, b % 20 - 10)}, ' ') end return r");

    [Fact]
    public void StructHandlesGeneratedValuesAsRedis() => AssertSameAsRedis(
        Hex + Generator + "local formats = {'b','B','h','H','l','L','T','i','I','i1','I3','i5','I7','i8','i12','<i2','>I6','!4 b h i','!8 b d','f','d','>f','<d','x b x','!2 h b i3'} " +
        "local r = {} for i = 1, 250 do local f = formats[i % #formats + 1] local v = (nextint() - 1073741823) * (nextint() % 4096) + (i % 3) * 0.5 " +
        "local ok, s = pcall(struct.pack, f, v, v, v) if ok then local u = {struct.unpack(f, s)} for k = 1, #u do u[k] = tostring(u[k]) end r[i] = f .. ' ' .. hex(s) .. ' ' .. table.concat(u, ' ') else r[i] = f .. ' ' .. s end end return r",
        Generator + "local formats = {'>l','<L','i3','I5','>i7','<I8','f','>d','b B','hH','!8 b d','c3 B','s'} " +
        "local r = {} for i = 1, 200 do local f = formats[i % #formats + 1] local bytes = {} for k = 1, 12 do bytes[k] = string.char(nextint() % 256) end if f == 's' then bytes[7] = '\\0' end " +
        "local ok, a, b, c = pcall(struct.unpack, f, table.concat(bytes)) r[i] = f .. ' ' .. tostring(ok) .. ' ' .. tostring(a) .. ' ' .. tostring(b) .. ' ' .. tostring(c) end return r");

    // ---- robustness -------------------------------------------------------------------------

    /// <summary>
    /// cjson.decode and cmsgpack.unpack fed random and truncated bytes (fixed seed): the process
    /// must survive every case, and what each call returns or raises must match redis-server.
    /// </summary>
    [Fact]
    public void RandomAndTruncatedInputNeverCrashesAndMatchesRedis()
    {
        var random = new Random(20240611);
        var inputs = new List<byte[]>();
        byte[][] seeds =
        [
            Encoding.UTF8.GetBytes("{\"a\":[1,2.5,-3e4,\"x\\u00e9\\n\",true,false,null,{\"b\":{}}],\"c\":\"\\ud83d\\ude00\"}"),
            Encoding.UTF8.GetBytes("[0x1F, +1, inf, -nan, 01, 1., \"\\/\"]"),
            Convert.FromHexString("93cd0100a3616263820102a17892c0c3cb3fb999999999999aca3fc00000d3ffffffff7fffffffcfffffffffffffffff"),
            Convert.FromHexString("dc0003d9036162630183a161c2a162c3a163dd00000001de0001a100a100"),
        ];
        const string Json = "local ok, v = pcall(cjson.decode, ARGV[1]) if not ok then return {'err', v} end local n = 0 if type(v) == 'table' then for _ in pairs(v) do n = n + 1 end end return {'ok', type(v), n, type(v) == 'string' and v or ''}";
        const string Msgpack = "local r = {pcall(cmsgpack.unpack, ARGV[1])} if r[1] then local t = {'ok', #r - 1} for i = 2, #r do t[#t+1] = type(r[i]) end return t end return {'err', r[2]}";
        foreach (var seed in seeds)
        {
            for (int cut = 0; cut <= seed.Length; cut++)
                inputs.Add(seed[..cut]);
            for (int i = 0; i < 300; i++)
            {
                var mutated = (byte[])seed.Clone();
                for (int k = random.Next(1, 4); k > 0; k--)
                    mutated[random.Next(mutated.Length)] = (byte)random.Next(256);
                inputs.Add(mutated[..random.Next(mutated.Length + 1)]);
            }
        }
        const string Alphabet = "[]{}:,\"\\u0123456789abcdefx+-.eEinfatrulsN \t\n";
        for (int i = 0; i < 1500; i++)
        {
            var bytes = new byte[random.Next(0, 24)];
            if (i % 2 == 0)
                random.NextBytes(bytes);
            else
                for (int k = 0; k < bytes.Length; k++)
                    bytes[k] = (byte)Alphabet[random.Next(Alphabet.Length)];
            inputs.Add(bytes);
        }

        using var lua = NewState();
        var differences = new StringBuilder();
        int compared = 0;
        foreach (var input in inputs)
        {
            foreach (var script in new[] { Json, Msgpack })
            {
                string expected = Render(_redis.Eval(script, input));
                string actual = RunHere(lua, script, input);
                compared++;
                if (expected != actual && differences.Length < 4000)
                    differences.Append($"\n{(script == Json ? "cjson" : "cmsgpack")} {Convert.ToHexString(input)}\n  redis: {expected}\n  here:  {actual}\n");
            }
        }
        Assert.True(compared > 4000, $"only {compared} cases");
        Assert.True(differences.Length == 0, "different from redis-server:" + differences);
    }
}
