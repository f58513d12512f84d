using Diagnostics.Server.Tests.DataTypes;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// This server as a master: a replica of this server (another one of ours, or a real
/// redis-server 7.0) gets what the master held before through a full sync's snapshot and what it
/// writes after through the stream, continues after a dropped link with a partial resync, and
/// WAIT counts it once it acknowledged. Compared key by key and by DEBUG DIGEST.
/// </summary>
public sealed class MasterSideTests
{
    private static void WriteHalf(RespClient c, bool first)
    {
        var workload = DataTypePersistenceTests.Workload;
        int half = workload.Length / 2;
        foreach (var command in first ? workload.Take(half) : workload.Skip(half))
        {
            var reply = c.Call(command);
            Assert.False(reply.IsError, $"{string.Join(' ', command)} failed: {reply}");
        }
    }

    private static void Attach(RespClient replica, int masterPort) => RespAssert.Ok(replica.Call("REPLICAOF", "127.0.0.1", masterPort.ToString()));

    [Theory]
    [InlineData(ServerTarget.Ours, "yes")]
    [InlineData(ServerTarget.Ours, "no")]
    [InlineData(ServerTarget.Redis, "yes")]
    [InlineData(ServerTarget.Redis, "no")]
    public void AReplicaOfThisServerGetsTheSnapshotThenTheStream(string replicaKind, string diskless)
    {
        using var master = ServerProcess.Start("--repl-diskless-sync", diskless);
        var (replica, connect) = ServerTarget.Start(replicaKind, "--enable-debug-command", "yes");
        using (replica)
        using (var m = master.Connect())
        using (var r = connect())
        {
            WriteHalf(m, first: true);
            RespAssert.Bulk("mlib", m.Call("FUNCTION", "LOAD", "#!lua name=mlib\nredis.register_function{function_name='mf', callback=function() return 7 end, flags={'no-writes'}}"));
            Attach(r, master.Port);
            ReplicaSetup.WaitInSync(m, r);
            Assert.Equal(1, ReplicaSetup.MasterStat(m, "sync_full"));

            // The stream: the rest of every type, a transaction, databases, a flush, expiry.
            WriteHalf(m, first: false);
            Pipeline.RunAll(m, Enumerable.Range(0, 2000).Select(i => new[] { "SET", "bulk:" + i, new string('x', i % 300) }));
            m.Call("MULTI");
            m.Call("INCR", "counter");
            m.Call("RPUSH", "tx:l", "a", "b");
            Assert.Equal(2, m.Call("EXEC").Array.Count);
            RespAssert.Ok(m.Call("SELECT", "4"));
            RespAssert.Ok(m.Call("SET", "db4:k", "v"));
            RespAssert.Ok(m.Call("FLUSHDB"));
            RespAssert.Ok(m.Call("SET", "db4:after", "v"));
            RespAssert.Ok(m.Call("SELECT", "0"));
            RespAssert.Ok(m.Call("SET", "short-lived", "v", "PX", "200"));
            Poll.Until(() => m.Call("EXISTS", "short-lived").Integer == 0, "the key to expire on the master");
            // Everything written so far is acknowledged by the one replica.
            RespAssert.Integer(1, m.Call("WAIT", "1", "5000"));
            ReplicaSetup.WaitInSync(m, r);

            DatasetSnapshot.Read(r).AssertSameAs(DatasetSnapshot.Read(m), $"a {replicaKind} replica against this master");
            Assert.Equal(m.Call("DEBUG", "DIGEST").Text, r.Call("DEBUG", "DIGEST").Text);
            RespAssert.Integer(7, r.Call("FCALL_RO", "mf", "0"));
            RespAssert.Integer(0, r.Call("EXISTS", "short-lived")); // the master's DEL reached it

            // The master lists it.
            var info = InfoFields.Read(m, "replication");
            Assert.Equal("1", info["connected_slaves"]);
            Assert.Contains("state=online", info["slave0"]);
            Assert.Equal("1", info["repl_backlog_active"]);
            var role = m.Call("ROLE").Array;
            RespAssert.Bulk("master", role[0]);
            Assert.Single(role[2].Array);

            // A dropped link continues from the backlog.
            m.Call("CLIENT", "KILL", "TYPE", "replica");
            RespAssert.Ok(m.Call("SET", "after-drop", "v"));
            ReplicaSetup.WaitInSync(m, r);
            Poll.Until(() => ReplicaSetup.MasterStat(m, "sync_partial_ok") == 1, "a partial resync");
            Assert.Equal(1, ReplicaSetup.MasterStat(m, "sync_full"));
            RespAssert.Bulk("v", r.Call("GET", "after-drop"));
            Assert.Equal(m.Call("DEBUG", "DIGEST").Text, r.Call("DEBUG", "DIGEST").Text);
        }
    }

