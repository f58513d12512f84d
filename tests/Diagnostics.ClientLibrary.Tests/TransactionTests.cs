using Diagnostics.ClientLibrary.Tests.Targets;
using StackExchange.Redis;

namespace Diagnostics.ClientLibrary.Tests;

/// <summary>
/// StackExchange.Redis transactions (WATCH, the library's condition checks, MULTI/EXEC) and
/// batches (pipelined commands sent together), committed and aborted, against both servers.
/// </summary>
[Collection(BothServersCollection.Name)]
public sealed class TransactionTests(BothServers servers)
{
    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public async Task TransactionWithConditionsThatHoldCommits(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey owner = "tx:commit:owner", free = "tx:commit:free", hash = "tx:commit:hash", list = "tx:commit:list";
        db.KeyDelete([owner, free, hash, list]);
        db.StringSet(owner, "alice");
        db.HashSet(hash, "state", "open");
        db.ListRightPush(list, ["a", "b"]);

        var tx = db.CreateTransaction();
        tx.AddCondition(Condition.StringEqual(owner, "alice"));
        tx.AddCondition(Condition.KeyNotExists(free));
        tx.AddCondition(Condition.HashEqual(hash, "state", "open"));
        tx.AddCondition(Condition.ListLengthEqual(list, 2));
        var set = tx.StringSetAsync(free, "taken");
        var incr = tx.StringIncrementAsync("tx:commit:count");
        var push = tx.ListRightPushAsync(list, "c");

        Assert.True(tx.Execute());
        Assert.True(await set);
        Assert.True(await incr >= 1);
        Assert.Equal(3, await push);
        Assert.Equal("taken", db.StringGet(free));
        db.KeyDelete("tx:commit:count");
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void TransactionWhoseConditionFailsIsAbortedAndChangesNothing(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey owner = "tx:abort:owner", taken = "tx:abort:taken", written = "tx:abort:written";
        db.KeyDelete([owner, taken, written]);
        db.StringSet(owner, "bob");
        db.StringSet(taken, "x");

        var wrongValue = db.CreateTransaction();
        var equal = wrongValue.AddCondition(Condition.StringEqual(owner, "alice"));
        var write = wrongValue.StringSetAsync(written, "1");
        Assert.False(wrongValue.Execute());
        Assert.False(equal.WasSatisfied);
        Assert.True(write.IsCanceled);

        var exists = db.CreateTransaction();
        var notExists = exists.AddCondition(Condition.KeyNotExists(taken));
        _ = exists.StringSetAsync(written, "2");
        Assert.False(exists.Execute());
        Assert.False(notExists.WasSatisfied);

        Assert.False(db.KeyExists(written));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public async Task OptimisticIncrementsFromManyClientsLoseNoUpdate(Target target)
    {
        // The classic compare-and-set loop: read, then a transaction conditioned on the value read.
        // If the server ran an EXEC whose WATCHed key another client changed after the check,
        // two clients would write the same next value and the final count would come up short.
        RedisKey key = "tx:cas:counter";
        using (var setup = servers.Connect(target))
            setup.GetDatabase().StringSet(key, "0");
        const int clients = 4, incrementsEach = 25;
        var connections = new ConnectionMultiplexer[clients];
        for (int c = 0; c < clients; c++)
            connections[c] = servers.Connect(target);
        int aborted = 0;
        try
        {
            var workers = new Task[clients];
            for (int c = 0; c < clients; c++)
            {
                var db = connections[c].GetDatabase();
                workers[c] = Task.Run(() =>
                {
                    for (int done = 0; done < incrementsEach;)
                    {
                        var seen = db.StringGet(key);
                        var tx = db.CreateTransaction();
                        tx.AddCondition(Condition.StringEqual(key, seen));
                        _ = tx.StringSetAsync(key, (long)seen + 1);
                        if (tx.Execute())
                            done++;
                        else
                            Interlocked.Increment(ref aborted);
                    }
                });
            }
            await Task.WhenAll(workers).WaitAsync(TimeSpan.FromSeconds(60));
        }
        finally
        {
            foreach (var c in connections)
                c.Dispose();
        }

        using var check = servers.Connect(target);
        Assert.Equal(clients * incrementsEach, (long)check.GetDatabase().StringGet(key));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public async Task TransactionReportsACommandErrorInsideExec(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey text = "tx:error:text", after = "tx:error:after";
        db.KeyDelete([text, after]);
        db.StringSet(text, "abc");

        // INCR of a string fails inside EXEC; the other commands of the transaction still run.
        var tx = db.CreateTransaction();
        var bad = tx.StringIncrementAsync(text);
        var good = tx.StringSetAsync(after, "ran");
        Assert.True(tx.Execute());
        var error = await Assert.ThrowsAsync<RedisServerException>(() => bad);
        Assert.Equal("ERR value is not an integer or out of range", error.Message);
        Assert.True(await good);
        Assert.Equal("ran", db.StringGet(after));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void LockTakeExtendAndReleaseHonourTheToken(Target target)
    {
        // The library's lock helpers: SET NX PX to take, and a token check before extend/release.
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey resource = "tx:lock:resource";
        db.KeyDelete(resource);

        Assert.True(db.LockTake(resource, "worker-1", TimeSpan.FromSeconds(30)));
        Assert.False(db.LockTake(resource, "worker-2", TimeSpan.FromSeconds(30)));
        Assert.Equal("worker-1", db.LockQuery(resource));
        Assert.False(db.LockExtend(resource, "worker-2", TimeSpan.FromSeconds(300)));
        Assert.True(db.LockExtend(resource, "worker-1", TimeSpan.FromSeconds(300)));
        Assert.InRange(db.KeyTimeToLive(resource)!.Value, TimeSpan.FromSeconds(250), TimeSpan.FromSeconds(300));
        Assert.False(db.LockRelease(resource, "worker-2"));
        Assert.True(db.KeyExists(resource));
        Assert.True(db.LockRelease(resource, "worker-1"));
        Assert.False(db.KeyExists(resource));
        Assert.True(db.LockTake(resource, "worker-2", TimeSpan.FromSeconds(30)));
        Assert.True(db.LockRelease(resource, "worker-2"));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public async Task BatchSendsCommandsTogetherAndEachGetsItsReply(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey counter = "batch:counter", set = "batch:set", zset = "batch:zset";
        db.KeyDelete([counter, set, zset]);

        var batch = db.CreateBatch();
        var increments = new List<Task<long>>();
        for (int i = 0; i < 100; i++)
            increments.Add(batch.StringIncrementAsync(counter));
        var added = batch.SetAddAsync(set, ["x", "y", "x"]);
        var scored = batch.SortedSetAddAsync(zset, [new SortedSetEntry("a", 1), new SortedSetEntry("b", 2)]);
        var wrongType = batch.ListLengthAsync(set);
        batch.Execute();

        for (int i = 0; i < increments.Count; i++)
            Assert.Equal(i + 1, await increments[i]);
        Assert.Equal(2, await added);
        Assert.Equal(2, await scored);
        var error = await Assert.ThrowsAsync<RedisServerException>(() => wrongType);
        Assert.Equal("WRONGTYPE Operation against a key holding the wrong kind of value", error.Message);
    }
}
