using Diagnostics.ClientLibrary.Tests.Targets;
using StackExchange.Redis;

namespace Diagnostics.ClientLibrary.Tests;

/// <summary>
/// Lua as applications drive it through StackExchange.Redis: ScriptEvaluate with keys and values,
/// LuaScript's @parameters, a loaded script run by its sha (and the library's own recovery when
/// the server forgot it), every reply shape, errors as Redis words them, and FCALL after FUNCTION
/// LOAD. Each body runs against this server and against redis-server.
/// </summary>
[Collection(BothServersCollection.Name)]
public sealed class ScriptingTests(BothServers servers)
{
    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void ScriptEvaluateTakesKeysAndValues(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey key = "script:eval:counter";
        db.KeyDelete(key);

        var result = db.ScriptEvaluate(
            "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCRBY', KEYS[1], ARGV[2])",
            [key], ["40", "2"]);

        Assert.Equal(ResultType.Integer, result.Resp2Type);
        Assert.Equal(42, (long)result);
        Assert.Equal("42", db.StringGet(key));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void ScriptsReturnArraysIntegersStatusAndNil(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();

        // Lua's table stops at its first nil, as Redis converts it; 3.7 is truncated to 3.
        var array = db.ScriptEvaluate("return {1, 'two', 3.7, {'nested'}, nil, 'lost'}");
        Assert.Equal(ResultType.Array, array.Resp2Type);
        var items = (RedisResult[])array!;
        Assert.Equal(4, items.Length);
        Assert.Equal(1, (long)items[0]);
        Assert.Equal("two", (string?)items[1]);
        Assert.Equal(ResultType.Integer, items[2].Resp2Type);
        Assert.Equal(3, (long)items[2]);
        Assert.Equal(["nested"], (string[])items[3]!);

        var nil = db.ScriptEvaluate("return nil");
        Assert.True(nil.IsNull);

        var status = db.ScriptEvaluate("return redis.status_reply('FINE')");
        Assert.Equal(ResultType.SimpleString, status.Resp2Type);
        Assert.Equal("FINE", (string?)status);

        Assert.True((bool)db.ScriptEvaluate("return true"));
        Assert.True(db.ScriptEvaluate("return false").IsNull);
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void ScriptErrorsReachTheApplicationInRedisWords(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey key = "script:errors:text";
        db.StringSet(key, "abc");

        var custom = Assert.Throws<RedisServerException>(() => db.ScriptEvaluate("return redis.error_reply('MYERR boom')"));
        Assert.Equal("MYERR boom", custom.Message);

        const string incr = "return redis.call('INCR', KEYS[1])";
        var fromCall = Assert.Throws<RedisServerException>(() => db.ScriptEvaluate(incr, [key]));
        Assert.Equal($"ERR value is not an integer or out of range script: {Sha1(incr)}, on @user_script:1.", fromCall.Message);

        const string raise = "error('plain')";
        var raised = Assert.Throws<RedisServerException>(() => db.ScriptEvaluate(raise));
        Assert.Equal($"ERR user_script:1: plain script: {Sha1(raise)}, on @user_script:1.", raised.Message);

        // pcall hands the error to the script as a table, which the script can return as it is.
        var caught = Assert.Throws<RedisServerException>(() => db.ScriptEvaluate("return redis.pcall('INCR', KEYS[1])", [key]));
        Assert.Equal("ERR value is not an integer or out of range", caught.Message);
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void PreparedScriptMapsParametersToKeysAndArguments(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey key = "script:prepared:hash";
        db.KeyDelete(key);
        var script = LuaScript.Prepare(
            "redis.call('HSET', @key, @field, @value); return {redis.call('HGET', @key, @field), #KEYS, KEYS[1]}");

        var result = (RedisResult[])script.Evaluate(db, new { key, field = "colour", value = "teal" })!;

        Assert.Equal("teal", (string?)result[0]);
        // @key is a RedisKey: it went in KEYS (a cluster client routes by it); the strings did not.
        Assert.Equal(1, (long)result[1]);
        Assert.Equal((string?)key, (string?)result[2]);
        Assert.Equal("teal", db.HashGet(key, "colour"));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void LoadedScriptRunsByShaAndSurvivesScriptFlush(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        var server = connection.GetServer(connection.GetEndPoints()[0]);
        RedisKey key = "script:loaded:counter";
        db.KeyDelete(key);
        var script = LuaScript.Prepare("return redis.call('INCRBY', @key, @step)");

        var loaded = script.Load(server);
        Assert.Equal(Sha1(script.ExecutableScript), Convert.ToHexStringLower(loaded.Hash));
        Assert.True(server.ScriptExists(loaded.Hash));
        Assert.Equal(5, (long)loaded.Evaluate(db, new { key, step = 5 }));

        // The server forgets every script; the library sends EVALSHA, sees NOSCRIPT, and sends the
        // script's body: the server counts the one NOSCRIPT reply and the EVAL that followed.
        server.ScriptFlush();
        Assert.False(server.ScriptExists(loaded.Hash));
        long noScriptBefore = StatCount(server, "errorstats", "errorstat_NOSCRIPT", "count");
        long evalBefore = StatCount(server, "commandstats", "cmdstat_eval", "calls");
        Assert.Equal(12, (long)loaded.Evaluate(db, new { key, step = 7 }));
        Assert.Equal(noScriptBefore + 1, StatCount(server, "errorstats", "errorstat_NOSCRIPT", "count"));
        Assert.Equal(evalBefore + 1, StatCount(server, "commandstats", "cmdstat_eval", "calls"));
        Assert.Equal(19, (long)script.Evaluate(db, new { key, step = 7 }));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void EvalShaOfAnUnknownScriptIsNoScript(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();

        var error = Assert.Throws<RedisServerException>(() =>
            db.Execute("EVALSHA", "0000000000000000000000000000000000000000", 0));

        Assert.Equal("NOSCRIPT No matching script. Please use EVAL.", error.Message);
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void FunctionLoadThenFcallThroughExecute(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey key = "function:fcall:list";
        db.KeyDelete(key);
        const string library = """
            #!lua name=clientlib
            redis.register_function('clientlib_push', function(keys, args)
                return redis.call('RPUSH', keys[1], unpack(args))
            end)
            redis.register_function{function_name='clientlib_len', callback=function(keys)
                return redis.call('LLEN', keys[1])
            end, flags={'no-writes'}}
            """;

        Assert.Equal("clientlib", (string?)db.Execute("FUNCTION", "LOAD", "REPLACE", library));

        Assert.Equal(3, (long)db.Execute("FCALL", "clientlib_push", 1, key, "a", "b", "c"));
        Assert.Equal(3, (long)db.Execute("FCALL_RO", "clientlib_len", 1, key));
        Assert.Equal(["a", "b", "c"], db.ListRange(key).Texts());

        var missing = Assert.Throws<RedisServerException>(() => db.Execute("FCALL", "clientlib_nope", 0));
        Assert.Equal("ERR Function not found", missing.Message);
        var readOnly = Assert.Throws<RedisServerException>(() => db.Execute("FCALL_RO", "clientlib_push", 1, key, "d"));
        Assert.Equal("ERR Can not execute a script with write flag using *_ro command.", readOnly.Message);
        Assert.Equal("OK", (string?)db.Execute("FUNCTION", "DELETE", "clientlib"));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void ReadOnlyScriptsReadButMayNotWrite(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey key = "script:readonly:key";
        db.StringSet(key, "seen");

        Assert.Equal("seen", (string?)db.ScriptEvaluateReadOnly("return redis.call('GET', KEYS[1])", [key]));

        const string write = "return redis.call('SET', KEYS[1], 'x')";
        var error = Assert.Throws<RedisServerException>(() => db.ScriptEvaluateReadOnly(write, [key]));
        Assert.Equal($"ERR Write commands are not allowed from read-only scripts. script: {Sha1(write)}, on @user_script:1.", error.Message);
        Assert.Equal("seen", db.StringGet(key));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void PreparedScriptRunsUnderAKeyPrefix(Target target)
    {
        // withKeyPrefix is how multi-tenant applications share one server: only keys get it.
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey key = "counter";
        db.KeyDelete("tenant-a:counter");
        var script = LuaScript.Prepare("return {redis.call('INCRBY', @key, @step), @step}");

        var result = (RedisResult[])script.Evaluate(db, new { key, step = 4 }, withKeyPrefix: "tenant-a:")!;

        Assert.Equal(4, (long)result[0]);
        Assert.Equal("4", (string?)result[1]);
        Assert.Equal("4", db.StringGet("tenant-a:counter"));
        Assert.False(db.KeyExists(key));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void Resp3ScriptRepliesReachTheLibraryAsMapsAndDoubles(Target target)
    {
        using var connection = servers.Connect(target, RedisProtocol.Resp3);
        var db = connection.GetDatabase();
        RedisKey hash = "script:resp3:hash";
        db.KeyDelete(hash);
        db.HashSet(hash, "a", "1");

        // Under setresp(3) redis.call gives the script a map, which goes back to a RESP3 client as one.
        var map = db.ScriptEvaluate("redis.setresp(3); return redis.call('HGETALL', KEYS[1])", [hash]);
        Assert.Equal(ResultType.Map, map.Resp3Type);
        var entries = map.ToDictionary();
        Assert.Equal(["a"], entries.Keys.ToArray());
        Assert.Equal("1", (string?)entries["a"]);

        var number = db.ScriptEvaluate("return {double=3.5}");
        Assert.Equal(ResultType.Double, number.Resp3Type);
        Assert.Equal(3.5, (double)number);
    }

    /// <summary>One number of an INFO line such as "errorstat_NOSCRIPT:count=2" (0 when the line is absent).</summary>
    private static long StatCount(IServer server, string section, string line, string field)
    {
        foreach (var group in server.Info(section))
            foreach (var pair in group)
                if (pair.Key == line)
                    foreach (var part in pair.Value.Split(','))
                        if (part.StartsWith(field + "=", StringComparison.Ordinal))
                            return long.Parse(part.AsSpan(field.Length + 1));
        return 0;
    }

    private static string Sha1(string script) =>
        Convert.ToHexStringLower(System.Security.Cryptography.SHA1.HashData(System.Text.Encoding.UTF8.GetBytes(script)));
}