    [Fact]
    public void AReplicaTooFarBehindTheBacklogResyncsInFull()
    {
        using var master = ServerProcess.Start("--repl-backlog-size", "16kb");
        using var replica = ServerProcess.Start();
        using var m = master.Connect();
        using var r = replica.Connect();
        RespAssert.Ok(m.Call("SET", "before", "1"));
        Attach(r, master.Port);
        ReplicaSetup.WaitInSync(m, r);
        // The replica stops following; 1 MB is written meanwhile, far past the 16 KB backlog.
        RespAssert.Ok(r.Call("REPLICAOF", "NO", "ONE"));
        Pipeline.RunAll(m, Enumerable.Range(0, 1000).Select(i => new[] { "SET", "k" + i, new string('v', 1000) }));
        Attach(r, master.Port);
        ReplicaSetup.WaitInSync(m, r);
        Assert.Equal(2, ReplicaSetup.MasterStat(m, "sync_full"));
        Assert.Equal(m.Call("DEBUG", "DIGEST").Text, r.Call("DEBUG", "DIGEST").Text);
    }

    /// <summary>
    /// A replica killed (-9) while its full sync's snapshot is on the way: the master carries on
    /// serving, lets go of the snapshot (its memory comes back) and syncs the next replica.
    /// </summary>
    [Fact]
    public void AReplicaKilledDuringItsFullSyncLeavesTheMasterWhole()
    {
        using var master = ServerProcess.Start();
        using var m = master.Connect();
        // About 60 MB: the transfer takes long enough to be caught in the middle.
        Pipeline.RunAll(m, Enumerable.Range(0, 60_000).Select(i => new[] { "SET", "big:" + i, new string((char)('a' + i % 26), 1000) }));
        long memoryBefore = InfoFields.GetInt64(m, "memory", "used_memory");
        var doomed = ServerProcess.Start();
        using (var d = doomed.Connect())
        {
            Attach(d, master.Port);
            Poll.Until(() => InfoFields.Read(m, "replication").GetValueOrDefault("slave0", "").Contains("state=send_bulk"), "the snapshot to be on its way", 20_000);
            doomed.KillHard();
        }
        doomed.Dispose();
        Poll.Until(() => InfoFields.Get(m, "replication", "connected_slaves") == "0", "the master to see the replica gone", 20_000);
        // Writes go on, and what the snapshot held is given back.
        RespAssert.Ok(m.Call("SET", "after", "v"));
        Poll.Until(() => InfoFields.GetInt64(m, "memory", "used_memory") < memoryBefore + 16 * 1024 * 1024,
            () => $"the snapshot's memory to come back (before {memoryBefore}, now {InfoFields.Get(m, "memory", "used_memory")})", 20_000);

        using var replica = ServerProcess.Start();
        using var r = replica.Connect();
        Attach(r, master.Port);
        ReplicaSetup.WaitInSync(m, r, 60_000);
        Assert.Equal(m.Call("DEBUG", "DIGEST").Text, r.Call("DEBUG", "DIGEST").Text);
    }

