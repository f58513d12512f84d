using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// The master link's life with a real redis-server 7.0 master: partial resyncs after the link
/// drops or the master restarts, a full resync when the master's backlog no longer has what the
/// replica needs, the handshake's AUTH, and the replica's own rules (read-only, stale data).
/// </summary>
public sealed class ReplicaLinkTests
{
    [Fact]
    public void AMasterRestartIsContinuedWithAPartialResync()
    {
        using var first = ReplicaSetup.StartMaster();
        using var ours = ServerProcess.Start();
        using var r = ours.Connect();
        using (var m = first.Connect())
        {
            m.Call("SET", "before", "1");
            ReplicaSetup.Attach(r, first);
            m.Call("RPUSH", "list", "a", "b");
            ReplicaSetup.WaitInSync(m, r);
        }
        string oldReplId = InfoFields.Get(r, "replication", "master_replid");
        // SHUTDOWN SAVE keeps the master's replid and offset in its RDB.
        first.Shutdown("SAVE");
        Poll.Until(() => InfoFields.Get(r, "replication", "master_link_status") == "down", "the replica to see its master gone");
        using var master = RealRedisServer.Restart(first, "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes");
        using var m2 = master.Connect();
        ReplicaSetup.WaitInSync(m2, r);
        Assert.Equal(1, ReplicaSetup.MasterStat(m2, "sync_partial_ok"));
        Assert.Equal(0, ReplicaSetup.MasterStat(m2, "sync_full"));
        Poll.Until(() => ours.Output.Contains("Successful partial resynchronization with master.") && ours.Output.Contains("Master replication ID changed to"),
            "the partial resync to be logged");
        var info = InfoFields.Read(r, "replication");
        Assert.Equal(oldReplId, info["master_replid2"]);
        Assert.Equal(InfoFields.Get(m2, "replication", "master_replid"), info["master_replid"]);
        m2.Call("SET", "after", "2");
        ReplicaSetup.WaitInSync(m2, r);
        DatasetSnapshot.Read(r).AssertSameAs(DatasetSnapshot.Read(m2), "after the master's restart");
    }

    [Fact]
    public void KillingTheMasterClientReconnectsWithAPartialResync()
    {
        using var master = ReplicaSetup.StartMaster();
        using var ours = ServerProcess.Start();
        using var m = master.Connect();
        using var r = ours.Connect();
        ReplicaSetup.Attach(r, master);
        m.Call("SET", "a", "1");
        ReplicaSetup.WaitInSync(m, r);
        RespAssert.Integer(1, r.Call("CLIENT", "KILL", "TYPE", "master"));
        Poll.Until(() => ReplicaSetup.MasterStat(m, "sync_partial_ok") == 1, "the replica to come back with a partial resync");
        m.Call("SET", "b", "2");
        ReplicaSetup.WaitInSync(m, r);
        RespAssert.Bulk("2", r.Call("GET", "b"));
        Assert.Equal(1, ReplicaSetup.MasterStat(m, "sync_full"));
    }

    [Fact]
    public void ABacklogThatMovedOnForcesAFullResync()
    {
        using var master = ReplicaSetup.StartMaster("--repl-backlog-size", "16kb");
        using var ours = ServerProcess.Start();
        using var m = master.Connect();
        using var r = ours.Connect();
        ReplicaSetup.Attach(r, master);
        m.Call("SET", "a", "1");
        ReplicaSetup.WaitInSync(m, r);
        RespAssert.Integer(1, r.Call("CLIENT", "KILL", "TYPE", "master"));
        Poll.Until(() => InfoFields.Get(r, "replication", "master_link_status") == "down", "the link to go down");
        // Far more than the backlog keeps, written before the replica retries (a second later).
        string big = new('x', 200_000);
        for (int i = 0; i < 5; i++)
            RespAssert.Ok(m.Call("SET", "big" + i, big));
        Poll.Until(() => ReplicaSetup.MasterStat(m, "sync_full") == 2, "a second full sync");
        ReplicaSetup.WaitInSync(m, r);
        // The first attach was refused a partial sync too (a fresh server asks with its own ID, as Redis's do).
        Assert.Equal(2, ReplicaSetup.MasterStat(m, "sync_partial_err"));
        Assert.Equal(m.Call("DEBUG", "DIGEST").Text, r.Call("DEBUG", "DIGEST").Text);
    }

