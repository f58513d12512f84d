using Diagnostics.ClientLibrary.Tests.Targets;
using StackExchange.Redis;

namespace Diagnostics.ClientLibrary.Tests;

/// <summary>
/// The everyday IDatabase calls of an application (strings with expiry, hashes, lists, sorted
/// sets, expire and TTL), each answered alike by both servers.
/// </summary>
[Collection(BothServersCollection.Name)]
public sealed class KeyspaceTests(BothServers servers)
{
    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void StringsWithExpiryAndConditions(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey session = "keyspace:string:session", lockKey = "keyspace:string:lock";
        db.KeyDelete([session, lockKey]);

        Assert.True(db.StringSet(session, "token", TimeSpan.FromSeconds(100)));
        Assert.Equal("token", db.StringGet(session));
        var ttl = db.KeyTimeToLive(session);
        Assert.NotNull(ttl);
        Assert.InRange(ttl.Value, TimeSpan.FromSeconds(95), TimeSpan.FromSeconds(100));

        // SET NX PX: the lock pattern; the second taker fails.
        Assert.True(db.StringSet(lockKey, "owner-1", TimeSpan.FromMilliseconds(60_000), When.NotExists));
        Assert.False(db.StringSet(lockKey, "owner-2", TimeSpan.FromMilliseconds(60_000), When.NotExists));
        Assert.Equal("owner-1", db.StringGet(lockKey));

        // KEEPTTL keeps the expiry; a plain SET drops it.
        Assert.True(db.StringSet(session, "renewed", null, keepTtl: true));
        Assert.NotNull(db.KeyTimeToLive(session));
        Assert.True(db.StringSet(session, "forever"));
        Assert.Null(db.KeyTimeToLive(session));

        Assert.Equal("forever", db.StringGetSetExpiry(session, TimeSpan.FromSeconds(30)));
        Assert.NotNull(db.KeyTimeToLive(session));
        Assert.Equal("forever", db.StringGetDelete(session));
        Assert.False(db.KeyExists(session));
        db.StringSet(session, "forever");

        var values = db.StringGet([session, lockKey, "keyspace:string:missing"]);
        Assert.Equal(["forever", "owner-1", RedisValue.Null], values);
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void KeyExpireAndTimeToLive(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey key = "keyspace:expire:key";
        db.StringSet(key, "v");

        Assert.Null(db.KeyTimeToLive(key));
        Assert.True(db.KeyExpire(key, TimeSpan.FromSeconds(50)));
        Assert.InRange(db.KeyTimeToLive(key)!.Value, TimeSpan.FromSeconds(45), TimeSpan.FromSeconds(50));
        Assert.False(db.KeyExpire(key, TimeSpan.FromSeconds(500), ExpireWhen.HasNoExpiry));
        Assert.True(db.KeyExpire(key, TimeSpan.FromSeconds(500), ExpireWhen.GreaterThanCurrentExpiry));
        Assert.True(db.KeyExpire(key, DateTime.UtcNow.AddHours(1)));
        Assert.InRange(db.KeyExpireTime(key)!.Value, DateTime.UtcNow.AddMinutes(59), DateTime.UtcNow.AddMinutes(61));
        Assert.True(db.KeyPersist(key));
        Assert.Null(db.KeyTimeToLive(key));

        // A short expiry removes the key; TTL of a missing key is null to the library.
        Assert.True(db.KeyExpire(key, TimeSpan.FromMilliseconds(50)));
        Diagnostics.Server.Tests.Infrastructure.Poll.Until(() => !db.KeyExists(key), "the key expires");
        Assert.Null(db.KeyTimeToLive(key));
        Assert.False(db.KeyExpire(key, TimeSpan.FromSeconds(5)));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public async Task ManyConcurrentCallersShareOnePipelinedConnection(Target target)
    {
        // The multiplexer writes every caller's command onto one socket as they come: the server
        // sees deep pipelines of mixed commands and must answer each in order.
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey counter = "keyspace:pipeline:counter", list = "keyspace:pipeline:list";
        db.KeyDelete([counter, list]);
        const int callers = 8, callsEach = 500;
        var workers = new Task[callers];
        for (int c = 0; c < callers; c++)
        {
            int caller = c;
            workers[c] = Task.Run(async () =>
            {
                var pending = new List<Task>(callsEach * 2);
                for (int i = 0; i < callsEach; i++)
                {
                    pending.Add(db.StringIncrementAsync(counter));
                    pending.Add(db.ListRightPushAsync(list, $"{caller}:{i}"));
                }
                await Task.WhenAll(pending);
                // Each caller's own pushes are in the order it sent them.
                var mine = (await db.ListRangeAsync(list)).Texts().Where(v => v.StartsWith($"{caller}:", StringComparison.Ordinal)).ToArray();
                Assert.Equal(Enumerable.Range(0, callsEach).Select(i => $"{caller}:{i}"), mine);
            });
        }
        await Task.WhenAll(workers).WaitAsync(TimeSpan.FromSeconds(60));

        Assert.Equal(callers * callsEach, (long)db.StringGet(counter));
        Assert.Equal(callers * callsEach, db.ListLength(list));
        db.KeyDelete([counter, list]);
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void HashesListsAndSortedSets(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey hash = "keyspace:types:hash", list = "keyspace:types:list", zset = "keyspace:types:zset";
        db.KeyDelete([hash, list, zset]);

        db.HashSet(hash, [new HashEntry("name", "ada"), new HashEntry("visits", 3)]);
        Assert.Equal(4, db.HashIncrement(hash, "visits"));
        var all = db.HashGetAll(hash).ToDictionary(e => (string)e.Name!, e => (string?)e.Value);
        Assert.Equal(new Dictionary<string, string?> { ["name"] = "ada", ["visits"] = "4" }, all);
        Assert.True(db.HashDelete(hash, "name"));
        Assert.False(db.HashExists(hash, "name"));

        Assert.Equal(3, db.ListLeftPush(list, ["a", "b", "c"]));
        Assert.Equal(4, db.ListRightPush(list, "z"));
        Assert.Equal(["c", "b", "a", "z"], db.ListRange(list).Texts());
        Assert.Equal(["b", "a"], db.ListRange(list, 1, 2).Texts());
        Assert.Equal("c", db.ListLeftPop(list));
        Assert.Equal(3, db.ListLength(list));

        Assert.Equal(3, db.SortedSetAdd(zset, [new SortedSetEntry("low", 1), new SortedSetEntry("mid", 5), new SortedSetEntry("high", 10)]));
        Assert.Equal(["mid", "high"], db.SortedSetRangeByScore(zset, 2, 10).Texts());
        Assert.Equal(["mid"], db.SortedSetRangeByScore(zset, 1, 10, Exclude.Both).Texts());
        Assert.Equal(["high", "mid"], db.SortedSetRangeByScore(zset, 2, double.PositiveInfinity, order: Order.Descending).Texts());
        var withScores = db.SortedSetRangeByScoreWithScores(zset, double.NegativeInfinity, 5);
        Assert.Equal([new SortedSetEntry("low", 1), new SortedSetEntry("mid", 5)], withScores);
        Assert.Equal(7.5, db.SortedSetIncrement(zset, "mid", 2.5));
        Assert.Equal(1, db.SortedSetRank(zset, "mid"));
        Assert.Null(db.SortedSetScore(zset, "none"));

        var wrong = Assert.Throws<RedisServerException>(() => db.ListRange(hash));
        Assert.Equal("WRONGTYPE Operation against a key holding the wrong kind of value", wrong.Message);
    }
}
