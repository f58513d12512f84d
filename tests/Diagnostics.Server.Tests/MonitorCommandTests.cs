using System.Globalization;
using System.Text.RegularExpressions;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// MONITOR side by side with the real redis-server: the same commands, the same lines (timestamps
/// and client ports aside): redacted secrets, escaped bytes, the database after SELECT, a
/// transaction's commands as EXEC runs them, nothing for refused or administrative commands, a
/// blocked command shown once; and the monitor's own rules (no keyspace access, RESET ends it,
/// not inside MULTI).
/// </summary>
public sealed partial class MonitorCommandTests
{
    [GeneratedRegex(@"^(\d+)\.(\d{6}) \[(\d+) 127\.0\.0\.1:(\d+)\] (.*)$")]
    private static partial Regex MonitorLine();

    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    public void TheLinesAreTheOnesRedisWrites(int protocol)
    {
        var ours = Feed("diagnostics-server", protocol);
        var redis = Feed("redis-server", protocol);
        Assert.Equal(redis, ours);
        // What the comparison rests on: the lines were there to compare.
        Assert.Contains("[3] \"SET\" \"k\" \"\\x01\\n\\xff\"", ours);
        Assert.Contains("[0] \"AUTH\" \"(redacted)\"", ours);
    }

    /// <summary>Runs one workload with a monitor attached; returns the monitor's lines, timestamps and ports checked then taken out.</summary>
    private static List<string> Feed(string target, int protocol)
    {
        var (server, connect) = ServerTarget.Start(target);
        using var _ = server;
        using var monitor = connect();
        using var client = connect();
        using var blocked = connect();
        if (protocol == 3)
            Assert.Equal('%', monitor.Call("HELLO", "3").Kind);
        RespAssert.Ok(monitor.Call("MONITOR"));
        long started = DateTimeOffset.UtcNow.ToUnixTimeSeconds();

        RespAssert.Ok(client.Call("SET", "a b", "x\"y\\"));
        Assert.True(client.Call("NOSUCH", "x").IsError);           // refused: not shown
        Assert.True(client.Call("GET").IsError);                   // wrong arity: not shown
        Assert.True(client.Call("AUTH", "not-the-password").IsError); // shown, secret redacted
        Assert.True(client.Call("CONFIG", "GET", "maxmemory").IsArray); // administrative: not shown
        RespAssert.Ok(client.Call("MULTI"));
        client.Call("SET", "k", "1");
        client.Call("INCR", "k");
        Assert.Equal(2, client.Call("EXEC").Array.Count);
        RespAssert.Ok(client.Call("SELECT", "3"));
        RespAssert.Ok(client.Call([ "SET"u8.ToArray(), "k"u8.ToArray(), [0x01, (byte)'\n', 0xff] ]));
        RespAssert.Ok(client.Call("SELECT", "0"));
        Assert.Equal(1, client.Call("INCR", "12").Integer);
        blocked.Send("BLPOP", "queue", "0");
        WaitForBlockedClient(client);
        Assert.Equal(1, client.Call("RPUSH", "queue", "job").Integer);
        Assert.Equal("job", blocked.Read().Array[1].Text);          // served once, shown once
        Assert.Equal("end", client.Call("ECHO", "end").Text);

        var lines = new List<string>();
        long now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        while (true)
        {
            var value = monitor.Read();
            Assert.Equal('+', value.Kind); // a simple string in RESP2 and RESP3 alike
            var match = MonitorLine().Match(value.Text!);
            Assert.True(match.Success, $"not a monitor line: {value.Text}");
            Assert.InRange(long.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture), started - 1, now + 1);
            lines.Add($"[{match.Groups[3].Value}] {match.Groups[5].Value}");
            if (match.Groups[5].Value == "\"ECHO\" \"end\"")
                return lines;
        }
    }

    private static void WaitForBlockedClient(RespClient client)
        // CLIENT LIST is administrative, so polling with it adds no line of its own.
        => Poll.Until(() => client.Call("CLIENT", "LIST").Text!.Contains("flags=b ", StringComparison.Ordinal),
            "the BLPOP client never blocked");

    [Theory]
    [InlineData("diagnostics-server")]
    [InlineData("redis-server")]
    public void AMonitorCannotTouchTheKeyspaceAndResetEndsIt(string target)
    {
        var (server, connect) = ServerTarget.Start(target);
        using var _ = server;
        using var monitor = connect();
        using var client = connect();
        RespAssert.Ok(monitor.Call("MONITOR"));

        // Its own commands are shown to it too, after their reply.
        Assert.Equal("PONG", monitor.Call("PING").Text);
        Assert.EndsWith("\"PING\"", monitor.Read().Text);
        Assert.Equal("ERR Replica can't interact with the keyspace", monitor.Call("GET", "x").Text);
        Assert.Equal("ERR Replica can't interact with the keyspace", monitor.Call("SET", "x", "1").Text);
        var self = monitor.Call("CLIENT", "LIST").Text!;
        Assert.Matches(@"flags=O\S* ", self);

        Assert.Equal("RESET", monitor.Call("RESET").Text);
        RespAssert.Ok(client.Call("SET", "after", "reset"));
        // Back to a normal client: the SET above was not sent to it, and it may read keys again.
        Assert.Equal("reset", monitor.Call("GET", "after").Text);
    }

    [Fact]
    public void CommandInfoAndDocsDescribeMonitorAsRedisDoes()
    {
        var (ours, connectOurs) = ServerTarget.Start("diagnostics-server");
        var (redis, connectRedis) = ServerTarget.Start("redis-server");
        using (ours)
        using (redis)
        using (var a = connectOurs())
        using (var b = connectRedis())
        {
            foreach (var query in new[] { new[] { "COMMAND", "INFO", "monitor" }, new[] { "COMMAND", "DOCS", "monitor" } })
                Assert.Equal(RespValue.Render([b.Call(query)]), RespValue.Render([a.Call(query)]));
            // Redis gives MONITOR no complexity: the docs map has summary, since and group only.
            Assert.Equal(6, a.Call("COMMAND", "DOCS", "monitor").Array[1].Array.Count);
        }
    }

    [Theory]
    [InlineData("diagnostics-server")]
    [InlineData("redis-server")]
    public void MonitorInsideATransactionIsRefusedByExec(string target)
    {
        var (server, connect) = ServerTarget.Start(target);
        using var _ = server;
        using var client = connect();
        RespAssert.Ok(client.Call("MULTI"));
        Assert.Equal("QUEUED", client.Call("MONITOR").Text);
        var results = client.Call("EXEC").Array;
        Assert.Equal("ERR MONITOR isn't allowed for DENY BLOCKING client", Assert.Single(results).Text);
        Assert.Equal("PONG", client.Call("PING").Text); // and the client is not a monitor
    }
}
