using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Acl;

/// <summary>
/// Users declared where Redis declares them: "user" lines in the configuration file (written back
/// by CONFIG REWRITE), or an aclfile read at start and by ACL LOAD (all or nothing) and written by
/// ACL SAVE; never both. The files' lines and the errors side by side with redis-server 7.0.
/// </summary>
public sealed class AclFileTests
{
    private const string Alice = "user alice on >a1 ~a:* +get";

    [Fact]
    public void AnAclFileIsLoadedSavedAndReloadedAllOrNothing()
    {
        using var dir = new TempDirectory();
        using var redisDir = new TempDirectory();
        string ours = dir.File("users.acl"), theirs = redisDir.File("users.acl");
        File.WriteAllText(ours, Alice + "\n");
        File.WriteAllText(theirs, Alice + "\n");
        using var server = ServerProcess.Start("--aclfile", ours);
        using var redis = RealRedisServer.Start("--aclfile", theirs);
        foreach (var (c, file) in new[] { (server.Connect(), ours), (redis.Connect(), theirs) })
        {
            using (c)
            {
                RespAssert.BulkArray(c.Call("ACL", "USERS"), "alice", "default");
                RespAssert.Ok(c.Call("ACL", "SETUSER", "bob", "on", ">b", "+@read"));
                RespAssert.Ok(c.Call("ACL", "SAVE"));
                var saved = File.ReadAllLines(file);
                Assert.Equal(3, saved.Length);
                Assert.StartsWith("user alice on #", saved[0]);
                Assert.StartsWith("user bob on #", saved[1]);
                Assert.Equal("user default on nopass ~* &* +@all", saved[2]);
                // Ours writes the password digests for the server's user alone.
                if (file == ours && !OperatingSystem.IsWindows())
                    Assert.Equal(UnixFileMode.None, File.GetUnixFileMode(ours) & (UnixFileMode.GroupRead | UnixFileMode.OtherRead | UnixFileMode.GroupWrite | UnixFileMode.OtherWrite));

                // A bad line: nothing changes, and the error names the line.
                File.WriteAllText(file, "user carol on >c +get\nuser dave bogus\n");
                RespAssert.Error($"ERR {file}:2: Syntax error. WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
                    c.Call("ACL", "LOAD"));
                RespAssert.BulkArray(c.Call("ACL", "USERS"), "alice", "bob", "default");

                File.WriteAllText(file, "user carol on >c +get\n");
                RespAssert.Ok(c.Call("ACL", "LOAD"));
                RespAssert.BulkArray(c.Call("ACL", "USERS"), "carol", "default");
            }
        }
    }

    [Fact]
    public void UserLinesDeclareUsersAndConfigRewriteWritesThemBack()
    {
        using var dir = new TempDirectory();
        string file = dir.File("server.conf");
        File.WriteAllText(file, "# users\n" + Alice + "\nmaxclients 321\n");
        using (var server = ServerProcess.StartWith(file))
        using (var c = server.Connect())
        {
            RespAssert.BulkArray(c.Call("ACL", "USERS"), "alice", "default");
            RespAssert.Ok(c.Call("AUTH", "alice", "a1"));
            RespAssert.Ok(c.Call("AUTH", "default", "x"));
            RespAssert.Ok(c.Call("ACL", "SETUSER", "bob", "on", ">b", "+@read"));
            // Like Redis: there is no "user" setting to CONFIG SET.
            RespAssert.Error("ERR Unknown option or number of arguments for CONFIG SET - 'user'", c.Call("CONFIG", "SET", "user", "x"));
            RespAssert.Ok(c.Call("CONFIG", "REWRITE"));
        }
        var lines = File.ReadAllLines(file);
        // The users take the user line's place in order; the rest come after (as redis-server rewrites them).
        Assert.Equal("# users", lines[0]);
        Assert.StartsWith("user alice on #", lines[1]);
        Assert.Equal("maxclients 321", lines[2]);
        Assert.Contains(lines, l => l.StartsWith("user bob on #", StringComparison.Ordinal));
        Assert.Contains("user default on nopass ~* &* +@all", lines);
        Assert.DoesNotContain(lines, l => l.Contains(">a1") || l.Contains(">b"));

        using var again = ServerProcess.StartWith(file);
        using var check = again.Connect();
        RespAssert.BulkArray(check.Call("ACL", "USERS"), "alice", "bob", "default");
        RespAssert.Ok(check.Call("AUTH", "bob", "b"));
    }

    [Fact]
    public void UserLinesAndAnAclFileTogetherStopTheStartAsInRedis()
    {
        using var dir = new TempDirectory();
        File.WriteAllText(dir.File("users.acl"), Alice + "\n");
        string file = dir.File("server.conf");
        File.WriteAllText(file, $"user erin on >e +get\naclfile {dir.File("users.acl")}\n");
        var (exitCode, output) = ServerProcess.RunUntilExitWith(file);
        Assert.Equal(1, exitCode);
        Assert.Contains("please define either an ACL file or declare users directly in your redis.conf, but not both.", output);

        File.WriteAllText(file, "user erin on >e-Pa55 bogus\n");
        (exitCode, output) = ServerProcess.RunUntilExitWith(file);
        Assert.Equal(1, exitCode);
        Assert.Contains("Error in user declaration 'erin'", output);
        Assert.DoesNotContain("e-Pa55", output);
    }
}
