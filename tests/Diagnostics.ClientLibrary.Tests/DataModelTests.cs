using Diagnostics.ClientLibrary.Tests.Targets;
using StackExchange.Redis;

namespace Diagnostics.ClientLibrary.Tests;

/// <summary>
/// The rest of Redis's data model through StackExchange.Redis as applications call it: a stream
/// job queue with a consumer group (add, read as a group, acknowledge, pending, claim, info),
/// bitmaps (set, count by byte and bit ranges, position, BITOP, BITFIELD) and SORT, which the
/// library sends as SORT_RO to a server of version 7. Each answered alike by both servers.
/// </summary>
[Collection(BothServersCollection.Name)]
public sealed class DataModelTests(BothServers servers)
{
    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void StreamJobQueueWithAConsumerGroup(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey jobs = "model:stream:jobs";
        db.KeyDelete(jobs);

        Assert.True(db.StreamCreateConsumerGroup(jobs, "workers", StreamPosition.NewMessages, createStream: true));
        var ids = Enumerable.Range(1, 5).Select(i => db.StreamAdd(jobs, [new NameValueEntry("task", "t" + i), new NameValueEntry("attempt", 1)])).ToArray();
        Assert.All(ids, id => Assert.Matches(@"^\d+-\d+$", id.ToString()));
        Assert.Equal(5, db.StreamLength(jobs));

        var first = db.StreamReadGroup(jobs, "workers", "alice", StreamPosition.NewMessages, count: 3);
        Assert.Equal(ids[..3], first.Select(e => e.Id));
        Assert.Equal("t1", first[0]["task"]);
        Assert.Equal(1, (int)first[0]["attempt"]);
        var rest = db.StreamReadGroup(jobs, "workers", "bob", StreamPosition.NewMessages);
        Assert.Equal(ids[3..], rest.Select(e => e.Id));
        Assert.Empty(db.StreamReadGroup(jobs, "workers", "bob", StreamPosition.NewMessages));

        Assert.Equal(2, db.StreamAcknowledge(jobs, "workers", [ids[0], ids[1]]));
        var pending = db.StreamPending(jobs, "workers");
        Assert.Equal(3, pending.PendingMessageCount);
        Assert.Equal(ids[2], pending.LowestPendingMessageId);
        Assert.Equal(ids[4], pending.HighestPendingMessageId);
        Assert.Equal([("alice", 1), ("bob", 2)], pending.Consumers.Select(c => ((string)c.Name!, c.PendingMessageCount)));
        var detail = db.StreamPendingMessages(jobs, "workers", 10, "bob");
        Assert.Equal(ids[3..], detail.Select(m => m.MessageId));
        Assert.All(detail, m => Assert.Equal(1, m.DeliveryCount));

        // Bob died: Carol takes his entries.
        var claimed = db.StreamClaim(jobs, "workers", "carol", 0, [ids[3], ids[4]]);
        Assert.Equal(ids[3..], claimed.Select(e => e.Id));
        var auto = db.StreamAutoClaim(jobs, "workers", "dave", 0, "0-0", count: 10);
        Assert.Equal(ids[2..], auto.ClaimedEntries.Select(e => e.Id));

        var info = db.StreamInfo(jobs);
        Assert.Equal(5, info.Length);
        Assert.Equal(1, info.ConsumerGroupCount);
        Assert.Equal(ids[0], info.FirstEntry.Id);
        Assert.Equal(ids[4], info.LastEntry.Id);
        var group = Assert.Single(db.StreamGroupInfo(jobs));
        Assert.Equal(("workers", 4, 3), ((string)group.Name!, group.ConsumerCount, group.PendingMessageCount));
        Assert.Equal(["alice", "bob", "carol", "dave"], db.StreamConsumerInfo(jobs, "workers").Select(c => (string)c.Name!));

        Assert.Equal(ids[1..3], db.StreamRange(jobs, ids[1], ids[2]).Select(e => e.Id));
        Assert.Equal(ids[4], db.StreamRange(jobs, count: 1, messageOrder: Order.Descending)[0].Id);
        Assert.Equal(1, db.StreamDelete(jobs, [ids[0]]));
        Assert.Equal(2, db.StreamTrim(jobs, 2));
        Assert.Equal(ids[3..], db.StreamRead(jobs, "0-0").Select(e => e.Id));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void BitmapsAndSort(Target target)
    {
        using var connection = servers.Connect(target);
        var db = connection.GetDatabase();
        RedisKey seen = "model:bits:seen", other = "model:bits:other", both = "model:bits:both";
        RedisKey list = "model:sort:list";
        db.KeyDelete([seen, other, both, list]);

        Assert.False(db.StringSetBit(seen, 7, true));
        Assert.True(db.StringSetBit(seen, 7, true));
        db.StringSetBit(seen, 100, true);
        Assert.True(db.StringGetBit(seen, 100));
        Assert.Equal(2, db.StringBitCount(seen));
        Assert.Equal(1, db.StringBitCount(seen, 0, 0));
        Assert.Equal(1, db.StringBitCount(seen, 8, 100, StringIndexType.Bit));
        Assert.Equal(7, db.StringBitPosition(seen, true));
        Assert.Equal(100, db.StringBitPosition(seen, true, 8, -1, StringIndexType.Bit));
        db.StringSetBit(other, 7, true);
        Assert.Equal(13, db.StringBitOperation(Bitwise.And, both, seen, other));
        Assert.Equal(1, db.StringBitCount(both));

        db.ListRightPush(list, ["3", "10", "1", "2"]);
        Assert.Equal(["1", "2", "3", "10"], db.Sort(list).Select(v => (string)v!));
        Assert.Equal(["2", "10"], db.Sort(list, skip: 1, take: 2, order: Order.Descending, sortType: SortType.Alphabetic).Select(v => (string)v!));
        Assert.Equal(4, db.SortAndStore("model:sort:sorted", list));
        Assert.Equal(["1", "2", "3", "10"], db.ListRange("model:sort:sorted").Select(v => (string)v!));
    }
}
