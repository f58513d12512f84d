using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// enable-protected-configs as in Redis 7: settings that name files or directories (dir,
/// dbfilename, ...) refuse CONFIG SET unless it is "yes", or "local" and the client is on
/// loopback; the setting itself is start-up only. Each case runs side by side with redis-server.
/// </summary>
public sealed class ProtectedConfigTests
{
    private static string Protected(string name) => $"ERR CONFIG SET failed (possibly related to argument '{name}') - can't set protected config";

    [Fact]
    public void PathSettingsRefuseConfigSetByDefaultAsRedisDoes()
    {
        using var elsewhere = new TempDirectory("protected-dir-");
        using var data = new TempDirectory("protected-data-");
        using var redis = RealRedisServer.Start();
        using var server = ServerProcess.Start("--dir", data.Path);
        using var ours = server.Connect();
        using var theirs = redis.Connect();

        foreach (var c in new[] { ours, theirs })
        {
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "enable-protected-configs"), "enable-protected-configs", "no");
            RespAssert.Error(Protected("dir"), c.Call("CONFIG", "SET", "dir", elsewhere.Path));
            RespAssert.Error(Protected("dbfilename"), c.Call("CONFIG", "SET", "dbfilename", "other.rdb"));
            // A protected setting anywhere in the list refuses the whole command, before anything is applied.
            RespAssert.Error(Protected("dir"), c.Call("CONFIG", "SET", "maxmemory-samples", "7", "dir", elsewhere.Path));
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "maxmemory-samples"), "maxmemory-samples", "5");
            RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'enable-protected-configs') - can't set immutable config",
                c.Call("CONFIG", "SET", "enable-protected-configs", "yes"));
        }

        // The client could not move the data directory, so turning the AOF on creates nothing elsewhere.
        RespAssert.BulkArray(ours.Call("CONFIG", "GET", "dir"), "dir", data.Path);
        RespAssert.Ok(ours.Call("CONFIG", "SET", "appendonly", "yes"));
        Assert.Empty(Directory.GetFileSystemEntries(elsewhere.Path));
        Assert.True(Directory.Exists(data.AppendDirectory), "the AOF went to the configured dir");
    }

    [Fact]
    public void YesAllowsSettingThemAsRedisDoes()
    {
        using var elsewhere = new TempDirectory("protected-dir-");
        using var data = new TempDirectory("protected-data-");
        using var redis = RealRedisServer.Start("--enable-protected-configs", "yes");
        using var server = ServerProcess.Start("--dir", data.Path, "--enable-protected-configs", "yes");
        using var ours = server.Connect();
        using var theirs = redis.Connect();

        foreach (var c in new[] { ours, theirs })
        {
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "enable-protected-configs"), "enable-protected-configs", "yes");
            RespAssert.Ok(c.Call("CONFIG", "SET", "dir", elsewhere.Path));
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "dir"), "dir", elsewhere.Path);
            RespAssert.Ok(c.Call("CONFIG", "SET", "dbfilename", "other.rdb"));
        }
    }

    [Fact]
    public void StartUpRefusesAnUnknownValue()
    {
        // The server reports bad options and exits; ServerProcess says so with everything it printed.
        string output = Assert.Throws<InvalidOperationException>(() => ServerProcess.Start("--enable-protected-configs", "sometimes").Dispose()).Message;
        Assert.Contains("option --enable-protected-configs: CONFIG SET failed (possibly related to argument 'enable-protected-configs') - argument(s) must be one of the following: no, yes, local", output);
    }

    [Fact]
    public void LocalAllowsLoopbackClientsOnlyAsRedisDoes()
    {
        using var ns = NetworkNamespace.Create();
        using var elsewhere = new TempDirectory("protected-dir-");
        using var redis = RealRedisServer.Start("--enable-protected-configs", "local", "--requirepass", "pw", "--bind", "127.0.0.1", ns.HostAddress);
        using var server = ServerProcess.Start("--enable-protected-configs", "local", "--requirepass", "pw", "--bind", "127.0.0.1", ns.HostAddress);

        foreach (int port in new[] { server.Port, redis.Port })
        {
            var remote = ns.Run("redis-cli", "redis-tools",
                "-h", ns.HostAddress, "-p", port.ToString(CultureInfo.InvariantCulture), "--no-auth-warning", "-a", "pw", "CONFIG", "SET", "dir", elsewhere.Path);
            // redis-cli prints an error reply followed by an empty line.
            Assert.Equal(Protected("dir") + "\n\n", remote.StandardOutput);

            using var local = new RespClient(port);
            RespAssert.Ok(local.Call("AUTH", "pw"));
            RespAssert.Ok(local.Call("CONFIG", "SET", "dir", elsewhere.Path));
            RespAssert.BulkArray(local.Call("CONFIG", "GET", "dir"), "dir", elsewhere.Path);
        }
    }
}
