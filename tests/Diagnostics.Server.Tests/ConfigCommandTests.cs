using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>CONFIG GET / SET / RESETSTAT / REWRITE / HELP.</summary>
public sealed class ConfigCommandTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public void SetOfAnInertTunableIsReturnedByGet()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("CONFIG", "SET", "hash-max-listpack-entries", "77"));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "hash-max-listpack-entries"), "hash-max-listpack-entries", "77");
    }

    [Fact]
    public void GetMatchesGlobsAndRepliesAMapInResp3()
    {
        using var c = shared.Connect();
        var flat = c.Call("CONFIG", "GET", "hash-max-*");
        Assert.Equal('*', flat.Kind);
        var map = flat.ToMap();
        Assert.Equal(flat.Array.Count / 2, map.Count);
        Assert.Contains("hash-max-listpack-entries", map.Keys);
        Assert.Contains("hash-max-listpack-value", map.Keys);
        Assert.All(map.Keys, name => Assert.StartsWith("hash-max-", name));

        var classes = c.Call("CONFIG", "GET", "h[xyz]").ToMap();
        Assert.Equal(["hz"], classes.Keys);

        c.Call("HELLO", "3");
        var resp3 = c.Call("CONFIG", "GET", "maxclients", "tcp-keepalive");
        Assert.Equal('%', resp3.Kind);
        Assert.Equal(["maxclients", "tcp-keepalive"], resp3.ToMap().Keys);
    }

    [Fact]
    public void GetOfAnExactNameAnswersUnderTheNameAsTyped()
    {
        using var c = shared.Connect();
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "MAXCLIENTS"), "MAXCLIENTS", "10000");
        Assert.Empty(c.Call("CONFIG", "GET", "no-such-parameter").Array);
        RespAssert.Error("ERR wrong number of arguments for 'config|get' command", c.Call("CONFIG", "GET"));
    }

    [Fact]
    public void SetErrorsUseRedisWording()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR Unknown option or number of arguments for CONFIG SET - 'no-such-option'",
            c.Call("CONFIG", "SET", "no-such-option", "1"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config",
            c.Call("CONFIG", "SET", "port", "7777"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer",
            c.Call("CONFIG", "SET", "maxclients", "many"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'hash-max-listpack-value') - duplicate parameter",
            c.Call("CONFIG", "SET", "hash-max-listpack-value", "1", "hash-max-listpack-value", "2"));
        RespAssert.Error("ERR syntax error", c.Call("CONFIG", "SET", "hash-max-listpack-value", "1", "maxclients"));
        RespAssert.Error("ERR wrong number of arguments for 'config|set' command", c.Call("CONFIG", "SET", "hz"));
    }

    [Fact]
    public void SetIsAllOrNothing()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("CONFIG", "SET", "zset-max-listpack-entries", "100", "set-max-intset-entries", "300"));
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer",
            c.Call("CONFIG", "SET", "zset-max-listpack-entries", "5", "maxclients", "many"));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "zset-max-listpack-entries"), "zset-max-listpack-entries", "100");
        RespAssert.Error("ERR Unknown option or number of arguments for CONFIG SET - 'bogus'",
            c.Call("CONFIG", "SET", "set-max-intset-entries", "9", "bogus", "1"));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "set-max-intset-entries"), "set-max-intset-entries", "300");
    }

    [Fact]
    public void DebugCommandPermissionIsImmutable()
    {
        using var c = shared.Connect();
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "enable-debug-command"), "enable-debug-command", "local");
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't set immutable config",
            c.Call("CONFIG", "SET", "enable-debug-command", "yes"));
    }

    [Fact]
    public void ResetStatClearsTheCounters()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "resetstat:key", "v"));
        c.Call("GET", "resetstat:key");
        c.Call("GET", "resetstat:missing");
        c.Call("NO-SUCH-COMMAND");
        var before = Stats(c);
        Assert.True(long.Parse(before["keyspace_hits"]) >= 1);
        Assert.True(long.Parse(before["total_error_replies"]) >= 1);

        RespAssert.Ok(c.Call("CONFIG", "RESETSTAT"));
        var after = Stats(c);
        Assert.Equal("0", after["keyspace_hits"]);
        Assert.Equal("0", after["keyspace_misses"]);
        Assert.Equal("0", after["total_error_replies"]);
        Assert.Equal("0", after["expired_keys"]);
        Assert.Equal("0", after["total_connections_received"]);
        // RESETSTAT itself is counted once it completes, as in Redis.
        Assert.Equal("1", after["total_commands_processed"]);
    }

    [Fact]
    public void RewriteWithoutConfigFileFails()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR The server is running without a config file", c.Call("CONFIG", "REWRITE"));
    }

    [Fact]
    public void RewriteKeepsCommentsUpdatesValuesAndAppendsNewOnes()
    {
        string dir = Directory.CreateTempSubdirectory("config-rewrite").FullName;
        string file = Path.Combine(dir, "server.conf");
        File.WriteAllText(file, string.Join('\n',
            "# Diagnostics server test configuration",
            "hash-max-listpack-entries 64",
            "",
            "# the cron frequency, twice: the second wins",
            "hz 15",
            "hz 16",
            ""));
        try
        {
            int port;
            using (var server = ServerProcess.StartWith(file))
            {
                port = server.Port;
                using var c = server.Connect();
                RespAssert.BulkArray(c.Call("CONFIG", "GET", "hz"), "hz", "16");
                RespAssert.Ok(c.Call("CONFIG", "SET", "hash-max-listpack-entries", "200", "maxclients", "500"));
                RespAssert.Ok(c.Call("CONFIG", "SET", "notify-keyspace-events", ""));
                RespAssert.Ok(c.Call("CONFIG", "REWRITE"));
            }

            string[] lines = File.ReadAllLines(file);
            Assert.Equal("# Diagnostics server test configuration", lines[0]);
            Assert.Equal("hash-max-listpack-entries 200", lines[1]);
            Assert.Equal("", lines[2]);
            Assert.Equal("# the cron frequency, twice: the second wins", lines[3]);
            Assert.Equal("hz 16", lines[4]);
            Assert.Single(lines, line => line.StartsWith("hz ", StringComparison.Ordinal));
            int marker = Array.IndexOf(lines, "# Generated by CONFIG REWRITE");
            Assert.True(marker > 4, string.Join('\n', lines));
            Assert.Contains("maxclients 500", lines[marker..]);
            Assert.Contains($"port {port}", lines[marker..]);
            // Settings left at their defaults are not added.
            Assert.DoesNotContain(lines, line => line.StartsWith("notify-keyspace-events", StringComparison.Ordinal));
            Assert.DoesNotContain(lines, line => line.StartsWith("tcp-keepalive", StringComparison.Ordinal));

            // The rewritten file starts a server with the same settings.
            using var again = ServerProcess.StartWith(file);
            using var check = again.Connect();
            RespAssert.BulkArray(check.Call("CONFIG", "GET", "hash-max-listpack-entries"), "hash-max-listpack-entries", "200");
            RespAssert.BulkArray(check.Call("CONFIG", "GET", "maxclients"), "maxclients", "500");
            RespAssert.BulkArray(check.Call("CONFIG", "GET", "hz"), "hz", "16");
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public void RewriteIsStableWhenNothingChanged()
    {
        string dir = Directory.CreateTempSubdirectory("config-rewrite-stable").FullName;
        string file = Path.Combine(dir, "server.conf");
        File.WriteAllText(file, "# comment\nmaxclients 321\nbind 127.0.0.1\n");
        try
        {
            using var server = ServerProcess.StartWith(file);
            using var c = server.Connect();
            RespAssert.Ok(c.Call("CONFIG", "REWRITE"));
            string first = File.ReadAllText(file);
            RespAssert.Ok(c.Call("CONFIG", "REWRITE"));
            Assert.Equal(first, File.ReadAllText(file));
            Assert.StartsWith("# comment\nmaxclients 321\nbind 127.0.0.1\n", first);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public void RequirePassIsAppliedAndNeverLogged()
    {
        const string secret = "s3cr3t-config-test-password";
        using var server = ServerProcess.Start("--loglevel", "debug");
        using (var admin = server.Connect())
            RespAssert.Ok(admin.Call("CONFIG", "SET", "requirepass", secret));
        using var c = server.Connect();
        RespAssert.Error("NOAUTH Authentication required.", c.Call("GET", "x"));
        RespAssert.Ok(c.Call("AUTH", secret));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "requirepass"), "requirepass", secret);
        Assert.DoesNotContain(secret, server.Output);
    }

    [Fact]
    public void HelpListsTheSubcommands()
    {
        using var c = shared.Connect();
        var help = c.Call("CONFIG", "HELP");
        RespAssert.Simple("CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", help.Array[0]);
        Assert.Contains(help.Array, line => line.Text == "REWRITE");
        RespAssert.Error("ERR unknown subcommand 'nope'. Try CONFIG HELP.", c.Call("CONFIG", "nope"));
    }

    private static Dictionary<string, string> Stats(RespClient c)
    {
        var fields = new Dictionary<string, string>();
        foreach (var line in c.Call("INFO", "stats").Text!.Split("\r\n"))
        {
            int colon = line.IndexOf(':');
            if (colon > 0)
                fields[line[..colon]] = line[(colon + 1)..];
        }
        return fields;
    }
}
