using Diagnostics.Server.Commands;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The string commands' registration: arity, flags and key positions as Redis 7's COMMAND INFO
/// reports them (the router relies on the key positions to find every key's shard), and their
/// COMMAND DOCS arguments.
/// </summary>
public sealed class StringCommandSpecTests
{
    private static readonly CommandTable Table = new();

    [Theory]
    [InlineData("get", 2, ReadOnly | Fast, 1, 1, 1)]
    [InlineData("set", -3, Write | DenyOom, 1, 1, 1)]
    [InlineData("setnx", 3, Write | DenyOom | Fast, 1, 1, 1)]
    [InlineData("setex", 4, Write | DenyOom, 1, 1, 1)]
    [InlineData("psetex", 4, Write | DenyOom, 1, 1, 1)]
    [InlineData("getset", 3, Write | DenyOom | Fast, 1, 1, 1)]
    [InlineData("getdel", 2, Write | Fast, 1, 1, 1)]
    [InlineData("getex", -2, Write | Fast, 1, 1, 1)]
    [InlineData("mget", -2, ReadOnly | Fast, 1, -1, 1)]
    [InlineData("mset", -3, Write | DenyOom, 1, -1, 2)]
    [InlineData("msetnx", -3, Write | DenyOom, 1, -1, 2)]
    [InlineData("append", 3, Write | DenyOom | Fast, 1, 1, 1)]
    [InlineData("strlen", 2, ReadOnly | Fast, 1, 1, 1)]
    [InlineData("getrange", 4, ReadOnly, 1, 1, 1)]
    [InlineData("substr", 4, ReadOnly, 1, 1, 1)]
    [InlineData("setrange", 4, Write | DenyOom, 1, 1, 1)]
    [InlineData("incr", 2, Write | DenyOom | Fast, 1, 1, 1)]
    [InlineData("decr", 2, Write | DenyOom | Fast, 1, 1, 1)]
    [InlineData("incrby", 3, Write | DenyOom | Fast, 1, 1, 1)]
    [InlineData("decrby", 3, Write | DenyOom | Fast, 1, 1, 1)]
    [InlineData("incrbyfloat", 3, Write | DenyOom | Fast, 1, 1, 1)]
    [InlineData("lcs", -3, ReadOnly, 1, 2, 1)]
    public void RegisteredLikeRedis(string name, int arity, CommandFlags flags, int firstKey, int lastKey, int keyStep)
    {
        var spec = Table.Find(name);
        Assert.NotNull(spec);
        Assert.Equal(arity, spec.Arity);
        Assert.Equal(flags, spec.Flags);
        Assert.Equal((firstKey, lastKey, keyStep), (spec.FirstKey, spec.LastKey, spec.KeyStep));
        Assert.Equal("string", spec.Group);
        Assert.NotNull(spec.Handler);
        Assert.False(string.IsNullOrWhiteSpace(spec.Summary));
    }

    [Theory]
    [InlineData("get", "key")]
    [InlineData("set", "key value condition get expiration")]
    [InlineData("setnx", "key value")]
    [InlineData("setex", "key seconds value")]
    [InlineData("psetex", "key milliseconds value")]
    [InlineData("getset", "key value")]
    [InlineData("getdel", "key")]
    [InlineData("getex", "key expiration")]
    [InlineData("mget", "key")]
    [InlineData("mset", "data")]
    [InlineData("msetnx", "data")]
    [InlineData("append", "key value")]
    [InlineData("strlen", "key")]
    [InlineData("getrange", "key start end")]
    [InlineData("substr", "key start end")]
    [InlineData("setrange", "key offset value")]
    [InlineData("incr", "key")]
    [InlineData("decr", "key")]
    [InlineData("incrby", "key increment")]
    [InlineData("decrby", "key decrement")]
    [InlineData("incrbyfloat", "key increment")]
    [InlineData("lcs", "key1 key2 len idx min-match-len withmatchlen")]
    public void DocumentsItsArguments(string name, string arguments)
    {
        var spec = Table.Find(name)!;
        Assert.Equal(arguments, string.Join(' ', spec.Arguments.Select(a => a.Name)));
    }

    [Fact]
    public void MultiKeyArgumentShapes()
    {
        var mset = Table.Find("mset")!.Arguments.Single();
        Assert.Equal("block", mset.Type);
        Assert.True(mset.Multiple);
        Assert.Equal(["key", "value"], mset.Children!.Select(a => a.Type == "key" ? "key" : a.Name));
        Assert.True(Table.Find("mget")!.Arguments.Single().Multiple);
        var getexOptions = Table.Find("getex")!.Arguments[1];
        Assert.Equal(["EX", "PX", "EXAT", "PXAT", "PERSIST"], getexOptions.Children!.Select(a => a.Token));
        Assert.Equal("double", Table.Find("incrbyfloat")!.Arguments[1].Type);
    }
}
