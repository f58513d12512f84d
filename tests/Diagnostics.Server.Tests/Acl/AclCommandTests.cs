using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Acl;

/// <summary>
/// ACL users side by side with redis-server 7.0: the same ACL commands get the same replies and
/// errors, the same rules allow and refuse the same calls with the same NOPERM texts, AUTH and
/// redis-cli --user/--pass log in as a user, and denials and failed logins reach ACL LOG.
/// </summary>
public sealed class AclCommandTests
{
    /// <summary>Runs <paramref name="test"/> against our server, then against redis-server, each with an admin connection and its port.</summary>
    private static void OnBoth(Action<RespClient, int> test)
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        foreach (var (port, connect) in new (int, Func<RespClient>)[] { (ours.Port, ours.Connect), (redis.Port, redis.Connect) })
        {
            using var admin = connect();
            test(admin, port);
        }
    }

    private static string[] Rules(string line) => line.Split(' ');

    [Fact]
    public void ASelectorPatternEndingInAParenthesisIsDescribedAsRedisDescribesIt()
    {
        // Found by the acl fuzz target: such a description does not parse back as the same
        // selector, in redis-server as here; what matters is that both say the same.
        OnBoth((c, _) =>
        {
            RespAssert.Ok(c.Call("ACL", "SETUSER", "paren", "(~))", "(&n))"));
            RespAssert.Bulk("user paren off resetchannels -@all (~) resetchannels -@all) (resetchannels &n) -@all)", c.Call("ACL", "LIST").Items!.Single(i => i.Text!.StartsWith("user paren", StringComparison.Ordinal)));
        });
    }

    [Fact]
    public void UsersAreCreatedListedDescribedAndDeletedAsInRedis()
    {
        OnBoth((c, _) =>
        {
            RespAssert.BulkArray(c.Call("ACL", "LIST"), "user default on nopass ~* &* +@all");
            RespAssert.Ok(c.Call(["ACL", "SETUSER", "app", .. Rules("on >app-Pa55 ~app:* %R~ro:* &news.* +get +set -get")]));
            RespAssert.Ok(c.Call(["ACL", "SETUSER", "sel", .. Rules("+select|0 allkeys"), "(+set ~w:*)"]));
            RespAssert.Ok(c.Call("ACL", "SETUSER", "blank", "reset"));
            RespAssert.BulkArray(c.Call("ACL", "USERS"), "app", "blank", "default", "sel");
            RespAssert.BulkArray(c.Call("ACL", "LIST"),
                "user app on #" + Sha256("app-Pa55") + " ~app:* %R~ro:* resetchannels &news.* -@all +set",
                "user blank off sanitize-payload resetchannels -@all",
                "user default on nopass ~* &* +@all",
                "user sel off ~* resetchannels -@all +select|0 (~w:* resetchannels -@all +set)");

            var user = c.Call("ACL", "GETUSER", "sel").ToMap();
            RespAssert.BulkArray(user["flags"], "off");
            Assert.Empty(user["passwords"].Array);
            Assert.Equal("-@all +select|0", user["commands"].Text);
            Assert.Equal("~*", user["keys"].Text);
            Assert.Equal("", user["channels"].Text);
            var selector = Assert.Single(user["selectors"].Array).ToMap();
            Assert.Equal("-@all +set", selector["commands"].Text);
            Assert.Equal("~w:*", selector["keys"].Text);
            Assert.True(c.Call("ACL", "GETUSER", "nobody").IsNull);

            RespAssert.Integer(2, c.Call("ACL", "DELUSER", "blank", "sel", "nobody"));
            RespAssert.BulkArray(c.Call("ACL", "USERS"), "app", "default");
            RespAssert.Bulk("default", c.Call("ACL", "WHOAMI"));
        });
    }

    [Fact]
    public void HelpAndRespThreeRepliesHaveRedissShape()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        using var o = ours.Connect();
        using var r = redis.Connect();
        Assert.Equal(RespValue.Render(r.Call("ACL", "HELP").Array), RespValue.Render(o.Call("ACL", "HELP").Array));
        foreach (var c in new[] { o, r })
        {
            c.Call("HELLO", "3");
            RespAssert.Ok(c.Call(["ACL", "SETUSER", "u3", .. Rules("on >p ~k:* &ch +get (+set ~w:*)")]));
        }
        Assert.Equal(r.Call("ACL", "GETUSER", "u3").ToString(), o.Call("ACL", "GETUSER", "u3").ToString());
        Assert.Equal(r.Call("ACL", "GETUSER", "nobody").Kind, o.Call("ACL", "GETUSER", "nobody").Kind);
    }

    [Fact]
    public void RefusalsAnswerInRedisWords()
    {
        OnBoth((c, _) =>
        {
            RespAssert.Error("ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL", c.Call("ACL", "SETUSER", "u", "+nosuch"));
            RespAssert.Error("ERR Error in ACL SETUSER modifier 'bogus': Syntax error", c.Call("ACL", "SETUSER", "u", "on", "bogus"));
            RespAssert.Error("ERR Unmatched parenthesis in acl selector starting at '(+get'.", c.Call("ACL", "SETUSER", "u", "(+get"));
            // Nothing of a refused SETUSER is kept, not even the user.
            RespAssert.BulkArray(c.Call("ACL", "USERS"), "default");
            RespAssert.Error("ERR Usernames can't contain spaces or null characters", c.Call("ACL", "SETUSER", "a b"));
            RespAssert.Error("ERR The 'default' user cannot be removed", c.Call("ACL", "DELUSER", "default"));
            RespAssert.Error("ERR Unknown category 'nope'", c.Call("ACL", "CAT", "nope"));
            RespAssert.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096", c.Call("ACL", "GENPASS", "0"));
            Assert.Equal(64, c.Call("ACL", "GENPASS").Text!.Length);
            Assert.Equal(2, c.Call("ACL", "GENPASS", "5").Text!.Length);
            RespAssert.Error("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.",
                c.Call("ACL", "SAVE"));
            RespAssert.Error("ERR User 'nobody' not found", c.Call("ACL", "DRYRUN", "nobody", "GET", "x"));
            Assert.Contains("keyspace", c.Call("ACL", "CAT").Array.Select(v => v.Text));
            Assert.Contains("get", c.Call("ACL", "CAT", "string").Array.Select(v => v.Text));
        });
    }

    [Fact]
    public void AUserRunsWhatItsRulesAllowAndTheRestIsRefusedAndLogged()
    {
        OnBoth((admin, port) =>
        {
            RespAssert.Ok(admin.Call(["ACL", "SETUSER", "t", .. Rules("on >pw ~k:* %W~w:* &ch +get +set +incr +del +publish +client|list")]));
            string Cli(params string[] command)
                => ExternalTool.RedisCli(port, ["--user", "t", "--pass", "pw", "--no-auth-warning", .. command]).StandardOutput.Trim();

            Assert.Equal("OK", Cli("SET", "k:1", "v"));
            Assert.Equal("v", Cli("GET", "k:1"));
            Assert.Equal("NOPERM this user has no permissions to access one of the keys used as arguments", Cli("GET", "other"));
            Assert.Equal("NOPERM this user has no permissions to run the 'lpush' command", Cli("LPUSH", "k:l", "x"));
            Assert.Equal("NOPERM this user has no permissions to run the 'client|info' command", Cli("CLIENT", "INFO"));
            Assert.Equal("NOPERM this user has no permissions to access one of the channels used as arguments", Cli("PUBLISH", "other", "x"));
            Assert.Equal("0", Cli("PUBLISH", "ch", "x"));
            // A write-only pattern: overwriting and deleting are writes alone, reading is not allowed.
            Assert.Equal("OK", Cli("SET", "w:1", "v"));
            Assert.Equal("NOPERM this user has no permissions to access one of the keys used as arguments", Cli("GET", "w:1"));
            Assert.Equal("1", Cli("DEL", "w:1"));

            RespAssert.Ok(admin.Call("ACL", "DRYRUN", "t", "GET", "k:1"));
            RespAssert.Bulk("This user has no permissions to run the 'lpush' command", admin.Call("ACL", "DRYRUN", "t", "LPUSH", "k:1", "x"));
            RespAssert.Bulk("This user has no permissions to access the 'other' key", admin.Call("ACL", "DRYRUN", "t", "GET", "other"));

            // AUTH: a wrong password, an unknown user and a disabled one are one error.
            RespAssert.Error("WRONGPASS invalid username-password pair or user is disabled.", admin.Call("AUTH", "t", "wrong"));
            RespAssert.Error("WRONGPASS invalid username-password pair or user is disabled.", admin.Call("AUTH", "nobody", "x"));

            var log = admin.Call("ACL", "LOG").Array.Select(e => e.ToMap()).ToList();
            var auth = log.First(e => e["reason"].Text == "auth");
            Assert.Equal("nobody", auth["username"].Text);
            Assert.Equal("AUTH", auth["object"].Text); // the command as the client spelled it
            Assert.Equal("toplevel", auth["context"].Text);
            var key = log.First(e => e["reason"].Text == "key" && e["object"].Text == "other");
            Assert.Equal("t", key["username"].Text);
            Assert.Contains("user=t", key["client-info"].Text);
            Assert.Contains(log, e => e["reason"].Text == "command" && e["object"].Text == "lpush");
            Assert.Contains(log, e => e["reason"].Text == "channel" && e["object"].Text == "other");
            Assert.Equal(["count", "reason", "context", "object", "username", "age-seconds", "client-info"], log[0].Keys);
            Assert.DoesNotContain("wrong", RespValue.Render(admin.Call("ACL", "LOG").Array));
            RespAssert.Ok(admin.Call("ACL", "LOG", "RESET"));
            Assert.Empty(admin.Call("ACL", "LOG").Array);
        });
    }

    [Fact]
    public void AuthSwitchesUserAndDeletingAUserClosesItsConnections()
    {
        OnBoth((admin, port) =>
        {
            RespAssert.Ok(admin.Call(["ACL", "SETUSER", "reader", .. Rules("on >r ~* +@read +@transaction +acl|whoami")]));
            using var c = new RespClient(port);
            RespAssert.Ok(c.Call("AUTH", "reader", "r"));
            RespAssert.Bulk("reader", c.Call("ACL", "WHOAMI"));
            RespAssert.Error("NOPERM this user has no permissions to run the 'set' command", c.Call("SET", "k", "v"));
            // New rules apply to connections already logged in as the user.
            RespAssert.Ok(admin.Call("ACL", "SETUSER", "reader", "+set"));
            RespAssert.Ok(c.Call("SET", "k", "v"));
            var hello = c.Call("HELLO", "2", "AUTH", "default", "anything").Array;
            Assert.Contains(hello, v => v.Text == "proto");
            RespAssert.Bulk("default", c.Call("ACL", "WHOAMI"));
            RespAssert.Ok(c.Call("AUTH", "reader", "r"));
            // Queued commands are checked again at EXEC: the rules changed in between.
            RespAssert.Ok(c.Call("MULTI"));
            RespAssert.Simple("QUEUED", c.Call("SET", "k", "w"));
            RespAssert.Ok(admin.Call("ACL", "SETUSER", "reader", "-set"));
            var exec = c.Call("EXEC").Array;
            RespAssert.Error("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand", exec[0]);
            Assert.Equal("multi", admin.Call("ACL", "LOG", "1").Array[0].ToMap()["context"].Text);
            RespAssert.Integer(1, admin.Call("ACL", "DELUSER", "reader"));
            Assert.True(c.IsClosedByServer(), "a deleted user's connection is closed");
        });
    }

    [Fact]
    public void RequirepassIsTheDefaultUsersPassword()
    {
        OnBoth((admin, port) =>
        {
            RespAssert.Ok(admin.Call("CONFIG", "SET", "requirepass", "s3cret"));
            RespAssert.BulkArray(admin.Call("ACL", "LIST"), "user default on #" + Sha256("s3cret") + " ~* &* +@all");
            using var c = new RespClient(port);
            RespAssert.Error("NOAUTH Authentication required.", c.Call("GET", "k"));
            RespAssert.Ok(c.Call("AUTH", "default", "s3cret"));
            RespAssert.Ok(admin.Call("AUTH", "s3cret"));
            RespAssert.Ok(admin.Call("CONFIG", "SET", "requirepass", ""));
            RespAssert.BulkArray(admin.Call("ACL", "LIST"), "user default on nopass ~* &* +@all");
        });
    }

    [Fact]
    public void FailedLoginsAreCountedBySourceAndUserAndTheDoctorNamesThem()
    {
        using var server = ServerProcess.Start("--requirepass", "right-Pa55");
        using var c = server.Connect();
        for (int i = 0; i < 12; i++)
            RespAssert.Error("WRONGPASS invalid username-password pair or user is disabled.", c.Call("AUTH", "admin", "guess-" + i));
        RespAssert.Ok(c.Call("AUTH", "right-Pa55"));
        var acl = InfoFields.Read(c, "acl");
        Assert.Equal("1", acl["auth_failure_sources"]);
        var source = InfoFields.Parts(acl["auth_failure_source_0"]);
        Assert.Equal("127.0.0.1", source["addr"]);
        Assert.Equal("admin", source["user"]);
        Assert.Equal("12", source["count"]);
        // ACL LOG groups the twelve into one entry, as Redis does.
        Assert.Equal("1", InfoFields.Get(c, "acl", "acl_log_entries"));
        RespAssert.Integer(12, c.Call("ACL", "LOG").Array[0].ToMap()["count"]);
        var finding = DoctorProbe.Expect(server, "auth-failures", secret: "right-Pa55");
        Assert.Contains("127.0.0.1 as 'admin' (12 failures)", finding.Seen);
        Assert.DoesNotContain("guess-", RespValue.Render(c.Call("ACL", "LOG").Array));
    }

    private static string Sha256(string text) => Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(text)));
}
