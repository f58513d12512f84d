using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Scripting;

/// <summary>
/// FUNCTION and FCALL side by side with the real redis-server (7.0) in RESP2 and RESP3, every reply
/// compared: loading libraries (both register_function forms, flags, descriptions) and every way a
/// load fails, calling functions (keys and arguments, read-only calls, errors with the function's
/// line), listing, deleting, flushing; and FUNCTION DUMP payloads restored across the two servers.
/// </summary>
public sealed class FunctionConformanceTests
{
    private const string Library = "#!lua name=mylib\n" +
        "redis.register_function('myfunc', function(keys, args) return {keys[1], args[1], #keys, #args} end)\n" +
        "redis.register_function{function_name='ro', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}\n" +
        "redis.register_function('writer', function(keys, args) return redis.call('set', keys[1], args[1]) end)\n" +
        "redis.register_function('fails', function() return redis.call('incr', 'str') end)\n" +
        "redis.register_function('raises', function()\n  error('boom')\nend)";

    private static string[] Load(string code, bool replace = false) => replace ? ["FUNCTION", "LOAD", "REPLACE", code] : ["FUNCTION", "LOAD", code];
    private static string[] Body(string body) => Load("#!lua name=t\n" + body, replace: true);

    public static IEnumerable<object[]> Groups => Cases.Keys.Select(name => new object[] { name });

    [Theory]
    [MemberData(nameof(Groups))]
    public void RepliesMatchRedis(string group) => SideBySideReplies.AssertSame(Cases[group], c =>
    {
        RespAssert.Ok(c.Call("FLUSHALL"));
        RespAssert.Ok(c.Call("FUNCTION", "FLUSH"));
        RespAssert.Ok(c.Call("SET", "str", "text"));
    }, (_, reply) => Render(reply));

    /// <summary>The reply as text, a library's functions sorted by name: Redis lists them in its hash table's order.</summary>
    private static string Render(RespValue reply)
    {
        if (reply.Items is null)
            return reply.ToString();
        var items = reply.Items.Select(Render).ToList();
        if (items.Count > 0 && reply.Items.All(item => item.Items is { Count: > 1 } fields && fields[0].Text == "name"))
            items.Sort(StringComparer.Ordinal);
        return $"{reply.Kind}[{string.Join(", ", items)}]";
    }

    private static readonly Dictionary<string, string[][]> Cases = new()
    {
        ["calls"] =
        [
            Load(Library), ["FCALL", "myfunc", "1", "k", "a"], ["FCALL", "myfunc", "0"], ["FCALL_RO", "myfunc", "1", "k", "a"],
            ["FCALL", "writer", "1", "k", "v"], ["FCALL_RO", "ro", "1", "k"], ["FCALL", "ro", "1", "k"], ["FCALL_RO", "writer", "1", "k", "v"],
            ["FCALL", "fails", "0"], ["FCALL", "raises", "0"], ["FCALL", "nosuch", "0"], ["FCALL", "myfunc", "x"],
            ["FCALL", "myfunc", "-1"], ["FCALL", "myfunc", "2", "a"], ["FCALL", "MYFUNC", "0"],
            ["FUNCTION", "LIST"], ["FUNCTION", "LIST", "WITHCODE"], ["FUNCTION", "LIST", "LIBRARYNAME", "my*"],
            ["FUNCTION", "LIST", "LIBRARYNAME", "other*"], ["FUNCTION", "LIST", "bogus"], ["FUNCTION", "LIST", "LIBRARYNAME"],
            ["FUNCTION", "STATS"], ["FUNCTION", "KILL"],
            Load(Library), Load("#!lua name=other\nredis.register_function('myfunc', function() end)"),
            Load(Library, replace: true), ["FUNCTION", "DELETE", "mylib"], ["FUNCTION", "DELETE", "mylib"], ["FCALL", "myfunc", "0"],
            ["FUNCTION", "STATS"],
        ],
        ["loading"] =
        [
            Load("return 1"), Load("#!lua name=bad-name\nredis.register_function('x', function() end)"),
            Load("#!lua name=e\nlocal x = 1"), Load("#!lua name=e\nredis.call('ping')"),
            Load("#!lua name=e\nredis.register_function('bad name', function() end)"),
            Load("#!lua name=e\nredis.register_function('f', function() end, 'x')"),
            Load("#!lua name=e\nredis.register_function{function_name='f', callback=function() end, flags={'bad'}}"),
            Load("#!lua name=e\nreturn x"), Load("#!lua name=e\nerror('boom')"), Load("#!lua\nredis.register_function('f', function() end)"),
            Load("#!lua name=e foo=bar\nredis.register_function('f', function() end)"),
            Load("#!lua name=a name=b\nredis.register_function('f2', function() end)"), Load("#!js name=a\nx"), Load("#!lua name=\nx"),
            Body("redis.register_function{function_name='f', callback=function() end, bogus=1}"),
            Body("redis.register_function{callback=function() end}"), Body("redis.register_function{function_name='f'}"),
            Body("redis.register_function{function_name='f', callback=function() end, description=1}"),
            Body("redis.register_function{function_name='f', callback=function() end, flags='no-writes'}"),
            Body("redis.register_function('f', 'notfn')"), Body("redis.register_function(1, function() end)"),
            Body("redis.register_function('f', function() end) redis.register_function('f', function() end)"),
            Body("redis.register_function()"), Body("redis.log(redis.LOG_NOTICE, 'x') redis.register_function('f', function() end)"),
            Body("local v = redis.REDIS_VERSION redis.register_function('f', function() end)"),
            Body("local s = string redis.register_function('f', function() end)"),
            Body("redis.register_function('probe', function(keys, args) return {type(KEYS), type(string), type(redis.call), type(redis.register_function)} end)"),
            ["FCALL", "probe", "0"], ["FUNCTION", "LOAD", "BOGUS", "x"], ["FUNCTION", "DELETE", "nosuch"], ["FUNCTION", "FLUSH", "bad"],
            ["FUNCTION", "FLUSH", "ASYNC"], ["FUNCTION", "RESTORE", "bad"], ["FUNCTION", "RESTORE", "bad", "WRONG"], ["FUNCTION", "HELP"],
            ["FUNCTION", "NOSUCH"],
        ],
    };