    /// <summary>repl-backlog-ttl: a master alone for that long lets its backlog go and starts a new history, as Redis does.</summary>
    [Fact]
    public void AMasterWithoutReplicasLetsItsBacklogGoAfterTheTtl()
    {
        using var master = ServerProcess.Start("--repl-backlog-ttl", "1");
        using var replica = ServerProcess.Start();
        using var m = master.Connect();
        using var r = replica.Connect();
        Attach(r, master.Port);
        ReplicaSetup.WaitInSync(m, r);
        string history = InfoFields.Get(m, "replication", "master_replid");
        Assert.Equal("1", InfoFields.Get(m, "replication", "repl_backlog_active"));
        RespAssert.Ok(r.Call("REPLICAOF", "NO", "ONE"));
        Poll.Until(() => InfoFields.Get(m, "replication", "repl_backlog_active") == "0", "the backlog to be let go", 10_000);
        Assert.NotEqual(history, InfoFields.Get(m, "replication", "master_replid"));
        Assert.Equal(new string('0', 40), InfoFields.Get(m, "replication", "master_replid2"));
        // A replica asking to continue the old history gets a full sync.
        Attach(r, master.Port);
        ReplicaSetup.WaitInSync(m, r);
        Assert.Equal(2, ReplicaSetup.MasterStat(m, "sync_full"));
    }

    [Fact]
    public void AReplicaCannotMakeItsMasterFollowSomeoneElse()
    {
        using var master = ServerProcess.Start();
        using var tcp = new System.Net.Sockets.TcpClient();
        tcp.Connect(System.Net.IPAddress.Loopback, master.Port);
        var stream = tcp.GetStream();
        stream.ReadTimeout = 10_000;
        // On the connection that became a replica (PSYNC), REPLICAOF host port is refused as Redis's
        // replicaofCommand does; the answer comes after the snapshot, in the stream's bytes.
        stream.Write(RespClient.EncodeAll(["PSYNC", "?", "-1"], ["REPLICAOF", "127.0.0.1", "1"]));
        byte[] expected = "-ERR Command is not valid when client is a replica.\r\n"u8.ToArray();
        var received = new List<byte>();
        var buffer = new byte[4096];
        while (received.Count < 1_000_000 && IndexOf(received, expected) < 0)
        {
            int n = stream.Read(buffer);
            Assert.True(n > 0, $"the master closed the connection after: {System.Text.Encoding.Latin1.GetString(received.ToArray())}");
            received.AddRange(buffer.AsSpan(0, n));
        }
        Assert.True(IndexOf(received, expected) >= 0);
        using var m = master.Connect();
        Assert.Equal("master", m.Call("ROLE").Array[0].Text);
    }

    private static int IndexOf(List<byte> bytes, byte[] part) => System.Runtime.InteropServices.CollectionsMarshal.AsSpan(bytes).IndexOf(part);

    [Fact]
    public void WaitAndReplconfAnswerAsRedis()
    {
        using var master = ServerProcess.Start();
        using var m = master.Connect();
        RespAssert.Integer(0, m.Call("WAIT", "0", "0"));
        RespAssert.Integer(0, m.Call("WAIT", "1", "100")); // no replica: times out with none
        SideBySideReplies.AssertSame(
        [
            ["WAIT", "x", "0"], ["WAIT", "0", "x"], ["WAIT", "0", "-1"], ["WAIT", "0"],
            ["REPLCONF", "listening-port"], ["REPLCONF", "listening-port", "x"], ["REPLCONF", "nope", "1"],
            ["REPLCONF", "listening-port", "6380", "capa", "eof", "capa", "psync2"],
            ["PSYNC", "?"], ["MULTI"], ["PSYNC", "?", "-1"], ["DISCARD"],
        ], c => RespAssert.Ok(c.Call("FLUSHALL")));
    }
}
