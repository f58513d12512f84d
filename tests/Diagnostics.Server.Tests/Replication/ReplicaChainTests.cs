using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// A replica with replicas of its own (A -> B -> C, all this server): when B's history changes it
/// disconnects C, as Redis's disconnectSlaves does, so C asks again and follows B's new history
/// instead of going on with a stream that no longer continues its own.
/// </summary>
public sealed class ReplicaChainTests
{
    [Fact]
    public void AReplicaWhoseHistoryChangesMakesItsReplicasAskAgain()
    {
        using var a = ServerProcess.Start("--enable-debug-command", "yes");
        using var b = ServerProcess.Start("--enable-debug-command", "yes");
        using var c = ServerProcess.Start("--enable-debug-command", "yes");
        using var ca = a.Connect();
        using var cb = b.Connect();
        using var cc = c.Connect();
        RespAssert.Ok(ca.Call("SET", "from-a", "1"));
        RespAssert.Ok(cb.Call("REPLICAOF", "127.0.0.1", a.Port.ToString()));
        ReplicaSetup.WaitInSync(ca, cb);
        RespAssert.Ok(cc.Call("REPLICAOF", "127.0.0.1", b.Port.ToString()));
        ReplicaSetup.WaitInSync(cb, cc);
        Assert.Equal(1, ReplicaSetup.MasterStat(cb, "sync_full"));

        // B promoted (REPLICAOF NO ONE): a new replication ID; C is disconnected and continues
        // from B under it with a partial resync (+CONTINUE with the new ID).
        RespAssert.Ok(cb.Call("REPLICAOF", "NO", "ONE"));
        string promotedId = InfoFields.Get(cb, "replication", "master_replid");
        Poll.Until(() => InfoFields.Get(cc, "replication", "master_replid") == promotedId && InfoFields.Get(cc, "replication", "master_link_status") == "up",
            () => $"C learned B's new replication ID {promotedId}: {cc.Call("INFO", "replication").Text}");
        Assert.Equal(1, ReplicaSetup.MasterStat(cb, "sync_partial_ok"));
        Assert.Equal(1, ReplicaSetup.MasterStat(cb, "sync_full"));
        RespAssert.Ok(cb.Call("SET", "from-b", "1"));
        RespAssert.Integer(1, cb.Call("WAIT", "1", "5000"));
        RespAssert.Bulk("1", cc.Call("GET", "from-b"));

        // B follows A again: A does not know B's new history, so B syncs in full and its data is
        // replaced; C is disconnected again and syncs in full from B, ending with A's data.
        RespAssert.Ok(cb.Call("REPLICAOF", "127.0.0.1", a.Port.ToString()));
        ReplicaSetup.WaitInSync(ca, cb);
        string historyOfA = InfoFields.Get(ca, "replication", "master_replid");
        Poll.Until(() => InfoFields.Get(cc, "replication", "master_replid") == historyOfA && InfoFields.Get(cc, "replication", "master_link_status") == "up",
            () => $"C learned A's replication ID {historyOfA} through B: {cc.Call("INFO", "replication").Text}");
        ReplicaSetup.WaitInSync(cb, cc);
        Assert.Equal(2, ReplicaSetup.MasterStat(cb, "sync_full"));
        RespAssert.Integer(0, cc.Call("EXISTS", "from-b"));
        Assert.Equal(ca.Call("DEBUG", "DIGEST").Text, cc.Call("DEBUG", "DIGEST").Text);
    }
}
