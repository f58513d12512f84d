using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// REPLICAOF's replies and ROLE / INFO replication, side by side with a real redis-server 7.0
/// that is a replica of the same master.
/// </summary>
public sealed class ReplicaRoleTests
{
    [Fact]
    public void RoleAndInfoMatchARealReplicaOfTheSameMaster()
    {
        using var master = ReplicaSetup.StartMaster();
        using var ours = ServerProcess.Start();
        using var theirs = RealRedisServer.Start();
        using var m = master.Connect();
        using var r = ours.Connect();
        using var t = theirs.Connect();
        m.Call("SET", "k", "v");
        ReplicaSetup.Attach(r, master);
        ReplicaSetup.Attach(t, master);
        m.Call("SET", "k2", "v2");
        ReplicaSetup.WaitInSync(m, r);
        ReplicaSetup.WaitInSync(m, t);

        var oursRole = r.Call("ROLE").Array;
        var theirRole = t.Call("ROLE").Array;
        Assert.Equal(theirRole.Count, oursRole.Count);
        for (int i = 0; i < 4; i++)
            Assert.Equal(theirRole[i].ToString(), oursRole[i].ToString());
        Assert.Equal(theirRole[4].Integer, oursRole[4].Integer);

        string[] fieldsOurs = InfoLines(r), fieldsTheirs = InfoLines(t);
        Assert.Equal(fieldsTheirs.Select(Name), fieldsOurs.Select(Name));
        var a = InfoFields.Read(r, "replication");
        var b = InfoFields.Read(t, "replication");
        foreach (var field in new[] { "role", "master_host", "master_port", "master_link_status", "master_sync_in_progress",
                     "slave_read_repl_offset", "slave_repl_offset", "slave_priority", "slave_read_only", "replica_announced",
                     "master_failover_state", "master_replid", "master_replid2", "master_repl_offset", "second_repl_offset" })
            Assert.True(b[field] == a[field], $"{field}: redis-server says {b[field]}, this server {a[field]}");

        // The master lists both as its replicas, each with its listening port.
        string slaves = string.Join('\n', InfoLines(m).Where(l => l.StartsWith("slave", StringComparison.Ordinal)));
        Assert.Contains($"port={ours.Port},state=online", slaves);
        Assert.Contains($"port={theirs.Port},state=online", slaves);

        // Again while the link is down (the master gone): the same fields, in the same order.
        master.Dispose();
        Poll.Until(() => InfoFields.Get(r, "replication", "master_link_status") == "down" && InfoFields.Get(t, "replication", "master_link_status") == "down", "both links to go down");
        Assert.Equal(InfoLines(t).Select(Name), InfoLines(r).Select(Name));
        Assert.Equal(t.Call("ROLE").Array[3].Text is "connect" or "connecting" ? "ok" : "", r.Call("ROLE").Array[3].Text is "connect" or "connecting" ? "ok" : "");
    }

    [Fact]
    public void ReplicaOfRepliesAsRedis()
    {
        using var master = ReplicaSetup.StartMaster();
        using var ours = ServerProcess.Start();
        using var theirs = RealRedisServer.Start();
        using var r = ours.Connect();
        using var t = theirs.Connect();
        string port = master.Port.ToString();
        foreach (var (name, client) in new[] { ("this server", r), ("redis-server", t) })
        {
            Assert.True(client.Call("REPLICAOF", "NO", "ONE").ToString() == "+OK", name);
            Assert.Equal(t.Call("REPLICAOF", "127.0.0.1", "notaport").ToString(), client.Call("REPLICAOF", "127.0.0.1", "notaport").ToString());
        }
        foreach (var args in new[] { new[] { "REPLICAOF", "127.0.0.1", "70000" }, ["REPLICAOF", "127.0.0.1", "-1"], ["REPLICAOF", "127.0.0.1"], ["SLAVEOF"] })
            Assert.Equal(t.Call(args).ToString(), r.Call(args).ToString());
        foreach (var client in new[] { r, t })
        {
            RespAssert.Ok(client.Call("SLAVEOF", "127.0.0.1", port));
            RespAssert.Simple("OK Already connected to specified master", client.Call("REPLICAOF", "127.0.0.1", port));
            RespAssert.Ok(client.Call("REPLICAOF", "no", "one"));
            RespAssert.Ok(client.Call("REPLICAOF", "no", "one"));
        }
        Assert.Equal(t.Call("ROLE").ToString().Replace(t.Call("ROLE").Array[1].ToString(), ""), r.Call("ROLE").ToString().Replace(r.Call("ROLE").Array[1].ToString(), ""));
        // The settings read back as Redis's, old names included.
        foreach (var setting in new[] { "replica-read-only", "slave-read-only", "replica-serve-stale-data", "repl-timeout", "repl-ping-replica-period", "replica-priority", "slave-priority", "replica-announced", "replica-announce-ip", "replica-announce-port", "masterauth", "masteruser" })
            Assert.Equal(t.Call("CONFIG", "GET", setting).ToString(), r.Call("CONFIG", "GET", setting).ToString());
    }