    /// <summary>A FUNCTION DUMP from either server restores on the other, with every policy answering as Redis's.</summary>
    [Fact]
    public void DumpsRestoreAcrossTheTwoServers()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        using var a = ours.Connect();
        using var b = redis.Connect();
        RespAssert.Bulk("mylib", a.Call(Load(Library)));
        RespAssert.Bulk("mylib", b.Call(Load(Library)));
        string longLibrary = "#!lua name=big\n" + string.Join("\n", Enumerable.Range(0, 200).Select(i => $"redis.register_function('f{i}', function() return {i} end)"));
        RespAssert.Bulk("big", b.Call(Load(longLibrary))); // long code: Redis compresses it in the dump (LZF)
        byte[] fromRedis = b.CallForBytes("FUNCTION", "DUMP");
        byte[] fromOurs = a.CallForBytes("FUNCTION", "DUMP");
        Assert.Equal("ERR Library mylib already exists", a.Call(["FUNCTION"u8.ToArray(), "RESTORE"u8.ToArray(), fromRedis]).Text);
        RespAssert.Ok(a.Call(["FUNCTION"u8.ToArray(), "RESTORE"u8.ToArray(), fromRedis, "REPLACE"u8.ToArray()]));
        RespAssert.Integer(199, a.Call("FCALL", "f199", "0"));
        RespAssert.Ok(b.Call(["FUNCTION"u8.ToArray(), "RESTORE"u8.ToArray(), fromOurs, "FLUSH"u8.ToArray()]));
        Assert.Equal("ERR Function not found", b.Call("FCALL", "f199", "0").Text);
        RespAssert.Bulk("k", b.Call("FCALL", "myfunc", "1", "k", "a").Array[0]);
        byte[] corrupt = (byte[])fromOurs.Clone();
        corrupt[3] ^= 0x20;
        foreach (var c in new[] { a, b })
            Assert.Equal("ERR DUMP payload version or checksum are wrong", c.Call(["FUNCTION"u8.ToArray(), "RESTORE"u8.ToArray(), corrupt]).Text);
    }

    /// <summary>Libraries survive a restart: FUNCTION LOAD/DELETE reach the AOF, and an AOF rewrite keeps the loaded ones.</summary>
    [Fact]
    public void LibrariesSurviveRestartsAndRewrites()
    {
        using var dir = new TempDirectory();
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Bulk("mylib", c.Call(Load(Library)));
            RespAssert.Bulk("gone", c.Call(Load("#!lua name=gone\nredis.register_function('g', function() return 1 end)")));
            RespAssert.Ok(c.Call("FUNCTION", "DELETE", "gone"));
        }
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path, "--aof-use-rdb-preamble", "no"))
        using (var c = server.Connect())
        {
            Assert.Equal(4, c.Call("FCALL", "myfunc", "1", "k", "a").Array.Count);
            Assert.Equal("ERR Function not found", c.Call("FCALL", "g", "0").Text);
            Assert.False(c.Call("BGREWRITEAOF").IsError);
            // Without the RDB preamble the new base file holds the library as FUNCTION LOAD.
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0"
                && Directory.GetFiles(Path.Combine(dir.Path, "appendonlydir"), "*.base.aof").Select(File.ReadAllText)
                    .Any(text => text.Contains("*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n", StringComparison.Ordinal)),
                "the AOF rewrite to write the library into the base file");
        }
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            Assert.Equal(4, c.Call("FCALL", "myfunc", "1", "k", "a").Array.Count);
            // With it (Redis's default) the base is an RDB, the library in it as a function opcode.
            Assert.False(c.Call("BGREWRITEAOF").IsError);
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0"
                && Directory.GetFiles(Path.Combine(dir.Path, "appendonlydir"), "*.base.rdb").Length == 1,
                "the AOF rewrite to write an RDB base file");
        }
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
            Assert.Equal(4, c.Call("FCALL", "myfunc", "1", "k", "a").Array.Count);
    }
}
