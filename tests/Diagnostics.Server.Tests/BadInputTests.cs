using System.Globalization;
using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// A broken request stream: the client gets Redis's error text and is disconnected, the commands
/// it pipelined before the bad bytes still run and are answered, and the server and its other
/// clients carry on.
/// </summary>
public sealed class BadInputTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public void BulkLongerThanProtoMaxBulkLen()
    {
        using var server = ServerProcess.Start("--proto-max-bulk-len", "1mb");
        AssertRejected(server, "badinput:bulklen", "*2\r\n$3\r\nSET\r\n$2000000\r\n", "ERR Protocol error: invalid bulk length");
    }

    [Fact]
    public void MultibulkCountAboveTheLimitOrNegative()
    {
        // Over 1024*1024*1024 is refused at once (Redis 7 would wait for up to INT_MAX arguments).
        AssertRejected(shared.Server, "badinput:mbulkmax", "*1073741825\r\n", "ERR Protocol error: invalid multibulk length");
        AssertRejected(shared.Server, "badinput:mbulkintmax", "*2147483648\r\n", "ERR Protocol error: invalid multibulk length");
        AssertRejected(shared.Server, "badinput:mbulkneg", "*-5\r\n", "ERR Protocol error: invalid multibulk length");
        AssertRejected(shared.Server, "badinput:mbulknull", "*-1\r\n", "ERR Protocol error: invalid multibulk length");
    }

    [Fact]
    public void NonNumericMultibulkCount()
    {
        AssertRejected(shared.Server, "badinput:mbulkabc", "*abc\r\n", "ERR Protocol error: invalid multibulk length");
        AssertRejected(shared.Server, "badinput:mbulkempty", "*\r\n", "ERR Protocol error: invalid multibulk length");
        AssertRejected(shared.Server, "badinput:mbulkplus", "*+1\r\n$4\r\nPING\r\n", "ERR Protocol error: invalid multibulk length");
    }

    [Fact]
    public void NonNumericOrNegativeBulkLength()
    {
        AssertRejected(shared.Server, "badinput:bulkabc", "*1\r\n$abc\r\n", "ERR Protocol error: invalid bulk length");
        AssertRejected(shared.Server, "badinput:bulkneg", "*1\r\n$-1\r\n", "ERR Protocol error: invalid bulk length");
        AssertRejected(shared.Server, "badinput:bulkdigits", "*1\r\n$" + new string('9', 30) + "\r\n", "ERR Protocol error: invalid bulk length");
    }

    [Fact]
    public void ZeroMultibulkCountIsIgnoredAsRedisDoes()
    {
        using var c = shared.Connect();
        c.SendRaw("*0\r\n*0\r\n*1\r\n$4\r\nPING\r\n");
        RespAssert.Simple("PONG", c.Read());
        Assert.False(c.IsClosedByServer(300));
        RespAssert.Simple("PONG", c.Call("PING"));
    }

    [Fact]
    public void MultibulkCountAtTheLimitWaitsForItsArguments()
    {
        using var c = shared.Connect();
        c.SendRaw("*1073741824\r\n$4\r\nPING\r\n");
        Assert.False(c.IsClosedByServer(500), "a count within the limit is not an error; the server waits for more arguments");
    }

    [Theory]
    [InlineData("inline")]
    [InlineData("executor")]
    public void AValueTooLargeForOneBlockGetsAnErrorNotACrash(string mode)
    {
        using var server = ServerProcess.Start("--execution-mode", mode, "--proto-max-bulk-len", "2147482623");
        using var c = server.Connect();
        // Header + 3000-byte key + a value just under proto-max-bulk-len overflows one block.
        string key = new('k', 3000);
        RespAssert.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)", c.Call("SETRANGE", key, "2147482000", "x"));
        RespAssert.Integer(0, c.Call("EXISTS", key));
        RespAssert.Simple("PONG", c.Call("PING"));
        Assert.False(server.HasExited);
    }

    [Fact]
    public void ManyEmptyArgumentsCountAgainstTheQueryBufferLimit()
    {
        using var server = ServerProcess.Start("--client-query-buffer-limit", "1mb");
        using var bystander = server.Connect();
        using var c = server.Connect();
        // Empty arguments take no arena bytes but a slot each: 300,000 of them are 2.4 MB of slots.
        var request = new MemoryStream();
        request.Write(Encoding.ASCII.GetBytes("*100000000\r\n"));
        for (int i = 0; i < 300_000; i++)
            request.Write("$0\r\n\r\n"u8);
        try
        {
            c.SendRaw(request.ToArray());
        }
        catch (IOException)
        {
            // The server may close while the request is still being written: that is the point.
        }
        Assert.True(c.IsClosedByServer(), "a client holding 2.4 MB of pending arguments stayed connected over a 1 MB limit");
        RespAssert.Simple("PONG", bystander.Call("PING"));
    }

    [Fact]
    public void MissingCrlfAfterBulkData()
    {
        // Redis skips the two bytes after a bulk unread; this server checks them and says so.
        AssertRejected(shared.Server, "badinput:crlf", "*1\r\n$4\r\nPINGxx", "ERR Protocol error: expected CRLF after bulk data");
    }

    [Fact]
    public void NestedArrayInsteadOfBulk()
    {
        AssertRejected(shared.Server, "badinput:nested", "*1\r\n*1\r\n$4\r\nPING\r\n", "ERR Protocol error: expected '$', got '*'");
        AssertRejected(shared.Server, "badinput:colon", "*1\r\n:1\r\n", "ERR Protocol error: expected '$', got ':'");
    }

    [Fact]
    public void InlineRequestLongerThan64KbWithoutNewline()
    {
        AssertRejected(shared.Server, "badinput:inline", new string('a', 70_000), "ERR Protocol error: too big inline request");
    }

    [Fact]
    public void MultibulkCountLineLongerThan64KbWithoutNewline()
    {
        AssertRejected(shared.Server, "badinput:mbulkline", "*" + new string('1', 70_000), "ERR Protocol error: too big mbulk count string");
        AssertRejected(shared.Server, "badinput:bulkline", "*1\r\n$" + new string('1', 70_000), "ERR Protocol error: too big bulk count string");
    }

    [Fact]
    public void UnbalancedQuotesInInlineRequest()
    {
        AssertRejected(shared.Server, "badinput:quotes", "SET \"a b\r\n", "ERR Protocol error: unbalanced quotes in request");
        AssertRejected(shared.Server, "badinput:quotes2", "SET \"a\"b c\r\n", "ERR Protocol error: unbalanced quotes in request");
        AssertRejected(shared.Server, "badinput:quotes3", "SET 'a b\r\n", "ERR Protocol error: unbalanced quotes in request");
    }

    [Fact]
    public void IncompleteCommandBeyondClientQueryBufferLimit()
    {
        using var server = ServerProcess.Start("--client-query-buffer-limit", "1mb");
        using var bystander = server.Connect();
        RespAssert.Simple("PONG", bystander.Call("PING"));

        using var victim = server.Connect();
        var request = new MemoryStream();
        request.Write(RespClient.Encode("SET", "badinput:qbuf", "before"));
        request.Write(RespClient.Encode("GET", "badinput:qbuf"));
        // A 2 MB argument whose first 1.1 MB arrive: the command can never complete within the limit.
        request.Write(Encoding.ASCII.GetBytes("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n"));
        request.Write(new byte[1_100_000]);
        victim.SendRaw(request.ToArray());

        RespAssert.Ok(victim.Read());
        RespAssert.Bulk("before", victim.Read());
        Assert.True(victim.IsClosedByServer(), "the client over client-query-buffer-limit was not disconnected");

        RespAssert.Bulk("before", bystander.Call("GET", "badinput:qbuf"));
        Assert.True(bystander.Call("GET", "k").IsNull);
        using var fresh = server.Connect();
        RespAssert.Simple("PONG", fresh.Call("PING"));
    }

    [Fact]
    public void DroppedConnectionsReleaseTheirMemory()
    {
        // Reads the server's own accounting through INFO memory (used_memory).
        using var server = ServerProcess.Start();
        using var observer = server.Connect();
        long baseline = UsedMemory(observer);

        const int connections = 16;
        var clients = new List<RespClient>();
        string payload = new('m', 200 * 1024);
        for (int i = 0; i < connections; i++)
        {
            var client = server.Connect();
            clients.Add(client);
            // The 200 KB argument makes each connection keep a request arena of that size.
            RespAssert.Bulk(payload, client.Call("ECHO", payload));
        }
        long loaded = UsedMemory(observer);
        Assert.True(loaded - baseline >= connections * 200L * 1024,
            $"used_memory grew by {loaded - baseline} bytes for {connections} connections holding 200 KB requests");

        foreach (var client in clients)
        {
            client.SendRaw("*1\r\n*1\r\n");
            RespAssert.Error("ERR Protocol error: expected '$', got '*'", client.Read());
            Assert.True(client.IsClosedByServer());
            client.Dispose();
        }
        long growth = loaded - baseline;
        Poll.Until(() => UsedMemory(observer) - baseline < growth / 4,
            $"the dropped connections' memory was released (baseline {baseline}, loaded {loaded})");
    }

    private static long UsedMemory(RespClient c)
    {
        RespValue info = c.Call("INFO", "memory");
        Assert.True(info.Kind is '$' or '=', $"INFO memory replied {info}");
        string line = info.Text!.Split("\r\n").Single(l => l.StartsWith("used_memory:", StringComparison.Ordinal));
        return long.Parse(line["used_memory:".Length..], CultureInfo.InvariantCulture);
    }

    /// <summary>
    /// Sends two good commands and then <paramref name="bad"/> in one write; checks the good ones
    /// were run and answered, the error is exactly <paramref name="error"/>, the connection is
    /// closed, and a client connected beforehand and a new one both still work.
    /// </summary>
    private static void AssertRejected(ServerProcess server, string key, string bad, string error)
    {
        using var bystander = server.Connect();
        RespAssert.Simple("PONG", bystander.Call("PING"));

        using var victim = server.Connect();
        var request = new MemoryStream();
        request.Write(RespClient.Encode("SET", key, "before"));
        request.Write(RespClient.Encode("GET", key));
        request.Write(Encoding.ASCII.GetBytes(bad));
        victim.SendRaw(request.ToArray());

        RespAssert.Ok(victim.Read());
        RespAssert.Bulk("before", victim.Read());
        RespAssert.Error(error, victim.Read());
        Assert.True(victim.IsClosedByServer(), $"the connection stayed open after: {error}");

        RespAssert.Bulk("before", bystander.Call("GET", key));
        RespAssert.Simple("PONG", bystander.Call("PING"));
        using var fresh = server.Connect();
        RespAssert.Bulk("before", fresh.Call("GET", key));
    }
}