    [Fact]
    public void NormalClientsCannotWriteToAReadOnlyReplica()
    {
        using var master = ReplicaSetup.StartMaster();
        using var ours = ServerProcess.Start();
        using var r = ours.Connect();
        ReplicaSetup.Attach(r, master);
        RespAssert.Error("READONLY You can't write against a read only replica.", r.Call("SET", "k", "v"));
        r.Call("MULTI");
        RespAssert.Error("READONLY You can't write against a read only replica.", r.Call("INCR", "n"));
        RespAssert.Error("EXECABORT Transaction discarded because of previous errors.", r.Call("EXEC"));
        RespAssert.Ok(r.Call("CONFIG", "SET", "replica-read-only", "no"));
        RespAssert.Ok(r.Call("SET", "k", "v"));
        Assert.Equal("0", InfoFields.Get(r, "replication", "slave_read_only"));
    }

    [Fact]
    public void StaleDataIsRefusedWhileTheLinkIsDownWhenConfigured()
    {
        int nobody = ServerProcess.FreePort();
        using var ours = ServerProcess.Start("--replica-serve-stale-data", "no");
        using var r = ours.Connect();
        RespAssert.Ok(r.Call("REPLICAOF", "127.0.0.1", nobody.ToString()));
        RespAssert.Error("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", r.Call("GET", "k"));
        Assert.Equal("down", InfoFields.Get(r, "replication", "master_link_status"));
        // Between attempts the link is "connect", during one "connecting": either way not connected.
        Assert.Contains(r.Call("ROLE").Array[3].Text, new[] { "connect", "connecting" });
        RespAssert.Ok(r.Call("CONFIG", "SET", "replica-serve-stale-data", "yes"));
        RespAssert.Null(r.Call("GET", "k"));
        Poll.Until(() => ours.Output.Contains("Error condition on socket for SYNC"), "the failed connection to be logged");
    }

    [Fact]
    public void ReplicaOfNoOnePromotesKeepingTheDataUnderANewHistory()
    {
        using var master = ReplicaSetup.StartMaster();
        using var ours = ServerProcess.Start();
        using var m = master.Connect();
        using var r = ours.Connect();
        m.Call("SET", "k", "v");
        ReplicaSetup.Attach(r, master);
        m.Call("SET", "ttl", "v", "PX", "100");
        ReplicaSetup.WaitInSync(m, r);
        var before = InfoFields.Read(r, "replication");
        RespAssert.Ok(r.Call("REPLICAOF", "NO", "ONE"));
        var after = InfoFields.Read(r, "replication");
        Assert.Equal("master", after["role"]);
        Assert.Equal(before["master_replid"], after["master_replid2"]);
        Assert.NotEqual(before["master_replid"], after["master_replid"]);
        Assert.Equal(40, after["master_replid"].Length);
        Assert.Equal(long.Parse(before["master_repl_offset"]) + 1, long.Parse(after["second_repl_offset"]));
        RespAssert.Bulk("v", r.Call("GET", "k"));
        RespAssert.Ok(r.Call("SET", "mine", "1"));
        // A master expires keys itself again.
        Poll.Until(() => r.Call("DBSIZE").Integer == 2, "the expired key to be deleted by the promoted server");
        var role = r.Call("ROLE").Array;
        Assert.Equal("master", role[0].Text);
        Assert.Empty(role[2].Array);
    }

    [Fact]
    public void TheHandshakeAuthenticatesWithMasterauthWithoutShowingIt()
    {
        const string password = "s3cret-for-the-master";
        using var master = ReplicaSetup.StartMaster("--requirepass", password);
        using var ours = ServerProcess.Start("--masterauth", "wrong-password");
        using var r = ours.Connect();
        RespAssert.Ok(r.Call("REPLICAOF", "127.0.0.1", master.Port.ToString()));
        Poll.Until(() => ours.Output.Contains("Unable to AUTH to MASTER"), "the refused AUTH to be logged");
        Assert.Equal("down", InfoFields.Get(r, "replication", "master_link_status"));
        RespAssert.Ok(r.Call("CONFIG", "SET", "masterauth", password));
        using var m = master.Connect();
        RespAssert.Ok(m.Call("AUTH", password));
        m.Call("SET", "k", "v");
        ReplicaSetup.WaitInSync(m, r);
        RespAssert.Bulk("v", r.Call("GET", "k"));
        Assert.DoesNotContain(password, ours.Output);
        Assert.DoesNotContain("wrong-password", ours.Output);
    }
}