    [Fact]
    public void ConfigGetAndRewriteShowTheMasterFollowedNow()
    {
        using var master = ReplicaSetup.StartMaster();
        using var directory = new TempDirectory();
        string configFile = directory.File("server.conf");
        File.WriteAllText(configFile, "# ours\nreplicaof 127.0.0.1 1\n");
        using var ours = ServerProcess.StartWith(configFile);
        using var theirs = RealRedisServer.Start();
        using var r = ours.Connect();
        using var t = theirs.Connect();
        string port = master.Port.ToString();
        RespAssert.Ok(t.Call("REPLICAOF", "127.0.0.1", port));
        RespAssert.Ok(r.Call("REPLICAOF", "127.0.0.1", port));
        Assert.Equal(t.Call("CONFIG", "GET", "replicaof").ToString(), r.Call("CONFIG", "GET", "replicaof").ToString());
        Assert.Equal(t.Call("CONFIG", "GET", "slaveof").ToString(), r.Call("CONFIG", "GET", "slaveof").ToString());
        // The file follows the master (what Sentinel's CONFIG REWRITE after REPLICAOF relies on).
        RespAssert.Ok(r.Call("CONFIG", "REWRITE"));
        var lines = File.ReadAllLines(configFile);
        Assert.Equal("# ours", lines[0]);
        Assert.Equal($"replicaof 127.0.0.1 {port}", lines[1]);
        Assert.Single(lines, l => l.Contains("replicaof", StringComparison.OrdinalIgnoreCase));

        // A master has no replicaof line: Redis removes it, so a restart does not follow the old master.
        RespAssert.Ok(t.Call("REPLICAOF", "NO", "ONE"));
        RespAssert.Ok(r.Call("REPLICAOF", "NO", "ONE"));
        Assert.Equal(t.Call("CONFIG", "GET", "replicaof").ToString(), r.Call("CONFIG", "GET", "replicaof").ToString());
        RespAssert.Ok(r.Call("CONFIG", "REWRITE"));
        Assert.DoesNotContain(File.ReadAllLines(configFile), l => l.Contains("replicaof", StringComparison.OrdinalIgnoreCase));
    }

    [Fact]
    public void ClientsBlockedOnAMasterThatBecomesAReplicaAreToldAndClosed()
    {
        using var master = ReplicaSetup.StartMaster();
        using var ours = ServerProcess.Start();
        using var theirs = RealRedisServer.Start();
        foreach (var (name, port) in new[] { ("this server", ours.Port), ("redis-server", theirs.Port) })
        {
            using var admin = new RespClient(port);
            using var blocked = new RespClient(port);
            blocked.Send("BLPOP", "list", "0");
            Poll.Until(() => InfoFields.Get(admin, "clients", "blocked_clients") == "1", $"the BLPOP to block on {name}");
            RespAssert.Ok(admin.Call("REPLICAOF", "127.0.0.1", master.Port.ToString()));
            RespAssert.Error("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)", blocked.Read());
            Assert.True(blocked.IsClosedByServer(), $"{name} closes the unblocked client");
            RespAssert.Ok(admin.Call("REPLICAOF", "NO", "ONE"));
        }
    }

    private static string[] InfoLines(RespClient client)
        => client.Call("INFO", "replication").Text!.Split("\r\n", StringSplitOptions.RemoveEmptyEntries).Where(l => !l.StartsWith('#')).ToArray();

    private static string Name(string line) => line[..line.IndexOf(':')];
}
