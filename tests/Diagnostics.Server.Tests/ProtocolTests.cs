using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The request and reply protocol as clients see it: RESP2 multibulk and inline requests, RESP3
/// after HELLO 3, authentication, and the connection commands (CLIENT, SELECT, QUIT, RESET),
/// with Redis's exact reply and error texts.
/// </summary>
public sealed class ProtocolTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private const string NoAuthHello =
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";

    [Fact]
    public void MultibulkRequestsRoundTripBinarySafeArguments()
    {
        using var c = shared.Connect();
        byte[] value = [0, 1, 2, (byte)'\r', (byte)'\n', 0xC3, 0xA9, (byte)'$', (byte)'*'];
        RespAssert.Ok(c.Call("SET"u8.ToArray(), "proto:binary"u8.ToArray(), value));
        // The value comes back byte for byte, NUL, CR and LF included.
        RespValue reply = c.Call("GET", "proto:binary");
        Assert.Equal('$', reply.Kind);
        Assert.Equal(Encoding.UTF8.GetString(value), reply.Text);
        RespAssert.Bulk("", c.Call("ECHO", ""));
    }

    [Fact]
    public void EmptyMultibulkIsIgnored()
    {
        using var c = shared.Connect();
        c.SendRaw("*0\r\n*1\r\n$4\r\nPING\r\n");
        RespAssert.Simple("PONG", c.Read());
    }

    [Fact]
    public void InlineCommandsSplitQuotedArgumentsLikeRedis()
    {
        using var c = shared.Connect();
        // Double quotes take escapes (\x41 is 'A', \n a newline); single quotes take only \'.
        c.SendRaw("SET \"proto:in\\x41line\\n\" 'it\\'s \"quoted\"'\r\n");
        RespAssert.Ok(c.Read());
        RespAssert.Bulk("it's \"quoted\"", c.Call("GET", "proto:inAline\n"));

        // An empty line is ignored, and a bare LF terminates a line as well as CRLF.
        c.SendRaw("\r\n\nECHO   \"a b\"   plain\n");
        // ECHO with two arguments is an arity error, which proves both were split out.
        RespAssert.Error("ERR wrong number of arguments for 'echo' command", c.Read());
        c.SendRaw("ECHO \"tab\\there\"\r\nPING\r\n");
        RespAssert.Bulk("tab\there", c.Read());
        RespAssert.Simple("PONG", c.Read());
    }

    [Fact]
    public void InlineAndMultibulkRequestsMixInOnePipeline()
    {
        using var c = shared.Connect();
        var bytes = new List<byte>();
        bytes.AddRange("SET proto:mixed inline\r\n"u8.ToArray());
        bytes.AddRange(RespClient.Encode("GET", "proto:mixed"));
        bytes.AddRange("GET proto:mixed\r\n"u8.ToArray());
        c.SendRaw(bytes.ToArray());
        RespAssert.Ok(c.Read());
        RespAssert.Bulk("inline", c.Read());
        RespAssert.Bulk("inline", c.Read());
    }

    [Fact]
    public void Resp3AfterHello3AndBackToResp2AfterHello2()
    {
        using var c = shared.Connect();
        RespAssert.Null(c.Call("GET", "proto:resp3:missing"));
        Assert.Equal('$', c.Call("GET", "proto:resp3:missing").Kind); // RESP2 null bulk is $-1

        RespValue hello = c.Call("HELLO", "3");
        Assert.Equal('%', hello.Kind);
        Assert.Equal(7, hello.Integer);
        var map = hello.ToMap();
        Assert.Equal(["server", "version", "proto", "id", "mode", "role", "modules"], map.Keys.ToArray());
        RespAssert.Bulk("redis", map["server"]);
        RespAssert.Integer(3, map["proto"]);
        RespAssert.Integer(c.Call("CLIENT", "ID").Integer, map["id"]);
        RespAssert.Bulk("standalone", map["mode"]);
        RespAssert.Bulk("master", map["role"]);
        Assert.Equal('*', map["modules"].Kind);
        Assert.Empty(map["modules"].Array);

        Assert.Equal('_', c.Call("GET", "proto:resp3:missing").Kind); // RESP3 null
        Assert.Equal('=', c.Call("CLIENT", "INFO").Kind);              // RESP3 verbatim string
        Assert.Contains(" resp=3 ", c.Call("CLIENT", "INFO").Text);

        RespValue back = c.Call("HELLO", "2");
        Assert.Equal('*', back.Kind);
        Assert.Equal(14, back.Array.Count); // the same map, flattened
        RespAssert.Integer(2, back.ToMap()["proto"]);
        Assert.Equal('$', c.Call("GET", "proto:resp3:missing").Kind);
        Assert.Equal('$', c.Call("CLIENT", "INFO").Kind);
    }

    [Fact]
    public void HelloWithoutArgumentsRepliesInTheCurrentProtocol()
    {
        using var c = shared.Connect();
        RespValue hello = c.Call("HELLO");
        Assert.Equal('*', hello.Kind);
        RespAssert.Integer(2, hello.ToMap()["proto"]);
    }

    [Fact]
    public void HelloRejectsBadVersionsAndOptions()
    {
        using var c = shared.Connect();
        RespAssert.Error("NOPROTO unsupported protocol version", c.Call("HELLO", "4"));
        RespAssert.Error("NOPROTO unsupported protocol version", c.Call("HELLO", "1"));
        RespAssert.Error("ERR Protocol version is not an integer or out of range", c.Call("HELLO", "abc"));
        RespAssert.Error("ERR Syntax error in HELLO option 'bogus'", c.Call("HELLO", "3", "bogus"));
        // None of the failures switched the protocol.
        Assert.Equal('$', c.Call("GET", "proto:hello:missing").Kind);
    }

    [Fact]
    public void HelloSetnameNamesTheConnection()
    {
        using var c = shared.Connect();
        Assert.Equal('%', c.Call("HELLO", "3", "SETNAME", "proto-hello-name").Kind);
        RespAssert.Bulk("proto-hello-name", c.Call("CLIENT", "GETNAME"));
        RespAssert.Error("ERR Client names cannot contain spaces, newlines or special characters.",
            c.Call("HELLO", "3", "SETNAME", "bad name"));
    }

    [Fact]
    public void AuthWithoutAConfiguredPasswordExplainsItself()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
            c.Call("AUTH", "whatever"));
        // The default user has no password, so any password is accepted with the user name, as in Redis.
        RespAssert.Ok(c.Call("AUTH", "default", "whatever"));
        RespAssert.Error("WRONGPASS invalid username-password pair or user is disabled.", c.Call("AUTH", "nobody", "whatever"));
        RespAssert.Error("ERR syntax error", c.Call("AUTH", "a", "b", "c"));
    }

    [Fact]
    public void RequirePassGatesCommandsUntilAuthenticated()
    {
        using var server = ServerProcess.Start("--requirepass", "secret");
        using var c = server.Connect();
        RespAssert.Error("NOAUTH Authentication required.", c.Call("GET", "k"));
        RespAssert.Error("NOAUTH Authentication required.", c.Call("PING"));
        RespAssert.Error(NoAuthHello, c.Call("HELLO", "3"));
        RespAssert.Error("WRONGPASS invalid username-password pair or user is disabled.", c.Call("AUTH", "wrong"));
        RespAssert.Error("WRONGPASS invalid username-password pair or user is disabled.", c.Call("AUTH", "default", "wrong"));
        RespAssert.Ok(c.Call("AUTH", "secret"));
        RespAssert.Simple("PONG", c.Call("PING"));
        RespAssert.Ok(c.Call("SET", "k", "v"));

        using var named = server.Connect();
        RespAssert.Ok(named.Call("AUTH", "default", "secret"));
        RespAssert.Bulk("v", named.Call("GET", "k"));

        using var hello = server.Connect();
        RespAssert.Error("WRONGPASS invalid username-password pair or user is disabled.", hello.Call("HELLO", "3", "AUTH", "default", "nope"));
        RespAssert.Error("NOAUTH Authentication required.", hello.Call("GET", "k"));
        RespValue map = hello.Call("HELLO", "3", "AUTH", "default", "secret", "SETNAME", "authed");
        Assert.Equal('%', map.Kind);
        RespAssert.Bulk("v", hello.Call("GET", "k"));
        RespAssert.Bulk("authed", hello.Call("CLIENT", "GETNAME"));
    }

    [Fact]
    public void UnauthenticatedClientsCannotSendLargeRequests()
    {
        using var server = ServerProcess.Start("--requirepass", "secret");
        using var big = server.Connect();
        big.SendRaw("*11\r\n");
        RespAssert.Error("ERR Protocol error: unauthenticated multibulk length", big.Read());
        Assert.True(big.IsClosedByServer());

        using var bulk = server.Connect();
        bulk.SendRaw("*2\r\n$4\r\nAUTH\r\n$16385\r\n");
        RespAssert.Error("ERR Protocol error: unauthenticated bulk length", bulk.Read());
        Assert.True(bulk.IsClosedByServer());

        // Ten arguments and 16 KB are still fine before AUTH, and the limits go away after it.
        using var c = server.Connect();
        RespAssert.Error("NOAUTH Authentication required.", c.Call("ECHO", "1", "2", "3", "4", "5", "6", "7", "8", "9"));
        RespAssert.Ok(c.Call("AUTH", "secret"));
        string large = new('x', 100_000);
        RespAssert.Ok(c.Call("SET", "large", large));
        RespAssert.Bulk(large, c.Call("GET", "large"));
        RespAssert.Integer(0, c.Call("DEL", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"));
    }

    [Fact]
    public void CommandsPipelinedAfterAuthAreParsedAsAuthenticated()
    {
        using var server = ServerProcess.Start("--requirepass", "secret");
        using var c = server.Connect();
        string large = new('y', 50_000);
        c.SendRaw(RespClient.EncodeAll(
            ["AUTH", "secret"],
            ["SET", "after-auth", large],
            ["DEL", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]));
        RespAssert.Ok(c.Read());
        RespAssert.Ok(c.Read());
        RespAssert.Integer(0, c.Read());
        RespAssert.Bulk(large, c.Call("GET", "after-auth"));
    }

    [Fact]
    public void CommandsPipelinedAfterResetAreParsedAsUnauthenticated()
    {
        using var server = ServerProcess.Start("--requirepass", "secret");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", "secret"));
        c.SendRaw(RespClient.EncodeAll(
            ["RESET"],
            ["DEL", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]));
        RespAssert.Simple("RESET", c.Read());
        RespAssert.Error("ERR Protocol error: unauthenticated multibulk length", c.Read());
        Assert.True(c.IsClosedByServer());
    }

    [Fact]
    public void ResetRestoresANewConnectionsState()
    {
        using var c = shared.Connect();
        long id = c.Call("CLIENT", "ID").Integer;
        Assert.Equal('%', c.Call("HELLO", "3").Kind);
        RespAssert.Ok(c.Call("SELECT", "5"));
        RespAssert.Ok(c.Call("SET", "proto:reset", "in-db-5"));
        RespAssert.Ok(c.Call("CLIENT", "SETNAME", "before-reset"));
        RespAssert.Ok(c.Call("CLIENT", "NO-EVICT", "on"));

        RespAssert.Simple("RESET", c.Call("RESET"));

        Assert.Equal('$', c.Call("GET", "proto:reset").Kind);           // back to db 0 and RESP2
        Assert.Equal('$', c.Call("CLIENT", "GETNAME").Kind);
        Assert.True(c.Call("CLIENT", "GETNAME").IsNull);
        string info = c.Call("CLIENT", "INFO").Text!;
        Assert.Contains(" db=0 ", info);
        Assert.Contains(" flags=N ", info);
        RespAssert.Integer(id, c.Call("CLIENT", "ID"));                   // same connection
        RespAssert.Ok(c.Call("SELECT", "5"));
        RespAssert.Bulk("in-db-5", c.Call("GET", "proto:reset"));
    }

    [Fact]
    public void ResetDeauthenticatesWhenAPasswordIsRequired()
    {
        using var server = ServerProcess.Start("--requirepass", "secret");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", "secret"));
        RespAssert.Simple("PONG", c.Call("PING"));
        RespAssert.Simple("RESET", c.Call("RESET"));
        RespAssert.Error("NOAUTH Authentication required.", c.Call("PING"));
    }

    [Fact]
    public void QuitRepliesOkAndCloses()
    {
        using var c = shared.Connect();
        c.SendRaw(RespClient.Encode("QUIT"));
        RespAssert.Ok(c.Read());
        Assert.True(c.IsClosedByServer());
    }

    [Fact]
    public void QuitAnswersTheCommandsPipelinedBeforeIt()
    {
        using var c = shared.Connect();
        c.SendRaw(RespClient.EncodeAll(
            ["SET", "proto:quit", "v"],
            ["QUIT"],
            ["SET", "proto:quit", "after-quit"]));
        RespAssert.Ok(c.Read());
        RespAssert.Ok(c.Read());
        Assert.True(c.IsClosedByServer());
        using var other = shared.Connect();
        RespAssert.Bulk("v", other.Call("GET", "proto:quit"));
    }

    [Fact]
    public void ClientIdSetnameGetname()
    {
        using var a = shared.Connect();
        using var b = shared.Connect();
        long idA = a.Call("CLIENT", "ID").Integer;
        long idB = b.Call("CLIENT", "ID").Integer;
        Assert.True(idA > 0 && idB > 0 && idA != idB, $"ids {idA} and {idB}");

        Assert.True(a.Call("CLIENT", "GETNAME").IsNull);
        RespAssert.Ok(a.Call("CLIENT", "SETNAME", "proto-name-a"));
        RespAssert.Bulk("proto-name-a", a.Call("CLIENT", "GETNAME"));
        RespAssert.Error("ERR Client names cannot contain spaces, newlines or special characters.", a.Call("CLIENT", "SETNAME", "has space"));
        RespAssert.Bulk("proto-name-a", a.Call("CLIENT", "GETNAME"));
        RespAssert.Ok(a.Call("CLIENT", "SETNAME", ""));   // an empty name clears it
        Assert.True(a.Call("CLIENT", "GETNAME").IsNull);
    }

    [Fact]
    public void ClientListAndInfoDescribeConnections()
    {
        using var a = shared.Connect();
        using var b = shared.Connect();
        long idA = a.Call("CLIENT", "ID").Integer;
        long idB = b.Call("CLIENT", "ID").Integer;
        RespAssert.Ok(a.Call("CLIENT", "SETNAME", "proto-list-a"));
        RespAssert.Ok(a.Call("SELECT", "3"));

        string list = b.Call("CLIENT", "LIST").Text!;
        Assert.EndsWith("\n", list);
        string lineA = list.Split('\n').Single(l => l.StartsWith($"id={idA} "));
        Assert.Contains(" name=proto-list-a ", lineA);
        Assert.Contains(" db=3 ", lineA);
        Assert.Contains(" cmd=select ", lineA);
        Assert.Contains(list.Split('\n'), l => l.StartsWith($"id={idB} "));

        string onlyA = b.Call("CLIENT", "LIST", "ID", idA.ToString()).Text!;
        Assert.Equal(lineA.Split(" age=")[0], onlyA.TrimEnd('\n').Split(" age=")[0]);
        Assert.Single(onlyA.TrimEnd('\n').Split('\n'));
        RespAssert.Error("ERR Invalid client ID", b.Call("CLIENT", "LIST", "ID", "abc"));

        string info = a.Call("CLIENT", "INFO").Text!;
        Assert.Single(info.TrimEnd('\n').Split('\n'));
        Assert.StartsWith($"id={idA} addr=127.0.0.1:", info);
        foreach (string field in new[] { " laddr=", " fd=", " name=proto-list-a ", " age=", " idle=", " flags=N ", " db=3 ", " cmd=client|info ", " user=default ", " resp=2 " })
            Assert.Contains(field, info);
    }

    [Fact]
    public void ClientSetinfoRecordsLibraryNameAndVersion()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("CLIENT", "SETINFO", "LIB-NAME", "proto-lib"));
        RespAssert.Ok(c.Call("CLIENT", "SETINFO", "lib-ver", "1.2.3"));
        string info = c.Call("CLIENT", "INFO").Text!;
        Assert.Contains(" lib-name=proto-lib ", info);
        Assert.Contains(" lib-ver=1.2.3", info);
        RespAssert.Error("ERR lib-name cannot contain spaces, newlines or special characters.", c.Call("CLIENT", "SETINFO", "LIB-NAME", "a b"));
        RespAssert.Error("ERR Unrecognized option 'bogus'", c.Call("CLIENT", "SETINFO", "bogus", "x"));
    }

    [Fact]
    public void ClientNoEvictAndNoTouchSetTheirFlags()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("CLIENT", "NO-EVICT", "on"));
        RespAssert.Ok(c.Call("CLIENT", "NO-TOUCH", "ON"));
        Assert.Contains(" flags=eT ", c.Call("CLIENT", "INFO").Text);
        RespAssert.Ok(c.Call("CLIENT", "NO-EVICT", "off"));
        RespAssert.Ok(c.Call("CLIENT", "NO-TOUCH", "off"));
        Assert.Contains(" flags=N ", c.Call("CLIENT", "INFO").Text);
        RespAssert.Error("ERR syntax error", c.Call("CLIENT", "NO-EVICT", "maybe"));
        RespAssert.Error("ERR syntax error", c.Call("CLIENT", "NO-TOUCH", "maybe"));
    }

    [Fact]
    public void ClientReplyOffSuppressesRepliesUntilOn()
    {
        using var c = shared.Connect();
        c.SendRaw(RespClient.EncodeAll(
            ["CLIENT", "REPLY", "OFF"],
            ["SET", "proto:reply-off", "silent"],
            ["GET", "proto:reply-off"],
            ["NOSUCHCOMMAND"],
            ["CLIENT", "REPLY", "ON"],
            ["GET", "proto:reply-off"]));
        RespAssert.Ok(c.Read());                 // CLIENT REPLY ON is the first reply
        RespAssert.Bulk("silent", c.Read());     // the silent SET did run
    }

    [Fact]
    public void ClientReplySkipDropsOnlyTheNextCommandsReply()
    {
        using var c = shared.Connect();
        c.SendRaw(RespClient.EncodeAll(
            ["CLIENT", "REPLY", "SKIP"],
            ["SET", "proto:reply-skip", "skipped"],
            ["GET", "proto:reply-skip"],
            ["PING"]));
        RespAssert.Bulk("skipped", c.Read());    // SKIP itself and the SET answer nothing
        RespAssert.Simple("PONG", c.Read());
    }

    [Fact]
    public void ClientKillByIdClosesOnlyThatConnection()
    {
        using var victim = shared.Connect();
        using var bystander = shared.Connect();
        using var admin = shared.Connect();
        long victimId = victim.Call("CLIENT", "ID").Integer;
        RespAssert.Simple("PONG", bystander.Call("PING"));

        RespAssert.Integer(1, admin.Call("CLIENT", "KILL", "ID", victimId.ToString()));
        Assert.True(victim.IsClosedByServer());
        RespAssert.Simple("PONG", bystander.Call("PING"));
        RespAssert.Simple("PONG", admin.Call("PING"));
        Poll.Until(() => !admin.Call("CLIENT", "LIST").Text!.Split('\n').Any(l => l.StartsWith($"id={victimId} ")),
            "the killed client left CLIENT LIST");
        RespAssert.Integer(0, admin.Call("CLIENT", "KILL", "ID", victimId.ToString()));
        RespAssert.Error("ERR client-id should be greater than 0", admin.Call("CLIENT", "KILL", "ID", "0"));
    }

    [Fact]
    public void ClientKillByAddressInBothForms()
    {
        using var first = shared.Connect();
        using var second = shared.Connect();
        using var bystander = shared.Connect();
        using var admin = shared.Connect();
        string AddressOf(RespClient c) => c.Call("CLIENT", "INFO").Text!.Split(' ').Single(f => f.StartsWith("addr="))["addr=".Length..];

        RespAssert.Integer(1, admin.Call("CLIENT", "KILL", "ADDR", AddressOf(first)));
        Assert.True(first.IsClosedByServer());

        RespAssert.Ok(admin.Call("CLIENT", "KILL", AddressOf(second)));
        Assert.True(second.IsClosedByServer());

        RespAssert.Error("ERR No such client", admin.Call("CLIENT", "KILL", "1.2.3.4:5"));
        RespAssert.Simple("PONG", bystander.Call("PING"));
        // SKIPME defaults to yes: killing your own address with the filter form spares you.
        RespAssert.Integer(0, admin.Call("CLIENT", "KILL", "ADDR", AddressOf(admin)));
        RespAssert.Simple("PONG", admin.Call("PING"));
    }

    [Fact]
    public void SelectChecksTheDatabaseRange()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SELECT", "15"));
        RespAssert.Error("ERR DB index is out of range", c.Call("SELECT", "16"));
        RespAssert.Error("ERR DB index is out of range", c.Call("SELECT", "-1"));
        RespAssert.Error("ERR value is not an integer or out of range", c.Call("SELECT", "abc"));
        Assert.Contains(" db=15 ", c.Call("CLIENT", "INFO").Text);
    }

    [Fact]
    public void DatabasesAreSeparate()
    {
        using var c = shared.Connect();
        RespAssert.Ok(c.Call("SELECT", "7"));
        RespAssert.Ok(c.Call("SET", "proto:db", "seven"));
        RespAssert.Ok(c.Call("SELECT", "8"));
        Assert.True(c.Call("GET", "proto:db").IsNull);
        RespAssert.Ok(c.Call("SELECT", "7"));
        RespAssert.Bulk("seven", c.Call("GET", "proto:db"));
    }

    [Fact]
    public void UnknownCommandErrorQuotesTheArgumentsAsRedis7()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR unknown command 'foo', with args beginning with: 'a' 'b' ", c.Call("foo", "a", "b"));
        RespAssert.Error("ERR unknown command 'foo', with args beginning with: ", c.Call("foo"));
        // Redis caps the quoted arguments at 128 characters in total, and the name at 128.
        string a = new('a', 100), b = new('b', 100);
        RespAssert.Error($"ERR unknown command 'foo', with args beginning with: '{a}' '{new string('b', 25)}' ", c.Call("foo", a, b, "c"));
        RespAssert.Error($"ERR unknown command '{new string('f', 128)}', with args beginning with: 'x' ", c.Call(new string('f', 200), "x"));
        // Line breaks in an argument cannot break the reply line.
        RespAssert.Error("ERR unknown command 'foo', with args beginning with: 'a  b' ", c.Call("foo", "a\r\nb"));
        RespAssert.Simple("PONG", c.Call("PING"));
    }

    [Fact]
    public void WrongArityErrorNamesTheCommand()
    {
        using var c = shared.Connect();
        RespAssert.Error("ERR wrong number of arguments for 'get' command", c.Call("GET"));
        RespAssert.Error("ERR wrong number of arguments for 'get' command", c.Call("get", "a", "b"));
        RespAssert.Error("ERR wrong number of arguments for 'ping' command", c.Call("PING", "a", "b"));
        RespAssert.Error("ERR wrong number of arguments for 'client' command", c.Call("CLIENT"));
        RespAssert.Error("ERR wrong number of arguments for 'client|setname' command", c.Call("CLIENT", "SETNAME"));
        RespAssert.Error("ERR unknown subcommand 'bogus'. Try CLIENT HELP.", c.Call("CLIENT", "bogus"));
    }
}
