using Diagnostics.Server.Tests.DataTypes;
using Diagnostics.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// This server as the replica of a real redis-server 7.0: what the master holds before the link
/// (the full sync's RDB, length-prefixed or diskless) and what it writes after (the command
/// stream) is on the replica, compared key by key and by DEBUG DIGEST.
/// </summary>
public sealed class ReplicaDataTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData("yes")] // diskless: $EOF:<mark> ... <mark>
    [InlineData("no")]  // through the master's disk: $<length>
    public void EveryTypeReachesTheReplicaThroughTheRdbAndTheStream(string diskless)
    {
        using var master = ReplicaSetup.StartMaster("--repl-diskless-sync", diskless);
        using var ours = ServerProcess.Start();
        using var m = master.Connect();
        using var r = ours.Connect();
        // Redis propagates the geo STORE commands as sent: the replica computes the same distances.
        var workload = DataTypePersistenceTests.Workload;
        int half = workload.Length / 2;
        // The first half and a function library go in the RDB...
        foreach (var command in workload.Take(half))
            Assert.False(m.Call(command).IsError, string.Join(' ', command));
        Assert.False(m.Call("FUNCTION", "LOAD", "#!lua name=replicated\nredis.register_function{function_name='one', callback=function() return 1 end, flags={'no-writes'}}").IsError);
        Assert.False(m.Call("SET", "gone-before", "x").IsError);
        ReplicaSetup.Attach(r, master);
        Poll.Until(() => ours.Output.Contains("Full resync from master") && ours.Output.Contains("MASTER <-> REPLICA sync: Finished with success"), "the full sync to be logged");
        // ...the rest, a transaction and a FLUSHDB of another database come through the stream.
        foreach (var command in workload.Skip(half))
            Assert.False(m.Call(command).IsError, string.Join(' ', command));
        Pipeline.RunAll(m, Enumerable.Range(0, 300).Select(i => new[] { "HSET", "big:h", "f" + i, "v" + i }));
        m.Call("MULTI");
        m.Call("INCR", "counter");
        m.Call("LPUSH", "tx:l", "a", "b");
        Assert.Equal(2, m.Call("EXEC").Array.Count);
        m.Call("SELECT", "3");
        m.Call("SET", "db3:k", "v");
        m.Call("FLUSHDB");
        m.Call("SET", "db3:after", "v");
        m.Call("SELECT", "0");
        m.Call("DEL", "gone-before");
        ReplicaSetup.WaitInSync(m, r);

        DatasetSnapshot.Read(r).AssertSameAs(DatasetSnapshot.Read(m), "the replica against its master");
        Assert.Equal(m.Call("DEBUG", "DIGEST").Text, r.Call("DEBUG", "DIGEST").Text);
        RespAssert.Integer(1, r.Call("FCALL_RO", "one", "0"));
        Assert.Contains("flags=M", r.Call("CLIENT", "LIST", "TYPE", "master").Text);

        // FLUSHALL empties the replica too.
        RespAssert.Ok(m.Call("FLUSHALL"));
        ReplicaSetup.WaitInSync(m, r);
        RespAssert.Integer(0, r.Call("DBSIZE"));
        Assert.Equal(new string('0', 40), r.Call("DEBUG", "DIGEST").Text);
    }

    [Fact]
    public void KeysExpireOnTheReplicaOnlyWhenTheMasterSaysSo()
    {
        using var master = ReplicaSetup.StartMaster();
        using var ours = ServerProcess.Start();
        using var m = master.Connect();
        using var r = ours.Connect();
        ReplicaSetup.Attach(r, master);
        RespAssert.Ok(m.Call("DEBUG", "SET-ACTIVE-EXPIRE", "0"));
        RespAssert.Ok(m.Call("SET", "short", "v", "PX", "200"));
        ReplicaSetup.WaitInSync(m, r);
        RespAssert.Bulk("v", r.Call("GET", "short"));
        // Past its time: missing for readers, still there (the master has not expired it).
        Poll.Until(() => r.Call("GET", "short").IsNull, "the key to read as missing on the replica");
        RespAssert.Integer(1, r.Call("DBSIZE"));
        RespAssert.Integer(0, r.Call("EXISTS", "short"));
        Thread.Sleep(300); // long enough for a replica's own active expiry to have run, were it on
        RespAssert.Integer(1, r.Call("DBSIZE"));
        // The master expires it and sends DEL: now it is gone.
        RespAssert.Ok(m.Call("DEBUG", "SET-ACTIVE-EXPIRE", "1"));
        Poll.Until(() => r.Call("DBSIZE").Integer == 0, "the master's DEL to reach the replica");
    }

    [Fact]
    public void TheApplyRateIsMeasured()
    {
        const int commands = 50_000;
        using var master = ReplicaSetup.StartMaster();
        using var ours = ServerProcess.Start();
        using var m = master.Connect();
        using var r = ours.Connect();
        ReplicaSetup.Attach(r, master);
        var clock = System.Diagnostics.Stopwatch.StartNew();
        Pipeline.RunAll(m, Enumerable.Range(0, commands).Select(i => new[] { "SET", "k" + (i % 5000), "value-" + i }));
        ReplicaSetup.WaitInSync(m, r, timeoutMs: 60_000);
        output.WriteLine($"{commands} SETs written to the master and applied by the replica in {clock.ElapsedMilliseconds} ms ({commands * 1000L / Math.Max(1, clock.ElapsedMilliseconds)} commands/s end to end)");
        Assert.Equal(m.Call("DEBUG", "DIGEST").Text, r.Call("DEBUG", "DIGEST").Text);
    }
}
