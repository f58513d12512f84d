using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>COMMAND, COUNT, INFO, LIST, DOCS, GETKEYS, HELP with Redis 7's reply layouts.</summary>
public sealed class CommandCommandTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private static readonly HashSet<string> ArgumentTypes =
        ["key", "string", "integer", "double", "pattern", "unix-time", "pure-token", "oneof", "block"];

    [Fact]
    public void CountEqualsTheNumberOfEntriesCommandReturns()
    {
        using var c = shared.Connect();
        var all = c.Call("COMMAND");
        var count = c.Call("COMMAND", "COUNT");
        Assert.Equal(':', count.Kind);
        Assert.True(count.Integer > 10, $"too few commands: {count}");
        Assert.Equal(count.Integer, all.Array.Count);
        Assert.Contains(all.Array, entry => entry.Array[0].Text == "get");
        Assert.DoesNotContain(all.Array, entry => entry.Array[0].Text!.Contains('|'));
    }

    [Fact]
    public void InfoOfGetHasRedis7Layout()
    {
        using var c = shared.Connect();
        var reply = c.Call("COMMAND", "INFO", "get");
        var get = Assert.Single(reply.Array).Array;
        Assert.Equal(10, get.Count);
        RespAssert.Bulk("get", get[0]);
        RespAssert.Integer(2, get[1]);
        Assert.Equal(["readonly", "fast"], StatusItems(get[2]));
        RespAssert.Integer(1, get[3]);
        RespAssert.Integer(1, get[4]);
        RespAssert.Integer(1, get[5]);
        Assert.Equal(["@read", "@string", "@fast"], StatusItems(get[6]));
        Assert.Empty(get[7].Array);
        var keySpec = Assert.Single(get[8].Array).ToMap();
        Assert.Equal(["RO", "access"], StatusItems(keySpec["flags"]));
        var begin = keySpec["begin_search"].ToMap();
        RespAssert.Bulk("index", begin["type"]);
        RespAssert.Integer(1, begin["spec"].ToMap()["index"]);
        var find = keySpec["find_keys"].ToMap();
        RespAssert.Bulk("range", find["type"]);
        var range = find["spec"].ToMap();
        RespAssert.Integer(0, range["lastkey"]);
        RespAssert.Integer(1, range["keystep"]);
        RespAssert.Integer(0, range["limit"]);
        Assert.Empty(get[9].Array);
    }

    [Fact]
    public void InfoOfDelReportsOpenEndedKeyRangeAndCategories()
    {
        using var c = shared.Connect();
        var del = c.Call("COMMAND", "INFO", "DEL").Array[0].Array;
        RespAssert.Integer(-2, del[1]);
        Assert.Equal(["write"], StatusItems(del[2]));
        RespAssert.Integer(-1, del[4]);
        Assert.Equal(["@keyspace", "@write", "@slow"], StatusItems(del[6]));
        RespAssert.Integer(-1, del[8].Array[0].ToMap()["find_keys"].ToMap()["spec"].ToMap()["lastkey"]);
    }

    [Fact]
    public void InfoOfUnknownCommandIsNullInItsPlace()
    {
        using var c = shared.Connect();
        var reply = c.Call("COMMAND", "INFO", "get", "no-such-command", "ping");
        Assert.Equal(3, reply.Array.Count);
        RespAssert.Bulk("get", reply.Array[0].Array[0]);
        RespAssert.Null(reply.Array[1]);
        RespAssert.Bulk("ping", reply.Array[2].Array[0]);
    }

    [Fact]
    public void InfoNestsSubcommandsUnderTheirContainerWithFullNames()
    {
        using var c = shared.Connect();
        var config = c.Call("COMMAND", "INFO", "config").Array[0].Array;
        var subcommands = config[9].Array.Select(s => s.Array[0].Text).ToList();
        Assert.Contains("config|get", subcommands);
        Assert.Contains("config|set", subcommands);
        var get = config[9].Array.Single(s => s.Array[0].Text == "config|get").Array;
        RespAssert.Integer(-3, get[1]);
        Assert.Equal(["admin", "noscript", "loading", "stale"], StatusItems(get[2]));
        Assert.Equal(["@admin", "@slow", "@dangerous"], StatusItems(get[6]));

        var direct = c.Call("COMMAND", "INFO", "config|get").Array[0].Array;
        RespAssert.Bulk("config|get", direct[0]);
    }

    [Fact]
    public void InternalRoutingFlagsAreNeverReported()
    {
        using var c = shared.Connect();
        foreach (var entry in c.Call("COMMAND").Array)
        {
            var flags = StatusItems(entry.Array[2]);
            Assert.DoesNotContain("connection", flags);
            Assert.DoesNotContain("allshards", flags);
            Assert.DoesNotContain("all_shards", flags);
        }
        Assert.Equal(["admin", "noscript", "loading", "stale"], StatusItems(c.Call("COMMAND", "INFO", "debug").Array[0].Array[2]));
    }

    [Fact]
    public void InfoInResp3UsesSetsOfStatusStrings()
    {
        using var c = shared.Connect();
        c.Call("HELLO", "3");
        var get = c.Call("COMMAND", "INFO", "get").Array[0].Array;
        Assert.Equal('~', get[2].Kind);
        Assert.All(get[2].Array, flag => Assert.Equal('+', flag.Kind));
        Assert.Equal('~', get[6].Kind);
        Assert.Equal('%', get[8].Array[0].Kind);
        RespAssert.Null(c.Call("COMMAND", "INFO", "nope").Array[0]);
    }

    [Fact]
    public void ListNamesEveryCommandAndSubcommand()
    {
        using var c = shared.Connect();
        var names = BulkItems(c.Call("COMMAND", "LIST"));
        Assert.Contains("get", names);
        Assert.Contains("config", names);
        Assert.Contains("config|set", names);
        Assert.Contains("command|docs", names);
    }

    [Fact]
    public void ListFiltersByPatternCategoryAndModule()
    {
        using var c = shared.Connect();
        var pattern = BulkItems(c.Call("COMMAND", "LIST", "FILTERBY", "PATTERN", "conf*"));
        Assert.Contains("config", pattern);
        Assert.Contains("config|get", pattern);
        Assert.All(pattern, name => Assert.StartsWith("conf", name));

        var strings = BulkItems(c.Call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "STRING"));
        Assert.Contains("get", strings);
        Assert.Contains("set", strings);
        Assert.DoesNotContain("ping", strings);

        var dangerous = BulkItems(c.Call("COMMAND", "LIST", "FILTERBY", "aclcat", "dangerous"));
        Assert.Contains("config|set", dangerous);
        Assert.Contains("info", dangerous);
        Assert.DoesNotContain("get", dangerous);

        Assert.Empty(c.Call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "no-such-category").Array);
        Assert.Empty(c.Call("COMMAND", "LIST", "FILTERBY", "MODULE", "anything").Array);
        RespAssert.Error("ERR syntax error", c.Call("COMMAND", "LIST", "FILTERBY", "COLOR", "red"));
        RespAssert.Error("ERR syntax error", c.Call("COMMAND", "LIST", "extra"));
    }

    [Fact]
    public void DocsOfGetDescribeSummaryAndArguments()
    {
        using var c = shared.Connect();
        var docs = c.Call("COMMAND", "DOCS", "get", "no-such-command").ToMap();
        Assert.Equal(["get"], docs.Keys);
        var get = docs["get"].ToMap();
        RespAssert.Bulk("1.0.0", get["since"]);
        RespAssert.Bulk("string", get["group"]);
        RespAssert.Bulk("O(1)", get["complexity"]);
        Assert.False(string.IsNullOrEmpty(get["summary"].Text));
        var key = Assert.Single(get["arguments"].Array).ToMap();
        RespAssert.Bulk("key", key["name"]);
        RespAssert.Bulk("key", key["type"]);
        RespAssert.Integer(0, key["key_spec_index"]);
    }

    [Fact]
    public void DocsOfContainerMapsSubcommandsByFullName()
    {
        using var c = shared.Connect();
        c.Call("HELLO", "3");
        var reply = c.Call("COMMAND", "DOCS", "config");
        Assert.Equal('%', reply.Kind);
        var config = reply.ToMap()["config"];
        Assert.Equal('%', config.Kind);
        var subcommands = config.ToMap()["subcommands"];
        Assert.Equal('%', subcommands.Kind);
        var set = subcommands.ToMap()["config|set"].ToMap();
        var data = Assert.Single(set["arguments"].Array).ToMap();
        RespAssert.Bulk("block", data["type"]);
        Assert.Equal('~', data["flags"].Kind);
        Assert.Equal(["multiple"], StatusItems(data["flags"]));
        Assert.Equal(["parameter", "value"], data["arguments"].Array.Select(a => a.ToMap()["name"].Text!).ToArray());
    }

    /// <summary>
    /// Every command's docs satisfy what redis-cli asserts when it builds its help table: string
    /// keys, string summary/since/group, argument maps with a known type, children for oneof and
    /// block, flags as status strings, and "container|sub" subcommand names.
    /// </summary>
    [Fact]
    public void DocsOfEveryCommandAreWellFormedForRedisCli()
    {
        using var c = shared.Connect();
        var all = c.Call("COMMAND", "DOCS");
        var count = c.Call("COMMAND", "COUNT").Integer;
        Assert.Equal(count * 2, all.Array.Count);
        for (int i = 0; i < all.Array.Count; i += 2)
        {
            Assert.Equal('$', all.Array[i].Kind);
            CheckCommandDocs(all.Array[i].Text!, all.Array[i + 1], isSubcommand: false);
        }
    }

    private static void CheckCommandDocs(string name, RespValue docs, bool isSubcommand)
    {
        Assert.True(docs.Kind is '*' or '%', $"{name}: docs must be a map, got {docs}");
        if (isSubcommand)
            Assert.Contains('|', name);
        var map = docs.ToMap();
        foreach (var field in new[] { "summary", "since", "group" })
            Assert.True(map.TryGetValue(field, out var value) && value.Kind == '$', $"{name}: {field} must be a bulk string");
        // Redis leaves complexity out where a command has none (MONITOR); redis-cli copes.
        if (map.TryGetValue("complexity", out var complexity))
            Assert.True(complexity.Kind == '$', $"{name}: complexity must be a bulk string");
        else
            Assert.Equal("monitor", name);
        if (map.TryGetValue("arguments", out var arguments))
        {
            Assert.Equal('*', arguments.Kind);
            CheckArguments(name, arguments);
        }
        if (map.TryGetValue("subcommands", out var subcommands))
        {
            for (int i = 0; i < subcommands.Array.Count; i += 2)
                CheckCommandDocs(subcommands.Array[i].Text!, subcommands.Array[i + 1], isSubcommand: true);
        }
    }

    private static void CheckArguments(string command, RespValue arguments)
    {
        foreach (var argument in arguments.Array)
        {
            var map = argument.ToMap();
            Assert.True(map.TryGetValue("name", out var name) && name.Kind == '$', $"{command}: argument without a name: {argument}");
            Assert.True(map.TryGetValue("type", out var type) && type.Kind == '$', $"{command}: argument {name.Text} without a type");
            Assert.True(ArgumentTypes.Contains(type.Text!), $"{command}: argument {name.Text} has unknown type '{type.Text}'");
            if (type.Text is "oneof" or "block")
            {
                Assert.True(map.TryGetValue("arguments", out var children) && children.Array.Count > 0, $"{command}: {type.Text} argument {name.Text} has no children");
                CheckArguments(command, children);
            }
            if (map.TryGetValue("flags", out var flags))
                Assert.All(flags.Array, flag => Assert.Equal('+', flag.Kind));
            if (map.TryGetValue("token", out var token))
                Assert.Equal('$', token.Kind);
        }
    }

    [Fact]
    public void GetKeysReturnsTheKeyArguments()
    {
        using var c = shared.Connect();
        RespAssert.BulkArray(c.Call("COMMAND", "GETKEYS", "GET", "k1"), "k1");
        RespAssert.BulkArray(c.Call("COMMAND", "GETKEYS", "set", "k2", "v", "EX", "10"), "k2");
        RespAssert.BulkArray(c.Call("COMMAND", "GETKEYS", "del", "a", "b", "c"), "a", "b", "c");
    }

    [Fact]
    public void GetKeysErrorsAsRedis()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR Invalid command specified", c.Call("COMMAND", "GETKEYS", "no-such-command", "x"));
        RespAssert.Error("ERR The command has no key arguments", c.Call("COMMAND", "GETKEYS", "ping", "x"));
        RespAssert.Error("ERR The command has no key arguments", c.Call("COMMAND", "GETKEYS", "config", "get"));
        RespAssert.Error("ERR Invalid command specified", c.Call("COMMAND", "GETKEYS", "config", "no-such-sub"));
        RespAssert.Error("ERR Invalid number of arguments specified for command", c.Call("COMMAND", "GETKEYS", "get"));
        RespAssert.Error("ERR Invalid number of arguments specified for command", c.Call("COMMAND", "GETKEYS", "get", "a", "b"));
        RespAssert.Error("ERR wrong number of arguments for 'command|getkeys' command", c.Call("COMMAND", "GETKEYS"));
    }

    [Fact]
    public void HelpAndUnknownSubcommand()
    {
        using var c = shared.Connect();
        var help = c.Call("COMMAND", "HELP");
        RespAssert.Simple("COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", help.Array[0]);
        Assert.Contains(help.Array, line => line.Text == "GETKEYS <full-command>");
        RespAssert.Error("ERR unknown subcommand 'nope'. Try COMMAND HELP.", c.Call("COMMAND", "nope"));
        RespAssert.Error("ERR wrong number of arguments for 'command|count' command", c.Call("COMMAND", "COUNT", "x"));
    }

    private static string[] StatusItems(RespValue set)
    {
        Assert.All(set.Array, item => Assert.Equal('+', item.Kind));
        return set.Array.Select(item => item.Text!).ToArray();
    }

    private static List<string> BulkItems(RespValue array) => array.Array.Select(item => item.Text!).ToList();
}
